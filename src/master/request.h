/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a master knows of a request it queues and sends (master.h), and how
 * it hands the request's outcome back: through the table of functions its
 * owner gave it (rl_request_ops), never by naming the owner's code. A
 * round's slot (round/quorum.h) embeds one; the master never sees the
 * round behind it.
 *
 * The owner fills in its part before it submits the request
 * (rl_master_submit) and leaves it alone while the request waits or is
 * queued. A submitted request hears on_failure (never sent), or on_sent
 * then on_reply; on_clock_checked follows an on_reply that left it
 * waiting for a clock sample (clock_probe.h). From on_reply the owner may
 * change cmd, cmd_len and batch_script and submit it again (EVAL after
 * NOSCRIPT). A request with script-free forms (plain) goes out in the
 * first its master's connection is known to have the commands of, never
 * in a batch; sent_plain tells its owner which form its reply answers,
 * and parts[] holds the replies to that form's leading commands. on_reply, on_failure and on_clock_checked may run user code
 * that frees the client (master.c says how the master copes).
 */
#ifndef REDLOCK_REQUEST_H
#define REDLOCK_REQUEST_H

#include "util/list.h"
#include "wire/command.h"
#include "wire/reply.h"
#include "wire/scripts.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct redisReply;
struct rl_master;
typedef struct rl_request rl_request;

/* A script-free form as written (command.h, rl_plain): its commands one
 * after another, each sent with hiredis on its own so that each reply is
 * matched; the last one's reply is the request's. */
typedef struct rl_plain_request {
    const char *cmd;
    size_t len;
    size_t parts;
    size_t part_len[RL_PLAIN_PARTS];
    unsigned caps; /* RL_CAP_* */
} rl_plain_request;

/* How a request waits for room in a window (send_queue.h). */
typedef enum rl_request_class {
    RL_REQUEST_OTHER,     /* acquires, inspects, pings, fencing: in order */
    RL_REQUEST_RELEASE,   /* frees a lock for others: its own turn, in order */
    RL_REQUEST_EXTENSION, /* the one whose lock runs out first first */
} rl_request_class;

typedef struct rl_request_ops {
    /* The request went out at now_us, to be answered by deadline_us. */
    void (*on_sent)(rl_request *req, int64_t now_us, int64_t deadline_us);
    /* Its reply, or NULL: the connection was lost (lost_reason says how). */
    void (*on_reply)(rl_request *req, const struct redisReply *reply, const char *lost_reason);
    /* It failed before it could be sent (a redlock_master_outcome). */
    void (*on_failure)(rl_request *req, int outcome, const char *detail);
    /* The clock sample it waited for after its reply is in, or its
     * connection is gone (rl_clock_probe_await). */
    void (*on_clock_checked)(rl_request *req);
} rl_request_ops;

struct rl_request {
    /* The owner's. */
    const rl_request_ops *ops;
    const char *cmd;           /* the bytes to send, RESP */
    size_t cmd_len;
    const rl_script *batch_script; /* the batch script it may join (batch.h), or NULL:
                                      it goes alone */
    uint64_t lock_tag;         /* the lock it is for (command.h); 0: none */
    int64_t urgent_by_us;      /* an extension: when its lock runs out */
    rl_request_class queue_class;
    bool sets_lock;            /* an acquire: may set its lock's keys (a release
                                  of that lock behind it, both unsent, is moot) */
    bool scripted;             /* cmd runs a script (EVALSHA): a master refusing
                                  scripts takes only its script-free forms */
    const rl_plain_request *plain; /* the request's script-free forms, or NULL: the
                                      first a master's connection has every command
                                      of (wire/server_info.h) goes instead of cmd */
    size_t plain_forms;
    /* The master's. */
    const rl_plain_request *sent_plain; /* the form that went out, alone; NULL: cmd */
    rl_part_reply parts[RL_PLAIN_PARTS - 1]; /* its leading commands' replies */
    bool in_queue;             /* held in master->queue (else in master->waiting) */
    struct rl_master *master;  /* the master it was submitted to */
    rl_link link;              /* in master->waiting, in a FIFO of master->queue,
                                  or in a clock probe's awaiting list */
    size_t queue_index;        /* a queued extension: its place in the queue's heap */
    uint64_t queue_seq;        /* queued: order of arrival in the queue */
    int64_t queued_us;         /* queued: when it began to wait for room */
};

#endif
