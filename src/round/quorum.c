/* SPDX-License-Identifier: BSD-3-Clause */
/* The quorum fan-out: one request to every master, tallied as replies come
 * in, decided as soon as the answer is known. See quorum.h. */
#include "round/quorum.h"
#include "context/context.h"
#include "util/counters.h"
#include "config/config_internal.h"
#include "master/clock_probe.h"
#include "master/master.h"
#include "master/restart.h"
#include "master/request.h"
#include "redlock/redlock.h"
#include "round/holders.h"
#include "round/owed_release.h"
#include "util/list.h"
#include "util/log.h"
#include "util/timer.h"
#include "util/util.h"
#include "wire/command.h"
#include "wire/reply.h"
#include "wire/scripts.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Error text kept per master, enough for any Redis error line we care about. */
#define RL_DETAIL_MAX 200

/* What a slot's master tells it (master/request.h). */
static void slot_on_sent(rl_request *req, int64_t now_us, int64_t deadline_us);
static void slot_on_reply(rl_request *req, const redisReply *reply, const char *lost_reason);
static void slot_on_failure(rl_request *req, int outcome, const char *detail);
static void slot_on_clock_checked(rl_request *req);

static const rl_request_ops slot_ops = {
    .on_sent = slot_on_sent,
    .on_reply = slot_on_reply,
    .on_failure = slot_on_failure,
    .on_clock_checked = slot_on_clock_checked,
};

unsigned rl_quorum_of(unsigned n)
{
    return n / 2 + 1;
}

/* Every master of the round, whatever it said or not yet. */
static unsigned tally_total(const rl_tally *t)
{
    return t->ok + t->refused + t->timeout + t->unsent + t->not_connected + t->auth_failed +
           t->perm_refused + t->error + t->pending + t->clock + t->restarted;
}

rl_verdict rl_tally_verdict(const rl_tally *t)
{
    /* Masters found not answering when asked (pending_suspect) are not
     * waited for: once every other master has answered, they are counted
     * as unable to make the quorum. The others are still waited for (a
     * round trip): their refusals may rule a quorum out, and the status
     * must not depend on who answered first. Deciding without a master's
     * answer is that answer lost or late, which the models allow at any
     * time (model/fencing.pml, model/restart.pml): no change to them. */
    bool only_silent_left = t->pending == t->pending_suspect;
    if (t->need_fence) {
        if (t->fenced_ok >= t->quorum)
            return RL_QUORUM;
        /* Lost for want of counters only once a quorum said yes: until
         * then the masters still to answer may make it a plain refusal, so
         * the status would depend on who answered first. */
        if (t->ok >= t->quorum && (t->fenced_ok + t->pending < t->quorum || only_silent_left))
            return RL_NO_QUORUM;
    } else if (t->ok >= t->quorum) {
        return RL_QUORUM;
    }
    if (only_silent_left) /* every answer is in but theirs: no quorum */
        return RL_NO_QUORUM;
    /* No quorum either way. Refusals that rule it out say "held" whatever
     * comes next; short of that, the answering masters still to answer are
     * waited for (a round trip): what they say names the status ("held",
     * "no quorum", a clock, an error), which must not depend on who
     * answered first. */
    if (t->ok + t->pending < t->quorum && t->refused + t->quorum > tally_total(t))
        return RL_NO_QUORUM;
    return RL_UNDECIDED;
}

int rl_tally_failure_status(const rl_tally *t, int refused_status)
{
    unsigned n = tally_total(t);
    /* "No" only when the refusals alone rule a quorum out: even had every
     * other master said yes, there would be none. Fewer refusals, with
     * masters out of reach, decide nothing: that is "no quorum", which an
     * auto-extension retries, where "not ours" would give the lock up. */
    if (t->refused + t->quorum > n)
        return refused_status;
    /* Masters found not answering count as the timeouts that waiting for
     * them would have seen: the status is the same either way. */
    unsigned may_yet = t->pending - t->pending_suspect;
    /* Enough said yes, or may yet, but too few of them on masters whose
     * run is old enough to count: the restart is why (decided early, the
     * masters still to answer could not have made up for it). */
    if (t->restarted > 0 && t->ok + t->restarted + may_yet >= t->quorum)
        return REDLOCK_ERESTARTED;
    /* Enough said yes, but too few of them on masters with trusted clocks. */
    if (t->clock > 0 && t->ok + t->clock + t->restarted >= t->quorum)
        return REDLOCK_ECLOCK;
    /* A quorum said yes, too few of them with a counter. */
    if (t->need_fence && t->ok >= t->quorum)
        return REDLOCK_ENOFENCE;
    /* Masters still to answer when a round is decided early are neither
     * reason: the status names what the others said, the same whichever
     * came first. Those found not answering are timeouts (above). */
    unsigned unreachable = t->timeout + t->not_connected + t->pending_suspect;
    if (t->unsent > unreachable && t->unsent > t->auth_failed && t->unsent > t->error)
        return REDLOCK_EOVERLOAD;
    unreachable += t->unsent;
    /* Masters that answered "not allowed" are not out of reach: they are
     * the cause whenever they outnumber those that are. */
    if (t->perm_refused > unreachable && t->perm_refused >= t->auth_failed &&
        t->perm_refused >= t->error)
        return REDLOCK_EPERM;
    if (t->auth_failed > unreachable && t->auth_failed >= t->error)
        return REDLOCK_EAUTH;
    if (t->error > unreachable && t->error > t->auth_failed)
        return REDLOCK_EREPLY;
    return REDLOCK_ENOQUORUM;
}

int64_t rl_validity_us(int64_t ttl_ms, int64_t elapsed_us, double drift_factor)
{
    return ttl_ms * 1000 - elapsed_us - rl_drift_us(ttl_ms, drift_factor);
}

static void round_ref(rl_round *round)
{
    round->refs++;
}

void rl_round_unref(rl_round *round)
{
    if (--round->refs > 0)
        return;
    for (size_t i = 0; i < round->n; i++) {
        free(round->slots[i].detail);
        free(round->slots[i].value);
        free(round->slots[i].own_cmd);
        free(round->slots[i].own_eval);
    }
    free(round->eval_cmd);
    free(round->owed);
    rl_holders_unref(round->holders);
    redlock_client *client = round->client;
    free(round);
    rl_client_unref(client);
}

/* Inspect and ping report on every master: they decide only once all have
 * answered or failed. */
static bool round_waits_for_all(const rl_round *round)
{
    return round->kind == RL_ROUND_INSPECT || round->kind == RL_ROUND_PING ||
           round->kind == RL_ROUND_FENCE_READ || round->kind == RL_ROUND_FENCE_SEED;
}

/* Acquires and fences do not wait for masters not answering (quorum.h):
 * decided early, they only fail sooner, and their cleanup follows. An
 * extension or release keeps waiting: it holds no one out. */
static bool round_skips_suspects(const rl_round *round)
{
    return round->kind == RL_ROUND_ACQUIRE || round->kind == RL_ROUND_FENCE;
}

const rl_script *rl_round_batch_script(rl_round_kind kind, const rl_script *script)
{
    if (kind == RL_ROUND_EXTEND && script == &rl_extend_script)
        return &rl_extend_batch_script;
    if (kind == RL_ROUND_RELEASE && script == &rl_release_script)
        return &rl_release_batch_script;
    return NULL;
}

/* The bytes its master sends for slot: EVALSHA, or EVAL after NOSCRIPT. */
static void slot_set_command(rl_slot *slot)
{
    const rl_round *round = slot->round;
    rl_request *req = &slot->req;
    if (slot->own_cmd != NULL) {
        req->cmd = slot->use_eval ? slot->own_eval : slot->own_cmd;
        req->cmd_len = slot->use_eval ? slot->own_eval_len : slot->own_len;
    } else if (slot->use_eval) {
        req->cmd = round->eval_cmd;
        req->cmd_len = round->eval_len;
    } else {
        req->cmd = round->cmd;
        req->cmd_len = round->cmd_len;
    }
}

/* Hand slot's request to its master, which sends it (SENT) or holds it
 * (WAITING, QUEUED). Returns -1 then, else the outcome to record. */
static int slot_submit(rl_slot *slot)
{
    int taken = rl_master_submit(slot->master, &slot->req);
    switch (taken) {
    case RL_SUBMIT_SENT:
        return -1;
    case RL_SUBMIT_WAITING:
        slot->state = RL_SLOT_WAITING;
        return -1;
    case RL_SUBMIT_QUEUED:
        slot->state = RL_SLOT_QUEUED;
        /* It may wait as long as it is of use: an extension until its
         * lock runs out (quorum.h). */
        if (slot->round->urgent_by_us > slot->deadline_us)
            slot->deadline_us = slot->round->urgent_by_us;
        return -1;
    default:
        return taken;
    }
}

/* Before the submissions: the slots whose masters the round is not to
 * wait for (quorum.h). Only while the masters answering could make a
 * quorum by themselves: when they cannot (a majority reconnecting after an
 * outage), the silent ones are the round's only chance, and waiting for
 * their handshakes holds out no one the outage does not. */
static void round_note_suspects(rl_round *round, const bool *target)
{
    if (!round_skips_suspects(round))
        return;
    unsigned asked = 0;
    for (size_t i = 0; i < round->n; i++) {
        if (target != NULL && !target[i])
            continue;
        asked++;
        rl_slot *slot = &round->slots[i];
        if (rl_master_suspect(slot->master, round->t0_us)) {
            slot->suspect = true;
            round->tally.pending_suspect++;
        }
    }
    if (asked - round->tally.pending_suspect >= round->tally.quorum)
        return;
    for (size_t i = 0; i < round->n; i++)
        round->slots[i].suspect = false;
    round->tally.pending_suspect = 0;
}

/* What the result shows for the slot: outcome and detail (replacing any). */
static void slot_describe(rl_slot *slot, int outcome, const char *detail, size_t detail_len)
{
    slot->outcome = outcome;
    free(slot->detail);
    slot->detail = NULL;
    if (detail != NULL) {
        if (detail_len > RL_DETAIL_MAX)
            detail_len = RL_DETAIL_MAX;
        slot->detail = strndup(detail, detail_len); /* NULL if out of memory: it is a detail */
    }
}

/* Whether the round's OKs count only from masters whose clocks are not
 * proven fast: those that set or extend a lock. */
static bool round_counts_clock(const rl_round *round)
{
    return round->kind == RL_ROUND_ACQUIRE || round->kind == RL_ROUND_EXTEND ||
           round->kind == RL_ROUND_FENCE;
}

#define RL_CLOCK_DETAIL "its clock is proven fast"

/* Whether an OK from slot's master does not count now for its restart
 * (master/restart.h); if so, the result says so. */
static bool slot_restart_exclude(rl_slot *slot, int64_t now_us)
{
    if (!rl_restart_excludes(slot->master, now_us))
        return false;
    char why[RL_DETAIL_MAX];
    rl_restart_describe(slot->master, now_us, why, sizeof(why));
    slot_describe(slot, REDLOCK_MASTER_CLOCK, why, strlen(why));
    return true;
}

/* Enter the slot's outcome in the tally, once. */
static void slot_count(rl_slot *slot, int outcome, const char *detail, size_t detail_len)
{
    if (slot->counted)
        return;
    rl_round *round = slot->round;
    rl_tally *t = &round->tally;
    slot->counted = true;
    slot_describe(slot, outcome, detail, detail_len);
    rl_stats_request_done(&slot->master->stats, outcome, slot->latency_us);
    t->pending--;
    if (slot->suspect)
        t->pending_suspect--;
    /* An acquire or extension done on a master proven fast does not count:
     * that master may drop the key before the validity ends. */
    bool restarted = false;
    if (outcome == REDLOCK_MASTER_OK && round_counts_clock(round) &&
        rl_clock_probe_excludes(slot->master))
        slot_describe(slot, outcome = REDLOCK_MASTER_CLOCK, RL_CLOCK_DETAIL,
                      strlen(RL_CLOCK_DETAIL));
    /* Nor one on a master whose run may have begun after keys it forgot
     * were set (master/restart.h): tallied as a clock-excluded one is. */
    else if (outcome == REDLOCK_MASTER_OK && round_counts_clock(round) &&
             slot_restart_exclude(slot, rl_now_us())) {
        outcome = REDLOCK_MASTER_CLOCK;
        restarted = true;
    }
    slot->conn_seq = slot->master->restart.conn_seq;
    if (outcome == REDLOCK_MASTER_OK || outcome == REDLOCK_MASTER_CLOCK)
        rl_holders_add(round->holders, (size_t)(slot - round->slots));
    switch (outcome) {
    case REDLOCK_MASTER_CLOCK:
        if (restarted)
            t->restarted++;
        else
            t->clock++;
        break;
    case REDLOCK_MASTER_OK:
        t->ok++;
        if (t->need_fence && slot->counter >= 0)
            t->fenced_ok++;
        if (round->kind == RL_ROUND_RELEASE)
            round->deleted++;
        break;
    case REDLOCK_MASTER_HELD:
    case REDLOCK_MASTER_ABSENT:
        if (round->kind == RL_ROUND_FENCE && slot->counter == -2)
            t->unfenced++;
        /* Release: our value is not there, which is what release wants. */
        if (round->kind == RL_ROUND_RELEASE)
            t->ok++;
        else
            t->refused++;
        break;
    case REDLOCK_MASTER_TIMEOUT:
        t->timeout++;
        break;
    case REDLOCK_MASTER_AUTH_FAILED:
        t->auth_failed++;
        break;
    case REDLOCK_MASTER_REFUSED:
        t->perm_refused++;
        break;
    case REDLOCK_MASTER_ERROR:
        t->error++;
        break;
    default:
        t->not_connected++;
        break;
    }
}

/* Arm the timer for the earliest deadline of a slot still uncounted, or at
 * once when the verdict is already known (so the owner hears it from the
 * loop, never from inside rl_round_start). */
static void round_arm_timer(rl_round *round)
{
    int64_t now = rl_now_us();
    int64_t next = INT64_MAX;
    if (rl_tally_verdict(&round->tally) != RL_UNDECIDED &&
        (!round_waits_for_all(round) || round->tally.pending == 0)) {
        next = now;
    } else {
        for (size_t i = 0; i < round->n; i++) {
            const rl_slot *slot = &round->slots[i];
            if ((slot->state == RL_SLOT_WAITING || slot->state == RL_SLOT_QUEUED ||
                 slot->state == RL_SLOT_SENT) &&
                !slot->counted && slot->deadline_us < next)
                next = slot->deadline_us;
        }
    }
    if (next == INT64_MAX)
        return;
    /* Most replies leave the earliest deadline where it was (a round's
     * requests go out together): the timer then stays as it is, rather
     * than leave and rejoin the loop's heap of every lock's timers. */
    if (ev_is_active(&round->timer) && round->timer_at_us == next)
        return;
    round->timer_at_us = next;
    rl_timer_arm_at(round->client->loop, &round->timer, next);
}

/* A WAITING or SENT slot is finished (DONE, LATE or LOST): neither hiredis
 * nor the master's queue will give it back again. A release that did not
 * reach its master is owed to it, if the round keeps such debts. */
static void slot_finish(rl_slot *slot, rl_slot_state final)
{
    rl_round *round = slot->round;
    slot->state = final;
    bool unreached = final == RL_SLOT_LOST ||
                     (final == RL_SLOT_DONE && slot->latency_us < 0 &&
                      slot->outcome == REDLOCK_MASTER_NOT_CONNECTED);
    if (round->owed != NULL && unreached)
        rl_owed_release_add(slot->master, round->owed);
    rl_round_unref(round);
}

/* Take a queued slot back: it will not be sent, and stays uncounted. */
static void slot_withdraw(rl_slot *slot)
{
    rl_master_withdraw(slot->master, &slot->req);
    slot->state = RL_SLOT_DONE;
    rl_round_unref(slot->round);
}

void rl_round_withdraw_unsent(rl_round *round)
{
    round->withdrawn = true;
    for (size_t i = 0; i < round->n; i++)
        if (round->slots[i].state == RL_SLOT_WAITING || round->slots[i].state == RL_SLOT_QUEUED)
            slot_withdraw(&round->slots[i]);
}


int64_t rl_round_quorum_sent_us(const rl_round *round)
{
    int64_t sent[REDLOCK_MAX_NODES];
    size_t k = 0;
    for (size_t i = 0; i < round->n && k < REDLOCK_MAX_NODES; i++) {
        const rl_slot *slot = &round->slots[i];
        if (!slot->counted || slot->state != RL_SLOT_DONE || slot->outcome != REDLOCK_MASTER_OK)
            continue;
        /* Sorted as they come: at most a few dozen. */
        size_t j = k++;
        for (; j > 0 && sent[j - 1] > slot->sent_us; j--)
            sent[j] = sent[j - 1];
        sent[j] = slot->sent_us;
    }
    unsigned quorum = round->tally.quorum;
    if (quorum == 0 || k < quorum)
        return round->t0_us;
    return sent[k - quorum];
}

bool rl_slot_may_have_acted(const rl_slot *slot)
{
    switch (slot->state) {
    case RL_SLOT_SENT:
    case RL_SLOT_LOST:
        return true;
    case RL_SLOT_DONE:
    case RL_SLOT_LATE:
        /* An error too: a script stopped by one keeps what it wrote. */
        return slot->outcome == REDLOCK_MASTER_OK || slot->outcome == REDLOCK_MASTER_ERROR ||
               slot->outcome == REDLOCK_MASTER_CLOCK;
    default:
        return false;
    }
}

/* Decided with a quorum: a request still waiting for room at a master that
 * answers nothing (stopped, or still in its handshake) would only hold its
 * round there; one at a master that is merely busy goes out in its turn,
 * so that one more master holds the key. */
static void round_withdraw_stuck(rl_round *round)
{
    int64_t now = rl_now_us();
    for (size_t i = 0; i < round->n; i++) {
        rl_slot *slot = &round->slots[i];
        if (slot->state == RL_SLOT_QUEUED && !rl_master_answering(slot->master, now))
            slot_withdraw(slot);
    }
}

/* An OK counted before its master was proven fast counts no more: a
 * decision counts only the masters trusted when it is made
 * (model/clock_check.pml), whatever verdict came since a slot was counted. */
static void round_recount_clock(rl_round *round)
{
    if (!round_counts_clock(round))
        return;
    rl_tally *t = &round->tally;
    for (size_t i = 0; i < round->n; i++) {
        rl_slot *slot = &round->slots[i];
        /* DONE: a LATE slot's outcome is its reply, not what was counted. */
        if (!slot->counted || slot->state != RL_SLOT_DONE ||
            slot->outcome != REDLOCK_MASTER_OK || !rl_clock_probe_excludes(slot->master))
            continue;
        slot_describe(slot, REDLOCK_MASTER_CLOCK, RL_CLOCK_DETAIL, strlen(RL_CLOCK_DETAIL));
        t->ok--;
        t->clock++;
        if (t->need_fence && slot->counter >= 0)
            t->fenced_ok--;
    }
    /* Likewise an OK from a connection since replaced by one to a run that
     * does not count yet: the keys it set may be gone (model/restart.pml
     * counts OKs against the master's current connection). */
    int64_t now = rl_now_us();
    for (size_t i = 0; i < round->n; i++) {
        rl_slot *slot = &round->slots[i];
        if (!slot->counted || slot->state != RL_SLOT_DONE ||
            slot->outcome != REDLOCK_MASTER_OK ||
            slot->conn_seq == slot->master->restart.conn_seq ||
            !slot_restart_exclude(slot, now))
            continue;
        t->ok--;
        t->restarted++;
        if (t->need_fence && slot->counter >= 0)
            t->fenced_ok--;
    }
}

/* Decide if the tally allows it, and tell the owner. Callers hold a
 * reference: the owner may run user code that frees anything. */
static void round_evaluate(rl_round *round)
{
    if (round->decided || round->on_decided == NULL)
        return;
    round_recount_clock(round);
    if (rl_tally_verdict(&round->tally) == RL_UNDECIDED ||
        (round_waits_for_all(round) && round->tally.pending > 0))
        return;
    round->decided = true;
    round->decided_us = rl_now_us();
    ev_timer_stop(round->client->loop, &round->timer);
    /* A failed acquire or extend no longer needs the requests still queued.
     * A success lets them go out (more masters holding the key), and a
     * release should reach every master it can anyway. */
    if (round->kind != RL_ROUND_RELEASE && rl_tally_verdict(&round->tally) == RL_NO_QUORUM)
        rl_round_withdraw_unsent(round);
    else if (round->kind != RL_ROUND_RELEASE)
        round_withdraw_stuck(round);
    round->on_decided(round, round->owner);
}

static void round_handle_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_round *round = w->data;
    int64_t now = rl_now_us();
    round_ref(round);
    for (size_t i = 0; i < round->n; i++) {
        rl_slot *slot = &round->slots[i];
        if (slot->counted || slot->deadline_us > now)
            continue;
        if (slot->state == RL_SLOT_WAITING) {
            slot_count(slot, REDLOCK_MASTER_NOT_CONNECTED, "still connecting",
                       strlen("still connecting"));
            /* Never sent: drop it rather than send a stale request later.
             * A release stays: it may follow a request it must undo. */
            if (round->kind != RL_ROUND_RELEASE)
                slot_withdraw(slot);
        } else if (slot->state == RL_SLOT_QUEUED) {
            slot_count(slot, REDLOCK_MASTER_TIMEOUT, RL_QUEUED_DETAIL,
                       strlen(RL_QUEUED_DETAIL));
            round->tally.timeout--; /* a timeout, but of the client's queue */
            round->tally.unsent++;
            if (round->kind != RL_ROUND_RELEASE)
                slot_withdraw(slot);
        } else if (slot->state == RL_SLOT_SENT) {
            /* Stays SENT: a late reply is still processed. */
            slot_count(slot, REDLOCK_MASTER_TIMEOUT, NULL, 0);
        }
    }
    round_evaluate(round);
    if (!round->decided && round->on_decided != NULL)
        round_arm_timer(round);
    rl_round_unref(round);
}

static void round_on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_client *client = ((rl_round *)w->data)->client;
    rl_client_enter(client);
    round_handle_timer(loop, w, revents);
    rl_client_leave(client);
}

/* The database the round's shared request is written for: the first
 * asked master's. */
static int round_db(const redlock_client *client, const bool *target)
{
    for (size_t i = 0; i < client->n; i++)
        if (target == NULL || target[i])
            return client->masters[i].node->db;
    return 0;
}

/* A request that names the master's database (a release's channel) is
 * written again for each master whose database differs from the round's.
 * Out of memory, the master gets the round's request: only its
 * announcement goes to the wrong channel, and waiters retry on their
 * timer. */
static void slot_write_own(rl_slot *slot, rl_command *cmd, int shared_db)
{
    int db = slot->master->node->db;
    if (!rl_command_db_dependent(cmd) || db == shared_db)
        return;
    rl_command_set_db(cmd, db);
    size_t len = rl_command_size(cmd);
    slot->own_cmd = malloc(len + 1);
    if (slot->own_cmd == NULL)
        return;
    rl_command_write(cmd, slot->own_cmd);
    slot->own_len = len;
}

/* The room cmd's script-free forms take after it, with the value their
 * replies are compared with; 0 without any. Only in database 0: a
 * release's announcement names its database's channel. */
static size_t round_plain_room(const rl_command *cmd, int db)
{
    if (cmd->plain == NULL || cmd->plain->forms == 0 || cmd->plain->value == NULL || db != 0)
        return 0;
    size_t room = 0;
    size_t part_len[RL_PLAIN_PARTS];
    for (size_t i = 0; i < cmd->plain->forms; i++)
        room += rl_plain_form_size(&cmd->plain->form[i], part_len) + 1;
    room += rl_plain_form_size(&cmd->plain->follow_up, part_len) + 1;
    return room + cmd->plain->value_len + 1;
}

/* Form f written at out (and a NUL), described in *req; returns the end. */
static char *plain_request_write(rl_plain_request *req, const rl_plain_form *f, char *out)
{
    req->cmd = out;
    req->len = rl_plain_form_size(f, req->part_len);
    req->parts = f->parts;
    req->caps = f->caps;
    rl_plain_form_write(f, out);
    return out + req->len + 1;
}

/* The round's script-free forms (command.h), written at out, after its
 * request, then their follow-up, and the value their replies are compared
 * with, after them. */
static void round_write_plain(rl_round *round, const rl_plain *plain, char *out)
{
    for (size_t i = 0; i < plain->forms; i++)
        out = plain_request_write(&round->plain[i], &plain->form[i], out);
    round->plain_forms = plain->forms;
    out = plain_request_write(&round->follow_up, &plain->follow_up, out);
    round->plain_value = out;
    memcpy(round->plain_value, plain->value, plain->value_len);
    round->plain_value_len = plain->value_len;
}

/* The master may send slot's request without its script, where it has
 * the commands: not a request of its own (another database's). */
static void slot_offer_plain(rl_slot *slot)
{
    const rl_round *round = slot->round;
    if (slot->own_cmd != NULL || round->plain_forms == 0)
        return;
    slot->req.plain = round->plain;
    slot->req.plain_forms = round->plain_forms;
}

static rl_round *round_start(redlock_client *client, rl_round_kind kind, const rl_command *request,
                             const bool *target, rl_round_decided_fn on_decided, void *owner,
                             rl_owed_release *owed)
{
    size_t n = client->n;
    rl_command copy = *request;
    rl_command *cmd = &copy;
    int db = round_db(client, target);
    rl_command_set_db(cmd, db);
    size_t cmd_len = rl_command_size(cmd);
    size_t plain_room = round_plain_room(cmd, db);
    /* One allocation: the round, its slots and its request (+ 1: its NUL),
     * then its script-free forms and the value their replies are compared
     * with. */
    rl_round *round =
        calloc(1, sizeof(*round) + n * sizeof(rl_slot) + cmd_len + 1 + plain_room);
    if (round == NULL) {
        free(owed);
        return NULL;
    }
    rl_client_ref(client);
    round->owed = owed;
    round->client = client;
    round->kind = kind;
    round->script = cmd->script;
    round->urgent_by_us = cmd->urgent_by_us;
    if (kind == RL_ROUND_ACQUIRE || kind == RL_ROUND_EXTEND)
        round->holders = rl_holders_new(); /* NULL when out of memory: none known */
    round->refs = 1;
    round->cmd = (char *)&round->slots[n];
    round->cmd_len = cmd_len;
    rl_command_write(cmd, round->cmd);
    if (plain_room > 0)
        round_write_plain(round, cmd->plain, round->cmd + cmd_len + 1);
    round->on_decided = on_decided;
    round->owner = owner;
    round->n = n;
    round->tally.quorum = client->quorum;
    round->tally.need_fence = cmd->script == &rl_fenced_acquire_script;
    ev_timer_init(&round->timer, round_on_timer, 0., 0.);
    ev_set_priority(&round->timer, RL_DEADLINE_PRIORITY);
    round->timer.data = round;

    rl_request_class queue_class = kind == RL_ROUND_EXTEND    ? RL_REQUEST_EXTENSION
                                   : kind == RL_ROUND_RELEASE ? RL_REQUEST_RELEASE
                                                              : RL_REQUEST_OTHER;
    const rl_script *batch_script = rl_round_batch_script(kind, cmd->script);
    for (size_t i = 0; i < n; i++) {
        rl_slot *slot = &round->slots[i];
        slot->round = round;
        slot->master = &client->masters[i];
        slot->latency_us = -1;
        slot->pttl_ms = -2;
        slot->counter = -1;
        slot->req.ops = &slot_ops;
        slot->req.batch_script = batch_script;
        slot->req.queue_class = queue_class;
        slot->req.sets_lock = kind == RL_ROUND_ACQUIRE;
        slot->req.scripted = cmd->script != NULL;
        slot->req.lock_tag = cmd->lock_tag;
        slot->req.urgent_by_us = cmd->urgent_by_us;
        rl_list_init(&slot->req.link);
        if (target == NULL || target[i]) {
            round->tally.pending++;
            slot_write_own(slot, cmd, db);
        }
        slot_set_command(slot);
        slot_offer_plain(slot);
    }

    /* Elapsed time, and so validity, counts from before the first send. */
    round->t0_us = rl_now_us();
    round_note_suspects(round, target);
    for (size_t i = 0; i < n; i++) {
        rl_slot *slot = &round->slots[i];
        if (target != NULL && !target[i])
            continue; /* UNUSED */
        slot->sent_us = round->t0_us;
        slot->deadline_us = rl_master_reply_deadline(slot->master, round->t0_us);
        round_ref(round); /* held until hiredis or the queue gives the slot back */
        int outcome = slot_submit(slot);
        if (outcome >= 0) {
            const char *why = rl_master_failure(slot->master, outcome);
            slot_count(slot, outcome, why, strlen(why));
            slot_finish(slot, RL_SLOT_DONE);
        }
    }
    if (on_decided != NULL)
        round_arm_timer(round);
    return round;
}

rl_round *rl_round_start(redlock_client *client, rl_round_kind kind, const rl_command *cmd,
                         const bool *target, rl_round_decided_fn on_decided, void *owner)
{
    return round_start(client, kind, cmd, target, on_decided, owner, NULL);
}

rl_round *rl_round_start_owing(redlock_client *client, const rl_command *cmd, const bool *target,
                               rl_owed_release *owed)
{
    return round_start(client, RL_ROUND_RELEASE, cmd, target, NULL, NULL, owed);
}

void rl_round_detach(rl_round *round, bool keep_ref)
{
    /* An owner leaving before the decision (canceled) needs nothing that has
     * not gone out yet. Decided and ownerless rounds keep their queued
     * requests, and so does a release: it may be queued behind a request of
     * ours it must undo, which goes out anyway. */
    bool abandoned = round->on_decided != NULL && !round->decided;
    round->on_decided = NULL;
    round->owner = NULL;
    ev_timer_stop(round->client->loop, &round->timer);
    if (abandoned && round->kind != RL_ROUND_RELEASE)
        rl_round_withdraw_unsent(round); /* the owner's reference keeps the round */
    if (!keep_ref)
        rl_round_unref(round);
}

/* What a reply means for this slot's request, keeping what an inspect
 * reply says. Returns RL_REPLY_NOSCRIPT for a script the master lacks. */
static int classify_reply(rl_slot *slot, const redisReply *reply, const char **detail,
                          size_t *detail_len)
{
    rl_reply_meaning meaning;
    const rl_round *round = slot->round;
    if (slot->req.sent_plain != NULL && slot->following_up)
        rl_reply_read_follow_up(round->kind, reply, &meaning);
    else if (slot->req.sent_plain != NULL)
        rl_reply_read_plain(round->kind, slot->req.parts, slot->req.sent_plain->parts - 1, reply,
                            round->plain_value, round->plain_value_len, &meaning);
    else
        rl_reply_read(round->kind, reply, &meaning);
    *detail = meaning.detail;
    *detail_len = meaning.detail_len;
    if (slot->round->kind == RL_ROUND_INSPECT && meaning.outcome == REDLOCK_MASTER_OK) {
        if (meaning.value != NULL) {
            slot->value = malloc(meaning.value_len + 1); /* NULL if out of memory: shown absent */
            if (slot->value != NULL) {
                memcpy(slot->value, meaning.value, meaning.value_len);
                slot->value[meaning.value_len] = '\0';
                slot->value_len = meaning.value_len;
            }
        }
        slot->pttl_ms = meaning.pttl_ms;
    }
    slot->listeners = meaning.listeners;
    slot->counter = meaning.counter;
    if (meaning.run_id != NULL) {
        memcpy(slot->run_id, meaning.run_id, RL_RUN_ID_SIZE - 1);
        slot->run_id[RL_RUN_ID_SIZE - 1] = '\0';
    }
    return meaning.outcome;
}

/* Resend slot with EVAL after NOSCRIPT. Returns -1 when resent, else the
 * outcome to record. */
static int slot_resend_with_eval(rl_slot *slot)
{
    rl_round *round = slot->round;
    if (slot->use_eval || round->script == NULL)
        return REDLOCK_MASTER_ERROR; /* EVAL, SET or PING cannot answer NOSCRIPT */
    if (round->withdrawn)
        return REDLOCK_MASTER_ERROR; /* not run, and no longer wanted */
    /* Decided without this master: its vote is no longer needed, and what
     * followed the decision (the lock's release, a cleanup) may already be
     * queued behind it, which an acquire's EVAL would then undo. A release
     * is always sent again: deleting our value is what anything after it
     * wants. So is an extension: it changes only a key that still holds
     * our value, so it undoes nothing, and it keeps the lock's margin on
     * this master too (as a late reply to any other extension does). */
    if (round->decided && round->kind != RL_ROUND_RELEASE && round->kind != RL_ROUND_EXTEND)
        return REDLOCK_MASTER_ERROR;
    if (slot->own_cmd != NULL) {
        long len = rl_evalsha_to_eval(slot->own_cmd, slot->own_len, round->script,
                                      &slot->own_eval);
        if (len < 0)
            return REDLOCK_MASTER_ERROR;
        slot->own_eval_len = (size_t)len;
    } else if (round->eval_cmd == NULL) {
        long len = rl_evalsha_to_eval(round->cmd, round->cmd_len, round->script,
                                      &round->eval_cmd);
        if (len < 0)
            return REDLOCK_MASTER_ERROR;
        round->eval_len = (size_t)len;
    }
    slot->use_eval = true;
    slot->req.batch_script = NULL; /* EVAL goes alone */
    slot_set_command(slot);
    return slot_submit(slot);
}

/* Send slot's request again with its script, after a script-free reply
 * that cannot tell what the script would (wire/reply.h): the plain form
 * is not offered to the master again. Returns -1 when resent, else the
 * outcome to record. Only an extension or a release has a plain form:
 * either changes only a key holding our value, so it undoes nothing even
 * after the decision. */
static int slot_resend_with_script(rl_slot *slot)
{
    if (slot->round->withdrawn)
        return REDLOCK_MASTER_ERROR; /* no longer wanted */
    slot->req.plain = NULL; /* req.cmd, the script's form, was there all along */
    slot->req.plain_forms = 0;
    slot->req.sent_plain = NULL;
    slot->following_up = false;
    return slot_submit(slot);
}

/* Send slot's plain form's follow-up (command.h) to its master, after a
 * reply that asks for it; it needs no command beyond every server's.
 * Returns -1 when sent, else the outcome to record. A release's: it
 * changes nothing. */
static int slot_follow_up(rl_slot *slot)
{
    rl_round *round = slot->round;
    if (round->withdrawn || round->follow_up.parts == 0 || slot->following_up)
        return REDLOCK_MASTER_ERROR;
    slot->following_up = true;
    slot->req.plain = &round->follow_up;
    slot->req.plain_forms = 1;
    return slot_submit(slot);
}

/* A fenced acquire's OK from a master whose counter is not in use in its
 * run: have it seeded, whether the reply came in time or late (a master
 * slower than the others would else never be). */
static void slot_notice_unfenced(const rl_slot *slot, int outcome)
{
    const rl_round *round = slot->round;
    if (round->script == &rl_fenced_acquire_script && outcome == REDLOCK_MASTER_OK &&
        slot->counter < 0 && slot->run_id[0] != '\0')
        round->client->hooks->fence_seed_notice(round->client, (size_t)(slot - round->slots),
                                                slot->run_id);
}

/* A reply for a slot counted at its deadline: the result shows what the
 * master said, marked late; the tally keeps the deadline's count. */
static void slot_record_late(rl_slot *slot, int outcome, const char *detail, size_t detail_len)
{
    const redlock_client *client = slot->round->client;
    if (outcome == REDLOCK_MASTER_OK) /* it holds the keys all the same */
        rl_holders_add(slot->round->holders, (size_t)(slot - slot->round->slots));
    rl_stats_late_reply(&slot->master->stats, slot->latency_us);
    rl_log(&client->log, REDLOCK_LOG_DEBUG, "master %s: late reply after %s: %s",
           slot->master->node->name, redlock_master_outcome_name(slot->outcome),
           redlock_master_outcome_name(outcome));
    char late[RL_DETAIL_MAX + 1];
    int len = detail != NULL ? snprintf(late, sizeof(late), "%s: %.*s", RL_LATE_DETAIL,
                                        (int)(detail_len > RL_DETAIL_MAX ? RL_DETAIL_MAX
                                                                         : detail_len),
                                        detail)
                             : snprintf(late, sizeof(late), "%s", RL_LATE_DETAIL);
    slot_describe(slot, outcome, late, len < 0 ? 0 : (size_t)len);
}

/* A slot's answer is in: counted (or recorded as late), the slot ended as
 * FINAL, and the round decided if it can be. The round may be freed after. */
static void slot_settle(rl_slot *slot, int outcome, rl_slot_state final, const char *detail,
                        size_t detail_len)
{
    rl_round *round = slot->round;
    round_ref(round);
    if (final == RL_SLOT_LATE)
        slot_record_late(slot, outcome, detail, detail_len);
    else
        slot_count(slot, outcome, detail, detail_len); /* lost after its deadline: stays TIMEOUT */
    slot_finish(slot, final);
    /* The analyzer loses count of the reference taken above. */
    round_evaluate(round); // NOLINT(clang-analyzer-unix.Malloc)
    rl_round_unref(round);
}

/* A reply that asks for more (reply.h) has slot's request sent again:
 * its follow-up, its script (no more plain forms there when the master
 * refused the command), or EVAL. Returns -1 when sent again, else the
 * outcome to record. */
static int slot_send_again(rl_slot *slot, int outcome)
{
    if (outcome == RL_REPLY_FOLLOW_UP)
        return slot_follow_up(slot);
    if (outcome == RL_REPLY_PLAIN_REFUSED) {
        /* A follow-up refused is not the form's command refused. */
        if (!slot->following_up)
            rl_master_forgo_caps(slot->master, slot->req.sent_plain->caps);
        outcome = RL_REPLY_ASK_SCRIPT;
    }
    if (outcome == RL_REPLY_ASK_SCRIPT)
        return slot_resend_with_script(slot);
    if (outcome == RL_REPLY_NOSCRIPT)
        return slot_resend_with_eval(slot);
    return outcome;
}

static void slot_on_reply(rl_request *req, const redisReply *reply, const char *lost_reason)
{
    rl_slot *slot = rl_slot_of(req);
    rl_round *round = slot->round;
    const char *detail = NULL;
    size_t detail_len = 0;
    int outcome;
    rl_slot_state final = RL_SLOT_DONE;
    if (reply == NULL) {
        outcome = REDLOCK_MASTER_NOT_CONNECTED;
        detail = lost_reason ? lost_reason : "connection lost";
        detail_len = strlen(detail);
        final = RL_SLOT_LOST;
    } else {
        outcome = slot_send_again(slot, classify_reply(slot, reply, &detail, &detail_len));
        if (outcome < 0)
            return; /* sent again: the slot stays SENT */
        slot->latency_us = rl_now_us() - slot->sent_us;
        if (slot->counted)
            final = RL_SLOT_LATE;
        slot_notice_unfenced(slot, outcome);
        if (final == RL_SLOT_DONE && outcome == REDLOCK_MASTER_OK && round_counts_clock(round) &&
            rl_clock_probe_await(slot->master, &slot->req, slot->sent_us)) {
            slot_describe(slot, outcome, detail, detail_len);
            slot->awaiting_clock = true;
            return; /* counted by slot_on_clock_checked() */
        }
    }
    slot_settle(slot, outcome, final, detail, detail_len);
}

static void slot_on_clock_checked(rl_request *req)
{
    rl_slot *slot = rl_slot_of(req);
    slot->awaiting_clock = false;
    char *detail = slot->detail; /* slot_count() replaces it */
    slot->detail = NULL;
    slot_settle(slot, REDLOCK_MASTER_OK, slot->counted ? RL_SLOT_LATE : RL_SLOT_DONE, detail,
                detail != NULL ? strlen(detail) : 0);
    free(detail);
}

static void slot_on_failure(rl_request *req, int outcome, const char *detail)
{
    slot_settle(rl_slot_of(req), outcome, RL_SLOT_DONE, detail, detail ? strlen(detail) : 0);
}

static void slot_on_sent(rl_request *req, int64_t now_us, int64_t deadline_us)
{
    rl_slot *slot = rl_slot_of(req);
    rl_round *round = slot->round;
    bool sooner = deadline_us < slot->deadline_us;
    slot->state = RL_SLOT_SENT;
    slot->sent_us = now_us;
    if (slot->counted)
        return; /* counted at its deadline while it waited: a reply is late */
    slot->deadline_us = deadline_us;
    /* The round's timer may be armed for the deadline it waited with. */
    if (sooner && !round->decided && round->on_decided != NULL)
        round_arm_timer(round);
}
