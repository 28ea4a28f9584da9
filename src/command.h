/* SPDX-License-Identifier: BSD-3-Clause */
/* The requests the engine sends, written straight into RESP (the Redis
 * protocol) in a buffer of the caller's: no formatting library, no
 * intermediate allocations. */
#ifndef REDLOCK_COMMAND_H
#define REDLOCK_COMMAND_H

#include <stddef.h>
#include <stdint.h>

#define RL_COMMAND_MAX_ARGS 6

/* A request as its arguments; they must outlive the command (until it is
 * written). */
typedef struct rl_command {
    size_t argc;
    const char *argv[RL_COMMAND_MAX_ARGS];
    size_t len[RL_COMMAND_MAX_ARGS];
    char number[24]; /* the text of a numeric argument (a TTL) */
} rl_command;

/* SET key value NX PX ttl */
void rl_command_acquire(rl_command *c, const void *key, size_t key_len, const void *value,
                        size_t value_len, int64_t ttl_ms);
/* EVALSHA <release sha> 1 key value */
void rl_command_release(rl_command *c, const void *key, size_t key_len, const void *value,
                        size_t value_len);
/* EVALSHA <extend sha> 1 key value ttl */
void rl_command_extend(rl_command *c, const void *key, size_t key_len, const void *value,
                       size_t value_len, int64_t ttl_ms);
/* EVALSHA <inspect sha> 1 key */
void rl_command_inspect(rl_command *c, const void *key, size_t key_len);
/* PING */
void rl_command_ping(rl_command *c);

/* Bytes of the RESP form, without the terminating NUL. */
size_t rl_command_size(const rl_command *c);
/* Write the RESP form, rl_command_size() bytes, and a NUL after them (room
 * for rl_command_size() + 1 bytes). hiredis takes a formatted command as a
 * C string: it looks for the first argument with strchr(), and after a
 * single-argument command (PING) reads the byte past its end. */
void rl_command_write(const rl_command *c, char *out);

#endif
