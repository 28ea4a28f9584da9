/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What one master's expiry clock is proven to do (docs/safety.md,
 * "Masters' clocks"): pure arithmetic on samples, instants in microseconds
 * on CLOCK_MONOTONIC, so it can be tested without a master or a clock.
 *
 * A master expires keys by its wall clock. The client keeps a probe key
 * there, set with PX px, and reads its PTTL. A sample is one such read:
 * the request written at sent_us, its reply read at recv_us, and
 * advance_ms = px - PTTL, how far the master's expiry clock moved since the
 * probe was set (the set itself is the anchor, advance 0). The master acted
 * somewhere in [sent, recv] and its milliseconds are truncated, so for
 * samples i before j:
 *
 *   ours     in [sent_j - recv_i, recv_j - sent_i]
 *   master's in (adv_j - adv_i - 1 ms, adv_j - adv_i + 1 ms)
 *
 * FAST when even the least the master's clock moved is more than the most
 * ours did, stretched by the drift allowance:
 *   adv_j - adv_i - 1 ms > (recv_j - sent_i) / (1 - drift_factor).
 * A clock within the allowance can never meet it, whatever the delays:
 * no false verdict by construction; delays only make a proof come later.
 * SLOW (a flag, reported only: keys then live longer) when
 *   adv_j - adv_i + 1 ms < (sent_j - recv_i) * (1 - drift_factor).
 * A forward step is a FAST pair over a short baseline, a backward one a
 * SLOW pair. Each new sample is paired with the anchor (the widest
 * baseline: precision) and with the last RL_CLOCK_RECENT samples (a change
 * after a long honest history).
 *
 *              anchor                          a sample, the anchor at
 *   UNKNOWN ---------> UNKNOWN, anchored --------least warm-up old-------> TRUSTED
 *      ^                      |                                           |
 *      |                      +---- a FAST pair, or the probe gone -------+
 *      |                      |     too soon with the same run_id         |
 *      |                      v                                           v
 *      +---- quarantine over --------------- FAST <-----------------------+
 *
 * - FAST drops the anchor too: a clock still fast is proven fast again
 *   from the next anchor and stays quarantined; a step, proven once, is
 *   not held against the master for ever.
 * - A new run_id (the master restarted) drops the anchor with no verdict:
 *   UNKNOWN, to be anchored again (FAST stays until its quarantine ends).
 * - The probe gone on the same run (PTTL -2) is FAST when it is a pair
 *   like any other, the master's advance at least px: gone sooner than
 *   our clock lets it expire (a step beyond its life, an eviction and a
 *   flush are all fatal for lock keys too). Gone once ours moved about px
 *   since the anchor (the client stopped, or its link down, that long),
 *   it may simply have expired: no evidence, set again.
 * - The anchor is set again when the probe's PTTL falls under half of px,
 *   or the probe lost its expiry (PTTL -1, someone changed it).
 * - Every state but FAST counts for the quorum (UNKNOWN is a master with
 *   no evidence either way, as before any check; the warm-up keeps the
 *   first acquire until each master had its chance).
 */
#ifndef REDLOCK_CLOCK_CHECK_H
#define REDLOCK_CLOCK_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Samples kept besides the anchor, each paired with every new one. */
#define RL_CLOCK_RECENT 64
#define RL_CLOCK_RUN_ID_SIZE 41 /* 40 hex digits and a NUL */

typedef enum rl_clock_state {
    RL_CLOCK_UNKNOWN, /* no anchor, or none old enough yet */
    RL_CLOCK_TRUSTED, /* anchored long enough, nothing proven against it */
    RL_CLOCK_FAST,    /* proven fast: not counted until fast_until_us */
} rl_clock_state;

typedef struct rl_clock_sample {
    int64_t sent_us, recv_us;
    int64_t advance_ms;
} rl_clock_sample;

/* What a call changed: a set of these. */
enum {
    RL_CLOCK_EV_TRUSTED = 1, /* UNKNOWN -> TRUSTED */
    RL_CLOCK_EV_FAST = 2,    /* -> FAST (the proof is in c->proof) */
    RL_CLOCK_EV_SLOW = 4,    /* the SLOW flag was set */
    RL_CLOCK_EV_REANCHOR = 8, /* set the probe again (rl_clock_anchor) */
    RL_CLOCK_EV_RESTART = 16, /* a new run_id: history dropped */
    RL_CLOCK_EV_READMIT = 32, /* FAST's quarantine is over: UNKNOWN */
};

/* Why a master was found fast, for the log and the reports. */
typedef struct rl_clock_proof {
    bool vanished;          /* the probe was gone on the same run */
    int64_t master_ms;      /* its clock moved at least this (adv_j - adv_i - 1) */
    int64_t ours_us;        /* while ours moved at most this (recv_j - sent_i) */
} rl_clock_proof;

typedef struct rl_clock {
    rl_clock_state state;
    bool slow;                      /* a SLOW pair since the anchor */
    bool anchored;
    double allowance;               /* 1 - drift_factor */
    int64_t px_ms;                  /* the probe's life when set */
    rl_clock_sample anchor;
    rl_clock_sample recent[RL_CLOCK_RECENT]; /* a ring, oldest at next once full */
    size_t nrecent, next;
    char run_id[RL_CLOCK_RUN_ID_SIZE]; /* the anchor's run; "" unknown */
    int64_t fast_until_us;
    rl_clock_proof proof;
    /* The rate of its clock to ours that the anchor and the last sample
     * prove: within [rate_lo, rate_hi]; rate_hi < 0: no upper bound yet
     * (both 0 and -1 before a sample). */
    double rate_lo, rate_hi;
} rl_clock;

void rl_clock_init(rl_clock *c, double drift_factor);

/* The probe was set with PX px_ms by a request written at sent_us and
 * answered at recv_us, on the master running run_id (NULL or "": not
 * known): the new anchor, the samples of the old one dropped. */
void rl_clock_anchor(rl_clock *c, int64_t sent_us, int64_t recv_us, int64_t px_ms,
                     const char *run_id);

/* A PTTL of the probe, pttl_ms as the master answered it (-2 gone, -1 no
 * expiry), read by a request written at sent_us and answered at recv_us,
 * on the master running run_id (NULL or "": the same as the anchor's).
 * warmup_us: how old the anchor must be for TRUSTED; quarantine_us: how
 * long FAST lasts. Returns the RL_CLOCK_EV_ set. */
unsigned rl_clock_sample_add(rl_clock *c, int64_t sent_us, int64_t recv_us, int64_t pttl_ms,
                             const char *run_id, int64_t warmup_us, int64_t quarantine_us);

/* At now_us: FAST's quarantine over makes it UNKNOWN and unanchored
 * (RL_CLOCK_EV_READMIT | RL_CLOCK_EV_REANCHOR), else nothing (0). */
unsigned rl_clock_tick(rl_clock *c, int64_t now_us);

/* Whether an OK from this master counts toward a quorum. */
bool rl_clock_counts(const rl_clock *c);

/* The pair tests, exposed for the tests: whether samples i then j prove
 * the master's clock fast (slow) beyond allowance = 1 - drift_factor. */
bool rl_clock_pair_fast(const rl_clock_sample *i, const rl_clock_sample *j, double allowance);
bool rl_clock_pair_slow(const rl_clock_sample *i, const rl_clock_sample *j, double allowance);

#endif
