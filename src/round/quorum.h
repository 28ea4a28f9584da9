/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The quorum fan-out: one request to every master in parallel, each with its
 * own deadline, tallied as replies come in. The round decides as soon as the
 * answer is known (a quorum did what was asked, or too few masters remain to
 * reach one) and tells its owner. It keeps processing replies that arrive
 * later, and lives until every master it asked has answered or failed.
 *
 * Slot lifecycle, the request to one master:
 *
 *   UNUSED (not asked)
 *   WAITING --handshake done--> SENT --reply--> DONE
 *      |                       ^  |--reply after it was counted--> LATE
 *      |       QUEUED --room---+  +--connection lost--> LOST
 *      |         |
 *      +---------+--withdrawn, or the master failed--> DONE
 *
 * An acquire's or extension's OK with a clock sample behind it on the same
 * connection (clock_probe.h) stays SENT, awaiting_clock, until that
 * sample's reply is in (or the connection is gone): then it is counted
 * with the master's clock verdict as of its own round, not an older one.
 *
 * A slot's request is an rl_request (master/request.h): the master it is
 * submitted to queues and sends it, and tells the slot what became of it
 * through slot_ops (quorum.c), never knowing the round. WAITING is the
 * wait for a connection's handshake, in order; QUEUED the wait for room
 * in the window of requests in flight to a ready master (master.h), by
 * priority (send_queue.h), or an extension's moment there for others to
 * join its batch (batch.h): what rl_master_submit() answered. A batched request is SENT like
 * any other: its slots go SENT together and each hears its own part of
 * the batch's reply. A request's deadline starts when
 * it is sent: one command timeout from then. A queued request's is the
 * time it may wait: an extension until its lock runs out, anything else
 * one command timeout from its submission.
 *
 * An acquire's or fence's request to a master not answering as it is
 * submitted (rl_master_suspect: connecting again after a loss, or silent
 * past a command timeout with requests in flight) is not waited for: once
 * the other masters have answered, the round decides as if it could not
 * make the quorum, though an OK from it in time counts as usual. Decided
 * without it, the result shows it pending; the request goes on as any
 * other, and its lock's cleanup releases what it may have set. Otherwise
 * a contested attempt would sit on the answering masters with its keys
 * for the silent one's deadline, and the contenders after it, refused
 * there, would wait on it in turn. Only while the masters answering could
 * make a quorum by themselves: a majority not answering (reconnecting
 * after an outage) is waited for as before, as nothing else can grant.
 *
 * A slot is counted in the tally once: by its reply, its failure, or its
 * deadline (TIMEOUT while SENT or QUEUED, NOT_CONNECTED while WAITING). A
 * deadline does not end a request sent: a SENT slot stays SENT, and its
 * reply, when it comes, is LATE -- shown in the result as what the master
 * said, never counted. WAITING and QUEUED slots are withdrawn at their
 * deadline, except a release's: it may have to undo a request queued before
 * it on the same master, so it goes out whenever that one does (and never
 * ahead of it: send_queue.h). Once a round is decided with a quorum, its
 * QUEUED slots at masters that answer nothing are withdrawn; at a busy
 * master they go out in their turn. LOST requests may have taken effect. DONE,
 * LATE and LOST are final.
 *
 * Round lifecycle: collecting -> decided -> settled (freed).
 */
#ifndef REDLOCK_QUORUM_H
#define REDLOCK_QUORUM_H

#include "wire/command.h"
#include "master/request.h"
#include "util/list.h"
#include "redlock/redlock.h"

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>

struct redisReply;
typedef struct rl_master rl_master;

/* Counts over the masters a round asked. Pure data: see the rl_tally_*
 * functions for the rules. */
typedef struct rl_tally {
    unsigned quorum;        /* N/2 + 1 of all masters */
    unsigned ok;            /* did what was asked (release: our value is gone) */
    unsigned refused;       /* answered normally but no: held / not ours */
    unsigned timeout;
    unsigned unsent;        /* waited for room in a window until their deadline */
    unsigned not_connected;
    unsigned auth_failed;
    unsigned perm_refused;  /* NOPERM: the ACL user may not (permanent) */
    unsigned error;         /* error replies */
    unsigned pending;       /* asked, not counted yet */
    unsigned pending_suspect; /* of those, at masters not answering when asked
                                 (rl_master_suspect): not waited for */
    unsigned clock;         /* did it on a master whose clock is proven fast */
    unsigned restarted;     /* did it on a master whose run began less than
                               max_ttl_ms ago (master/restart.h) */
    /* A fenced acquire's round 1 (docs/fencing.md) is decided by the OK
     * replies that carry a counter: a quorum of them, or too few left. */
    bool need_fence;
    unsigned fenced_ok;     /* OK replies with a counter in use */
    unsigned unfenced;      /* fence confirm: masters whose counter is not in use */
} rl_tally;

typedef enum rl_verdict { RL_UNDECIDED, RL_QUORUM, RL_NO_QUORUM } rl_verdict;

/* N/2 + 1. */
unsigned rl_quorum_of(unsigned n);
/* QUORUM when ok reached quorum. NO_QUORUM when ok + pending cannot and
 * either refusals alone rule a quorum out or every master still to answer
 * is one not answering (below): short of that the others are waited for,
 * so that the status (rl_tally_failure_status()) names all they said,
 * whichever came first. With
 * need_fence, QUORUM takes a quorum of fenced_ok, and NO_QUORUM is also a
 * quorum of ok that too few fenced_ok (with pending) can match. Once only
 * requests at masters not answering are pending (pending_suspect), they
 * are not waited for: NO_QUORUM short of a quorum. Their OK still counts
 * when it comes before the decision. */
rl_verdict rl_tally_verdict(const rl_tally *t);
/*
 * The status of a round that cannot reach quorum. refused_status (e.g.
 * ECONFLICT, ENOTOWNER) when the masters that said no are so many that no
 * quorum was possible even had all the others said yes. ENOFENCE when
 * need_fence and a quorum said yes (too few with a counter). Otherwise the most
 * common reason among the other failures: EOVERLOAD (not sent for want of
 * room), EPERM (NOPERM replies), EAUTH, EREPLY or ENOQUORUM (timeouts, no connection; also ties).
 * Masters with no answer yet are not counted as a reason. A round decided
 * without the masters not answering (pending_suspect) gets the status it
 * would have had waiting for them to time out.
 */
int rl_tally_failure_status(const rl_tally *t, int refused_status);

/* The shortest round trip an attempt is assumed to take: a TTL leaving
 * less than 1 ms of validity after it and the drift allowance can never
 * be granted, and acquire refuses it up front (REDLOCK_EINVAL). */
#define RL_MIN_ROUND_TRIP_US 1000

/* How long the holder may act, in microseconds, after elapsed_us since the
 * attempt started: ttl - elapsed - (ttl * drift_factor + 2 ms). */
int64_t rl_validity_us(int64_t ttl_ms, int64_t elapsed_us, double drift_factor);

typedef enum rl_slot_state {
    RL_SLOT_UNUSED,  /* not asked */
    RL_SLOT_WAITING, /* queued behind a handshake, in master->waiting */
    RL_SLOT_QUEUED,  /* waiting for room in the window, in master->queue */
    RL_SLOT_SENT,    /* hiredis holds its callback */
    RL_SLOT_DONE,    /* answered in time, failed, or withdrawn */
    RL_SLOT_LATE,    /* answered after it was counted at its deadline */
    RL_SLOT_LOST     /* sent, and the connection was lost before the reply */
} rl_slot_state;

/* The detail of a request that waited for room until its deadline. */
#define RL_QUEUED_DETAIL "not sent: waited for room among the requests in flight"
/* The detail of a reply that came after its slot was counted. */
#define RL_LATE_DETAIL "late reply, not counted"

typedef struct rl_round rl_round;
typedef struct rl_owed_release rl_owed_release;

typedef struct rl_slot {
    rl_round *round;
    rl_master *master;
    rl_request req;         /* what the master queues and sends; its link is in
                               the master's lists while WAITING or QUEUED, in its
                               clock probe's while awaiting_clock */
    rl_slot_state state;
    bool counted;           /* in the tally (outcome may be a later, LATE reply) */
    bool awaiting_clock;    /* SENT, answered OK: waits for the clock sample
                               behind it (link in the probe's list) */
    bool use_eval;          /* NOSCRIPT seen: resend with EVAL (req.cmd), alone */
    bool following_up;      /* its plain form's follow-up sent (command.h) */
    bool suspect;           /* its master was not answering when it was submitted:
                               in tally.pending_suspect until counted */
    unsigned conn_seq;      /* counted OK: its master's connection then
                               (restart.h); checked again at the decision */
    int outcome;            /* redlock_master_outcome, once counted; LATE: the reply */
    int64_t deadline_us;
    int64_t sent_us;
    int64_t latency_us;     /* -1 until a reply */
    char *detail;           /* error text, malloc'ed, or NULL */
    char *own_cmd;          /* the request for this master's database, when it
                               differs from the round's (a release); else NULL */
    size_t own_len;
    char *own_eval;         /* its EVAL form, built on the first NOSCRIPT */
    size_t own_eval_len;
    char *value;            /* inspect: the key's value, malloc'ed, or NULL */
    size_t value_len;
    int64_t pttl_ms;        /* inspect: the key's PTTL; -2 otherwise */
    int64_t listeners;      /* release: subscribers that heard its announcement */
    int64_t counter;        /* fenced acquire, fence read: the counter in use; -1 none;
                               inspect: the lock's fencing token */
    char run_id[41];        /* fenced acquire: the master's run when its counter is
                               not in use ("" otherwise); RL_RUN_ID_SIZE */
} rl_slot;

typedef void (*rl_round_decided_fn)(rl_round *round, void *owner);

struct rl_round {
    redlock_client *client;
    rl_round_kind kind;
    unsigned refs;          /* the owner's + one per WAITING or SENT slot */
    rl_tally tally;
    unsigned deleted;       /* release: masters where our value was deleted */
    bool decided;
    bool withdrawn;         /* rl_round_withdraw_unsent() was called: nothing more
                               goes out, not even an EVAL after NOSCRIPT */
    int64_t t0_us;          /* before the first send */
    int64_t urgent_by_us;   /* an extension: when its lock runs out; 0 otherwise */
    int64_t decided_us;
    rl_round_decided_fn on_decided; /* NULL once detached */
    void *owner;
    ev_timer timer;         /* next slot deadline; runs only while undecided */
    int64_t timer_at_us;    /* the deadline the timer was last armed for */
    const rl_script *script; /* the script its EVALSHA runs, or NULL */
    char *cmd;              /* the request in RESP (SET, EVALSHA, PING), after slots[] */
    size_t cmd_len;
    char *eval_cmd;         /* EVAL form, built on the first NOSCRIPT */
    size_t eval_len;
    rl_plain_request plain[RL_PLAIN_FORMS]; /* the script-free forms (command.h),
                                               written after cmd */
    size_t plain_forms;     /* 0: none */
    rl_plain_request follow_up; /* sent after a plain reply asking for it; parts 0: none */
    char *plain_value;      /* the lock's value their replies are compared with, after them */
    size_t plain_value_len;
    rl_owed_release *owed;  /* a release's: owed to masters it cannot reach, or NULL */
    struct rl_holders *holders; /* an acquire's or extension's: the masters that said OK,
                                   late ones too (holders.h); NULL otherwise */
    size_t n;
    rl_slot slots[];
};

/*
 * Start a round of kind, sending cmd (written into the round's own memory)
 * to every master, or only those with target[i] true. on_decided is called
 * once, from the loop, never from within this call. Returns NULL when out of
 * memory.
 */
rl_round *rl_round_start(redlock_client *client, rl_round_kind kind, const rl_command *cmd,
                         const bool *target, rl_round_decided_fn on_decided, void *owner);
/*
 * Start an ownerless release round sending cmd to the masters with
 * target[i] true. A master it cannot reach (not connected, or the
 * connection lost before the reply) is owed the release on its next
 * connection (owed_release.h); the round takes owed. Returns NULL (owed
 * freed) when out of memory.
 */
rl_round *rl_round_start_owing(redlock_client *client, const rl_command *cmd, const bool *target,
                               rl_owed_release *owed);
/* The owner lets go: no decision callback any more; the round finishes on
 * its own (before a decision, its requests not yet sent are withdrawn,
 * except a release's). Drops the owner's reference unless keep_ref. */
void rl_round_detach(rl_round *round, bool keep_ref);
void rl_round_unref(rl_round *round);
/* Withdraw the round's requests still queued behind a handshake: they will
 * not be sent; nor will a request the master answers NOSCRIPT be sent again
 * with EVAL (a cleanup's release may already have gone out behind it). */
void rl_round_withdraw_unsent(rl_round *round);
/* From when a quorum's keys live: a key a request counted OK set or
 * extended lives at least until that request's send plus the TTL, however
 * long it waited to be sent; so until the quorum-th latest of those sends
 * plus the TTL, a quorum of them do. t0_us with fewer OK than a quorum. */
int64_t rl_round_quorum_sent_us(const rl_round *round);
/* Whether slot's request reached its master and may have taken effect
 * there: in flight, lost with its connection, or answered OK or an error
 * (in time or late). */
bool rl_slot_may_have_acted(const rl_slot *slot);

/* The slot whose request req is (its master hands it back). */
static inline rl_slot *rl_slot_of(rl_request *req)
{
    return rl_container_of(req, rl_slot, req);
}
/* The batch script (batch.h) a request of a round of kind running script
 * may join, or NULL: it goes alone. Extensions and releases batch. */
const rl_script *rl_round_batch_script(rl_round_kind kind, const rl_script *script);

#endif
