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
    /* The same request without a script, for masters that have the
     * commands it needs (rl_plain below), or NULL: sent to those instead
     * of the script (docs/servers.md). Kept where it is until written,
     * like this one. */
    const struct rl_plain *plain;
    size_t channel_arg;  /* the argument naming a channel prefix, 0 for none */
    int channel_db;      /* the database that channel is for */
    char numkeys[24];    /* the text of EVALSHA's key count */
    char number[24];     /* the text of a numeric argument (a TTL) */
    char channel_prefix[RL_CHANNEL_PREFIX_MAX];
} rl_command;

/*
 * A request's script-free forms (docs/servers.md, "The script-free path").
 * A form is one to RL_PLAIN_PARTS commands written one after another, for
 * a master with every command of its caps (wire/server_info.h); their
 * replies are read together (reply.h). A master takes the first form it
 * can; the script form is for the rest.
 */
#define RL_PLAIN_PARTS 2
#define RL_PLAIN_FORMS 2
#define RL_PLAIN_ARGS 8

typedef struct rl_plain_part {
    size_t argc;
    const char *argv[RL_PLAIN_ARGS];
    size_t len[RL_PLAIN_ARGS];
    const char *pre[RL_PLAIN_ARGS]; /* bytes written before argv[i] (a channel's prefix) */
    size_t pre_len[RL_PLAIN_ARGS];
} rl_plain_part;

typedef struct rl_plain_form {
    unsigned caps; /* RL_CAP_*: what a master needs to take it */
    size_t parts;
    rl_plain_part part[RL_PLAIN_PARTS];
} rl_plain_form;

typedef struct rl_plain {
    size_t forms;
    rl_plain_form form[RL_PLAIN_FORMS];
    /* Sent after a form's reply that asks for it (reply.h), to the same
     * master; parts 0: none. */
    rl_plain_form follow_up;
    const void *value; /* the lock's value the replies are compared with (not copied) */
    size_t value_len;
    char number[24];   /* the text of the TTL */
    char channel_prefix[RL_CHANNEL_PREFIX_MAX];
} rl_plain;

/* The script-free extension of one plain key (not reentrant, not fenced):
 * SET key value IFEQ value PX ttl GET, for masters with RL_CAP_SET_IFEQ.
 * It answers the key's old value: ours (extended, as the script's 1), nil
 * (absent: 0, not created) or another's (-1). */
void rl_plain_extend(rl_plain *p, const void *key, size_t key_len, const void *value,
                     size_t value_len, int64_t ttl_ms);
/* The script-free release of one plain key in database 0: the
 * compare-and-delete (DELIFEQ key value for RL_CAP_DELIFEQ, else DELEX key
 * IFEQ value for RL_CAP_DELEX), then PUBLISH on the key's channel
 * (channel.h), whatever the delete did: its reply counts the listeners.
 * model/notify_wait.pml, -DSCRIPT_FREE_RELEASE, checks that announcing
 * after the delete, with others' steps between, wakes every waiter. When
 * nothing was deleted, the follow-up EXISTS key tells held by another
 * from absent, as the script's answers do. */
void rl_plain_release(rl_plain *p, const void *key, size_t key_len, const void *value,
                      size_t value_len);
/* Bytes of form's RESP, without the terminating NUL, and each part's
 * bytes in part_len[] (RL_PLAIN_PARTS entries; 0 past the last). */
size_t rl_plain_form_size(const rl_plain_form *f, size_t part_len[RL_PLAIN_PARTS]);
/* Write form's parts one after another, and a NUL after them (room for
 * rl_plain_form_size() + 1 bytes). */
void rl_plain_form_write(const rl_plain_form *f, char *out);

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
