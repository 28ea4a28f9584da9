/* SPDX-License-Identifier: BSD-3-Clause */
/* Bounded one-line messages with escaped quotes of untrusted text. */
#include "util/message_buffer.h"

#include <stdio.h>
#include <string.h>

void rl_msg_init(rl_msg_buf *msg, char *buf, size_t cap)
{
    msg->buf = (cap > 0) ? buf : NULL;
    msg->cap = (buf != NULL) ? cap : 0;
    msg->used = 0;
    if (msg->cap > 0)
        msg->buf[0] = '\0';
}

void rl_msg_vprintf(rl_msg_buf *msg, const char *fmt, va_list ap)
{
    if (msg->cap == 0)
        return;
    size_t room = msg->cap - msg->used;
    int n = vsnprintf(msg->buf + msg->used, room, fmt, ap);
    if (n < 0)
        return;
    msg->used += ((size_t)n < room) ? (size_t)n : room - 1;
}

void rl_msg_printf(rl_msg_buf *msg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rl_msg_vprintf(msg, fmt, ap);
    va_end(ap);
}

void rl_msg_escaped(rl_msg_buf *msg, const char *bytes, size_t len, size_t max_bytes)
{
    size_t shown = (len < max_bytes) ? len : max_bytes;
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)bytes[i];
        if (c == '"' || c == '\\')
            rl_msg_printf(msg, "\\%c", c);
        else if (c == '\n')
            rl_msg_printf(msg, "\\n");
        else if (c == '\t')
            rl_msg_printf(msg, "\\t");
        else if (c < 0x20 || c > 0x7e)
            rl_msg_printf(msg, "\\x%02x", c);
        else
            rl_msg_printf(msg, "%c", c);
    }
    /* cppcheck-suppress knownConditionTrueFalse ; true when max_bytes < len */
    if (shown < len)
        rl_msg_printf(msg, "...");
}

const char *rl_msg_echo(const char *text, size_t max_bytes, char *buf, size_t len)
{
    rl_msg_buf msg;
    rl_msg_init(&msg, buf, len);
    rl_msg_escaped(&msg, text, strlen(text), max_bytes);
    return buf;
}
