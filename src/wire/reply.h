/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the masters' replies mean: the replies to a round's requests
 * (quorum.c) and to the connection handshake (master.c). Pure functions of
 * a reply, with no state and no I/O, so that any reply a master may send,
 * whatever its type, size or nesting, can be checked against them directly
 * (test/unit/test_reply.c, test/fuzz/fuzz_replies.c).
 */
#ifndef REDLOCK_REPLY_H
#define REDLOCK_REPLY_H

#include "wire/command.h"
#include "wire/scripts.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct redisReply;

/* A script request's answer when the master's script cache lacks the
 * script (e.g. after SCRIPT FLUSH): send it again with EVAL. */
#define RL_REPLY_NOSCRIPT (-1)
/* A script-free reply that cannot say what the script would (a key of
 * another type): the request is to go again with its script. */
#define RL_REPLY_ASK_SCRIPT (-2)
/* The script-free form's command itself refused (NOPERM: the ACL user
 * lacks it; unknown, or a syntax error: the server lacks it): the request
 * goes again with its script, and the connection takes no more of that
 * form. */
#define RL_REPLY_PLAIN_REFUSED (-3)
/* A script-free reply that needs its form's follow-up (command.h) to say
 * what the script would: it goes to the same master. */
#define RL_REPLY_FOLLOW_UP (-4)

/* What one reply to a round's request says. */
typedef struct rl_reply_meaning {
    int outcome;        /* a redlock_master_outcome, RL_REPLY_NOSCRIPT or _ASK_SCRIPT */
    const char *detail; /* error text (into the reply), "unexpected reply", or NULL */
    size_t detail_len;  /* bytes of detail, which is not NUL-terminated */
    const char *value;  /* inspect: the key's value (into the reply), or NULL */
    size_t value_len;
    int64_t pttl_ms;    /* inspect: the key's PTTL; -2 otherwise */
    int64_t listeners;  /* release: subscribers its announcement reached; 0 otherwise */
    int64_t counter;    /* fenced acquire: the counter in use; -1 none. fence read:
                           the counter held (OK: in use; ABSENT: not); -1 none.
                           fence confirm: -2 when the counter is not in use.
                           inspect: the lock's fencing token; -1 none */
    const char *run_id; /* fenced acquire without a counter: the master's run_id
                           (into the reply, 40 bytes), or NULL */
} rl_reply_meaning;

/* What a reply to one of a script-free form's leading commands said
 * (command.h, rl_plain): kept by the request until the last reply, when
 * the form is read as a whole. */
#define RL_PART_TEXT 96
typedef struct rl_part_reply {
    int type;              /* REDIS_REPLY_*; 0: none came */
    long long integer;     /* an integer reply's */
    char text[RL_PART_TEXT]; /* an error's text, cut, NUL-terminated */
} rl_part_reply;

/* Keep what reply says in *out. */
void rl_part_reply_keep(rl_part_reply *out, const struct redisReply *reply);

/* What reply means for a request of kind. Pointers in *out point into
 * reply or at static text. */
void rl_reply_read(rl_round_kind kind, const struct redisReply *reply, rl_reply_meaning *out);
/* The same for the script-free form of a request of kind (command.h):
 * parts[] the replies to its leading commands, reply the last one's;
 * value the lock's. The outcome is the one the script would have given.
 * An extension's SET ... IFEQ ... GET answers the old value: ours is OK,
 * nil ABSENT, another's HELD. A release's compare-and-delete answers 1
 * (OK, with the PUBLISH's count of listeners) or 0: RL_REPLY_FOLLOW_UP,
 * its EXISTS (rl_reply_read_follow_up). WRONGTYPE (a key of another type: a reentrant
 * holder's hash, which the script tells apart from the rest), or a reply
 * that cannot say, is RL_REPLY_ASK_SCRIPT; the command refused (NOPERM,
 * unknown, a syntax error) RL_REPLY_PLAIN_REFUSED. A release's PUBLISH refused
 * (an ACL without the channel) counts no listeners, as the script's
 * pcall. Pointers in *out may point into parts. */
void rl_reply_read_plain(rl_round_kind kind, const rl_part_reply *parts, size_t nparts,
                         const struct redisReply *reply, const char *value, size_t value_len,
                         rl_reply_meaning *out);
/* A release's follow-up, EXISTS key after a compare-and-delete that
 * deleted nothing: 1 HELD (another's), 0 ABSENT; refused, the script. */
void rl_reply_read_follow_up(rl_round_kind kind, const struct redisReply *reply,
                             rl_reply_meaning *out);

/* True when reply's text (an error or status) begins with prefix. */
bool rl_reply_starts_with(const struct redisReply *reply, const char *prefix);

/* The handshake's requests, in the order they are sent (the ones a node
 * does not need are left out). */
typedef enum rl_handshake_step {
    RL_HS_AUTH = 1,
    RL_HS_SELECT,
    RL_HS_LOAD_RELEASE,
    RL_HS_LOAD_EXTEND,
    RL_HS_LOAD_INSPECT,
    RL_HS_LOAD_ACQUIRE,
    RL_HS_LOAD_FENCED_ACQUIRE,
    RL_HS_LOAD_FENCE_CONFIRM,
    RL_HS_LOAD_EXTEND_BATCH,
    RL_HS_LOAD_RELEASE_BATCH,
    RL_HS_INFO
} rl_handshake_step;

#define RL_HS_FIRST_LOAD RL_HS_LOAD_RELEASE
#define RL_HS_LAST_LOAD RL_HS_LOAD_RELEASE_BATCH

/* "AUTH", "SELECT", "SCRIPT LOAD" or "INFO". */
const char *rl_handshake_step_name(rl_handshake_step step);
/* The script a SCRIPT LOAD step loads; NULL for the other steps. */
const rl_script *rl_handshake_script(rl_handshake_step step);

typedef enum rl_handshake_verdict {
    RL_HANDSHAKE_ACCEPTED,     /* on to the next step */
    RL_HANDSHAKE_INFO_REFUSED, /* a restricted ACL user may not run INFO: the
                                * master is usable, unchecked for duplicates */
    RL_HANDSHAKE_AUTH_FAILED,  /* the credentials were refused */
    RL_HANDSHAKE_SCRIPTS_REFUSED, /* SCRIPT LOAD answered an error: the ACL user may
                                   * not run scripts, or the server runs none */
    RL_HANDSHAKE_FAILED        /* an error reply, or not the expected reply */
} rl_handshake_verdict;

/*
 * What reply means for a handshake step. For AUTH_FAILED and FAILED, reason
 * (reason_len bytes, NUL-terminated) says why in one printable line, fit for
 * the log: the step and the reply's text, escaped and cut, or a note that
 * the text was withheld because it quoted password (may be NULL) anywhere.
 */
rl_handshake_verdict rl_reply_handshake(rl_handshake_step step, const struct redisReply *reply,
                                        const char *password, char *reason, size_t reason_len);

/* Bytes of a run_id with its NUL. */
#define RL_RUN_ID_SIZE 41

/* The run_id in an INFO server reply ("...\r\nrun_id:<40 hex>\r\n..."),
 * into run_id; "" when there is none. */
void rl_reply_run_id(const struct redisReply *reply, char run_id[RL_RUN_ID_SIZE]);
/* The uptime_in_seconds of an INFO server reply; -1 when there is none. */
int64_t rl_reply_uptime_s(const struct redisReply *reply);

#endif
