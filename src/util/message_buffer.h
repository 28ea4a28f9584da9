/* SPDX-License-Identifier: BSD-3-Clause */
/* A bounded message buffer for one-line error messages, and the escaping
 * that keeps any text quoted in them printable and short. */
#ifndef REDLOCK_MESSAGE_BUFFER_H
#define REDLOCK_MESSAGE_BUFFER_H

#include "util/util.h"

#include <stdarg.h>
#include <stddef.h>

/* Appends to a caller's buffer, always NUL-terminated, silently truncating. */
typedef struct rl_msg_buf {
    char *buf;
    size_t cap;
    size_t used;
} rl_msg_buf;

/* Starts an empty message in buf[0..cap) (NULL or 0: everything is dropped). */
void rl_msg_init(rl_msg_buf *msg, char *buf, size_t cap);
void rl_msg_vprintf(rl_msg_buf *msg, const char *fmt, va_list ap) RL_PRINTF(2, 0);
void rl_msg_printf(rl_msg_buf *msg, const char *fmt, ...) RL_PRINTF(2, 3);

/* Appends at most max_bytes of bytes[0..len) as printable ASCII (quotes,
 * backslashes and everything else outside 0x20..0x7e escaped), then "..."
 * when cut, so any input yields one short line. */
void rl_msg_escaped(rl_msg_buf *msg, const char *bytes, size_t len, size_t max_bytes);

/* text, escaped and cut after max_bytes, into buf: for names echoed in
 * messages. Returns buf. */
const char *rl_msg_echo(const char *text, size_t max_bytes, char *buf, size_t len);

#endif
