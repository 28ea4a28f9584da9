/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One master's clock probe (docs/safety.md, "Masters' clocks"): the probe
 * key this client keeps there, the PTTL samples it reads, and what they
 * prove about the master's expiry clock (clock_check.h).
 *
 *            connection ready             SET reply (OK: anchored)
 *   DOWN ------------------------> SETTING ------------------------> SAMPLING
 *    ^                                ^                                 |
 *    |                                +--- re-anchor (half life, FAST, -+
 *    |                                     restart, quarantine over)    |
 *    +---------------- connection lost, from any state -----------------+
 *
 * - The probe is "redlock:clock:<client id>", value the client id, PX
 *   RL_PROBE_PX_MS. The handshake asks SET ... NX then PTTL, pipelined
 *   with the rest: no round trip of its own.
 * - Its life is short: set again at half of it (every 5 s or so) while the
 *   client is connected, it outlives a client that could not delete it
 *   (killed, or its connection lost before the DEL went out) by
 *   RL_PROBE_PX_MS at most. The
 *   check needs no more: a pair of reads proves a rate r fast once
 *   (r - 1/(1 - drift_factor)) * baseline exceeds a millisecond or two, and
 *   the baseline (from the anchor) reaches half the life: 5 s proves any
 *   rate above 1.0104 with the default 1 % allowance (1.0101). A probe that is gone when the
 *   run_id is the same is itself a verdict (FAST: clock_check.h), unless
 *   it was last anchored so long ago that it may simply have expired (the
 *   client stopped, or its link down, for most of its life).
 * - A sample (PTTL) goes out behind a request of ours to that master, at
 *   most one in flight and one per RL_PROBE_MIN_GAP_US, so sampling costs
 *   no round trip; a timer samples an idle master every probe period.
 * - An acquire's or extension's OK with a sample behind it is counted once
 *   that sample is in (the same TCP read, as a rule): the verdict it is
 *   counted by includes a sample taken after the request went out, or one
 *   at most RL_PROBE_MIN_GAP_US before.
 * - Each sample's instants are taken when the request is handed to hiredis
 *   (before it is written: the interval only widens, which is safe) and
 *   when its reply is read.
 * - The client being freed deletes the probe with its last requests, or
 *   behind the handshake that set it (a master stopped then runs both
 *   when it resumes).
 */
#ifndef REDLOCK_CLOCK_PROBE_H
#define REDLOCK_CLOCK_PROBE_H

#include "master/clock_check.h"
#include "master/request.h"
#include "util/list.h"

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>

#define RL_PROBE_PX_MS INT64_C(10000)
#define RL_PROBE_MIN_GAP_US INT64_C(5000)
#define RL_PROBE_IDLE_US INT64_C(1000000)

struct rl_master;
struct redlock_client;
struct redisAsyncContext;

typedef enum rl_probe_state {
    RL_PROBE_DOWN,     /* no connection, or the check is off */
    RL_PROBE_SETTING,  /* the probe's SET is in flight */
    RL_PROBE_SAMPLING, /* anchored: samples go out */
} rl_probe_state;

typedef struct rl_clock_probe {
    rl_probe_state state;
    rl_clock clock;
    bool sample_in_flight;
    bool set_nx;               /* the SET in flight is the handshake's (NX) */
    int64_t last_sample_us;    /* when the last sample went out */
    int64_t set_sent_us;       /* when the SET went out */
    ev_timer timer;            /* SAMPLING: samples an idle master */
    rl_link awaiting;          /* requests whose OK replies are counted once the
                                  sample in flight is in (rl_request.link) */
    /* The settings (clock_check, clock_warmup_ms, clock_probe_ms,
     * clock_quarantine_ms) */
    int mode;                  /* REDLOCK_CLOCK_CHECK_* */
    int64_t warmup_us, probe_us, quarantine_us; /* probe_us 0: ttl/10 */
    int64_t px_ms;             /* the probe's life: RL_PROBE_PX_MS but in tests */
} rl_clock_probe;

void rl_clock_probe_init(struct rl_master *m);
/* The handshake: SET ... NX and PTTL pipelined behind it (the check on). */
void rl_clock_probe_on_handshake(struct rl_master *m);
/* A request of ours just went to hiredis: a sample behind it, if due. */
void rl_clock_probe_after_send(struct rl_master *m);
/* An OK reply to req, sent at sent_us: with clock_check enforce and a
 * sample sent behind it on the same connection, req waits for that
 * sample's verdict, and its on_clock_checked is told when it is in (true);
 * false: count it now. */
bool rl_clock_probe_await(struct rl_master *m, rl_request *req, int64_t sent_us);
/* Tell the requests awaiting the sample (it is in, or the connection is
 * gone). May run user code: the caller holds the client. */
void rl_clock_probe_flush(struct rl_master *m);
/* The client holds a lock where it held none: each master's next sample
 * comes a sampling period (clock_probe_ms) after its last, not an idle
 * one. */
void rl_clock_probes_on_hold(struct redlock_client *client);
/* The connection is gone: DOWN, the timer stopped. */
void rl_clock_probe_on_lost(struct rl_master *m);
/* The warm-up's view of a master: nothing to wait for (not connected, or
 * no check), checked (its clock trusted or proven fast), still being
 * checked, or still connecting. */
typedef enum rl_probe_warmth {
    RL_PROBE_NOTHING_TO_WAIT,
    RL_PROBE_WARM,
    RL_PROBE_WARMING,
    RL_PROBE_CONNECTING,
} rl_probe_warmth;

rl_probe_warmth rl_clock_probe_warmth(const struct rl_master *m);
/* What the results show of its clock (redlock_master_result). */
void rl_clock_probe_report(const struct rl_master *m, int *state, bool *slow, double *rate_lo,
                           double *rate_hi);
/* Whether an OK from this master is left out of a quorum: proven fast,
 * with clock_check enforce. */
bool rl_clock_probe_excludes(const struct rl_master *m);
/* The client is freed: DEL of the probe with the last requests (behind
 * the handshake when that is still under way), its reply to
 * on_deleted(ac, reply, m), or to none (NULL); whether it was sent. DOWN
 * after it. */
bool rl_clock_probe_on_close(struct rl_master *m,
                             void (*on_deleted)(struct redisAsyncContext *, void *, void *));

#endif
