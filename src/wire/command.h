/* SPDX-License-Identifier: BSD-3-Clause */
/* The requests the engine sends, written straight into RESP (the Redis
 * protocol) in a buffer of the caller's: no formatting library, no
 * intermediate allocations. */
#ifndef REDLOCK_COMMAND_H
#define REDLOCK_COMMAND_H

#include "wire/channel.h"
#include "redlock/redlock.h"
#include "wire/resources.h"
#include "wire/scripts.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* EVALSHA sha numkeys, the keys, the fencing key, the token keys, and at
 * most three more. */
#define RL_COMMAND_MAX_ARGS (2 * REDLOCK_MAX_RESOURCES + 7)

/* A request as its arguments; they must outlive the command (until it is
 * written). */
/* What a request asks of a master; a round sends one kind (quorum.h), and
 * its replies are read by it (reply.h). */
typedef enum rl_round_kind {
    RL_ROUND_ACQUIRE, /* SET key value NX PX ttl, or the acquire script */
    RL_ROUND_EXTEND,  /* the extend script */
    RL_ROUND_RELEASE, /* the release script */
    RL_ROUND_INSPECT, /* the inspect script; waits for every master */
    RL_ROUND_PING,    /* PING; waits for every master */
    RL_ROUND_FENCE,   /* round 2 of a fenced acquire: the fence confirm script */
    RL_ROUND_FENCE_READ, /* the fence read script; waits for every master */
    RL_ROUND_FENCE_SEED  /* the fence seed script; waits for every master */
} rl_round_kind;

typedef struct rl_command {
    size_t argc;
    const char *argv[RL_COMMAND_MAX_ARGS];
    size_t len[RL_COMMAND_MAX_ARGS];
    /* The argument is a token key: REDLOCK_FENCING_TOKEN_PREFIX, then argv
     * (written as one, with no copy made here). */
    bool token_key[RL_COMMAND_MAX_ARGS];
    const rl_script *script; /* the script an EVALSHA runs; NULL for SET, PING */
    int64_t urgent_by_us;    /* an extension: when the lock runs out (rl_now_us()
                                time), which orders it in a send queue; 0 otherwise */
    uint64_t lock_tag;       /* the lock whose value it carries; 0: none */
    const void *value;       /* that value (not copied), or NULL */
    size_t value_len;
    /* The same request without a script, for masters that have the
     * commands it needs (plain_caps, wire/server_info.h), or NULL: sent to
     * those instead of the script (docs/servers.md). Kept where it is
     * until written, like this one. */
    const struct rl_command *plain;
    unsigned plain_caps;
    size_t channel_arg;  /* the argument naming a channel prefix, 0 for none */
    int channel_db;      /* the database that channel is for */
    char numkeys[24];    /* the text of EVALSHA's key count */
    char number[24];     /* the text of a numeric argument (a TTL) */
    char channel_prefix[RL_CHANNEL_PREFIX_MAX];
} rl_command;

/* One plain resource: SET key value NX PX ttl. Several, or an owner token
 * given (the reentrant form): EVALSHA <acquire sha> n keys... value ttl
 * [owner]. */
void rl_command_acquire(rl_command *c, const rl_keys *keys, const void *value, size_t value_len,
                        int64_t ttl_ms, const void *owner, size_t owner_len);
/* Round 1 of a fenced acquire (docs/fencing.md): EVALSHA <fenced acquire
 * sha> n+1 keys... redlock:fence value ttl [owner]. */
void rl_command_fenced_acquire(rl_command *c, const rl_keys *keys, const void *value,
                               size_t value_len, int64_t ttl_ms, const void *owner,
                               size_t owner_len);
/* Round 2: EVALSHA <fence confirm sha> 2n+1 keys... redlock:fence
 * token-keys... value token */
void rl_command_fence_confirm(rl_command *c, const rl_keys *keys, const void *value,
                              size_t value_len, uint64_t token);
/* Seeding's read of another master's counter: EVALSHA <fence read sha> 1
 * redlock:fence */
void rl_command_fence_read(rl_command *c);
/* EVALSHA <fence seed sha> 1 redlock:fence seed [run_id]: seeding a counter
 * in run_id, or (NULL) initializing it in whatever run the master is in. */
void rl_command_fence_seed(rl_command *c, uint64_t seed, const char *run_id);
/* EVALSHA <release sha> n keys... value channel-prefix, the channel prefix of
 * database 0 (rl_command_set_db changes it); fenced: 2n keys... (the token
 * keys after the lock's) and a third argument, 1. */
void rl_command_release(rl_command *c, const rl_keys *keys, const void *value, size_t value_len,
                        bool fenced);
/* EVALSHA <extend sha> n keys... value ttl; fenced: 2n keys... value ttl 1 */
void rl_command_extend(rl_command *c, const rl_keys *keys, const void *value, size_t value_len,
                       int64_t ttl_ms, bool fenced);
/* The script-free extension of one plain key (not reentrant, not
 * fenced): SET key value IFEQ value PX ttl GET, for masters with
 * RL_CAP_SET_IFEQ. It answers the key's old value: ours (extended, as the
 * script's 1), nil (absent: 0, not created) or another's (-1). */
void rl_command_plain_extend(rl_command *c, const void *key, size_t key_len, const void *value,
                             size_t value_len, int64_t ttl_ms);
/* EVALSHA <inspect sha> 2n keys... token-keys... */
void rl_command_inspect(rl_command *c, const rl_keys *keys);
/* PING */
void rl_command_ping(rl_command *c);

/* The same request for a master whose database is db: only a release
 * differs, by its channel prefix (channel.h). Keep c where it is until
 * written: the channel argument points into it. */
void rl_command_set_db(rl_command *c, int db);
/* Whether the request differs by the master's database. */
bool rl_command_db_dependent(const rl_command *c);

/* Decimal digits of n. */
size_t rl_resp_digits(size_t n);
/* "<prefix><n>\r\n" at out (a RESP array or bulk header); returns the
 * bytes written. */
size_t rl_resp_header(char *out, char prefix, size_t n);

/* Bytes of the RESP form, without the terminating NUL. */
size_t rl_command_size(const rl_command *c);
/* Write the RESP form, rl_command_size() bytes, and a NUL after them (room
 * for rl_command_size() + 1 bytes). hiredis takes a formatted command as a
 * C string: it looks for the first argument with strchr(), and after a
 * single-argument command (PING) reads the byte past its end. */
void rl_command_write(const rl_command *c, char *out);

#endif
