/* SPDX-License-Identifier: BSD-3-Clause */
/* The clock check of one master: the pair tests never flag a clock within
 * the drift allowance, however the round trips fall, and flag rates,
 * steps and a vanished probe at the sample that proves them. Simulated
 * masters, instants in microseconds. */
#include "clock_check.h"

#include <criterion/criterion.h>

#define MS INT64_C(1000)
#define S INT64_C(1000000)
#define PX_MS INT64_C(600000)
#define DRIFT 0.01
#define WARMUP (20 * MS)
#define QUARANTINE (60 * S)

/* A master's wall clock, in us: offset + rate * our time, plus any steps. */
typedef struct sim_master {
    double offset_us, rate;
    int64_t step_us;
    int64_t set_ms; /* its milliseconds when the probe was set */
} sim_master;

static uint64_t rng_state = 0x9e3779b97f4a7c15U;

static uint64_t next_random(void)
{
    uint64_t x = rng_state; /* xorshift64: reproducible */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* Uniform in [lo, hi]. */
static double uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(next_random() >> 11) / (double)(UINT64_C(1) << 53);
}

static int64_t master_ms(const sim_master *m, int64_t our_us)
{
    double ms = (m->offset_us + m->rate * (double)our_us + (double)m->step_us) / 1000.0;
    int64_t whole = (int64_t)ms; /* toward zero: down for the negative too */
    return (double)whole > ms ? whole - 1 : whole;
}

/* The master acts at some instant of [sent, recv]. */
static int64_t acted_at(int64_t sent, int64_t recv)
{
    return sent + (int64_t)uniform(0, (double)(recv - sent));
}

static void set_probe(rl_clock *c, sim_master *m, int64_t sent, int64_t recv, const char *run)
{
    m->set_ms = master_ms(m, acted_at(sent, recv));
    rl_clock_anchor(c, sent, recv, PX_MS, run);
}

/* PTTL of the probe as the master answers a request sent then. */
static int64_t pttl(const sim_master *m, int64_t sent, int64_t recv)
{
    return m->set_ms + PX_MS - master_ms(m, acted_at(sent, recv));
}

static unsigned sample(rl_clock *c, const sim_master *m, int64_t sent, int64_t recv)
{
    return rl_clock_sample_add(c, sent, recv, pttl(m, sent, recv), "run-a", WARMUP, QUARANTINE);
}

/* A sample as the pair tests see it: what the master's clock had advanced. */
static rl_clock_sample sim_sample(const sim_master *m, int64_t sent, int64_t recv)
{
    rl_clock_sample s = {sent, recv, PX_MS - pttl(m, sent, recv)};
    return s;
}

Test(clock_check, a_million_honest_pairs_are_never_flagged)
{
    const double allowance = 1.0 - DRIFT;
    for (int n = 0; n < 1000000; n++) {
        /* Any rate the validity formula allows, slow or fast; round trips
         * up to 100 ms; baselines from nothing to 10 s. */
        sim_master m = {.offset_us = uniform(0, 1e12), .rate = uniform(allowance, 1.0 / allowance)};
        int64_t s0 = (int64_t)uniform(0, 1e9);
        int64_t e0 = s0 + (int64_t)uniform(0, 100 * MS);
        m.set_ms = master_ms(&m, acted_at(s0, e0)) - (int64_t)uniform(0, 1000);
        int64_t s1 = e0 + (int64_t)uniform(0, 10 * S);
        int64_t e1 = s1 + (int64_t)uniform(0, 100 * MS);
        rl_clock_sample a = sim_sample(&m, s0, e0);
        rl_clock_sample b = sim_sample(&m, s1, e1);
        if (rl_clock_pair_fast(&a, &b, allowance) || rl_clock_pair_slow(&a, &b, allowance))
            cr_assert_fail("pair %d flagged: rate %.6f, ours [%lld, %lld] us, advance %lld ms (%s)", n,
                     m.rate, (long long)(s1 - e0), (long long)(e1 - s0),
                     (long long)(b.advance_ms - a.advance_ms),
                     rl_clock_pair_fast(&a, &b, allowance) ? "fast" : "slow");
    }
}

Test(clock_check, the_boundary_rate_itself_is_never_flagged)
{
    /* Exactly 1 / (1 - drift) with no delay at all: the least it moved is
     * still under what ours did, stretched. */
    const double allowance = 1.0 - DRIFT;
    for (int n = 0; n < 100000; n++) {
        sim_master m = {.offset_us = uniform(0, 1e9), .rate = 1.0 / allowance};
        int64_t t0 = (int64_t)uniform(0, 1e9);
        int64_t t1 = t0 + (int64_t)uniform(1, 60 * S);
        rl_clock_sample a = sim_sample(&m, t0, t0);
        rl_clock_sample b = sim_sample(&m, t1, t1);
        cr_assert(!rl_clock_pair_fast(&a, &b, allowance), "at %lld us", (long long)(t1 - t0));
    }
}

Test(clock_check, one_and_a_half_times_fast_is_flagged_at_the_first_5_ms_pair)
{
    for (int n = 0; n < 1000; n++) {
        rl_clock c;
        rl_clock_init(&c, DRIFT);
        sim_master m = {.offset_us = uniform(0, 1e9), .rate = 1.5};
        int64_t t = (int64_t)uniform(0, 1e9);
        int64_t rtt = (int64_t)uniform(50, 300); /* loopback */
        set_probe(&c, &m, t, t + rtt, "run-a");
        t += rtt + 5 * MS; /* 5 ms at least between the two */
        unsigned ev = sample(&c, &m, t, t + rtt);
        cr_assert(ev & RL_CLOCK_EV_FAST, "x1.5 not flagged after 5 ms (round trip %lld us)",
                  (long long)rtt);
        cr_assert_eq(c.state, RL_CLOCK_FAST);
        cr_assert(!rl_clock_counts(&c));
        cr_assert(!c.proof.vanished);
        cr_assert_gt((double)c.proof.master_ms * 1000 * (1 - DRIFT), (double)c.proof.ours_us);
        cr_assert(ev & RL_CLOCK_EV_REANCHOR, "a proven master is anchored afresh");
    }
}

/* Samples every 10 ms from the anchor until the master is proven fast or
 * until limit; the time it took, or -1. */
static int64_t time_to_fast(double rate, int64_t limit)
{
    rl_clock c;
    rl_clock_init(&c, DRIFT);
    sim_master m = {.offset_us = uniform(0, 1e9), .rate = rate};
    int64_t t0 = (int64_t)uniform(0, 1e9);
    set_probe(&c, &m, t0, t0 + 200, "run-a");
    for (int64_t t = t0 + 10 * MS; t - t0 <= limit; t += 10 * MS)
        if (sample(&c, &m, t, t + (int64_t)uniform(50, 500)) & RL_CLOCK_EV_FAST)
            return t - t0;
    return -1;
}

Test(clock_check, two_percent_fast_is_proven_within_half_a_second)
{
    for (int n = 0; n < 100; n++) {
        int64_t took = time_to_fast(1.02, 500 * MS);
        cr_assert(took > 0, "x1.02 not proven fast within 0.5 s of 10 ms samples");
    }
    /* Just inside the allowance: never, however long. */
    cr_assert_eq(time_to_fast(1.01, 120 * S), -1);
}

/* A master sampled every 10 ms for a second, honest: TRUSTED by then. */
static void honest_history(rl_clock *c, sim_master *m, int64_t *t)
{
    rl_clock_init(c, DRIFT);
    set_probe(c, m, *t, *t + 200, "run-a");
    for (int k = 0; k < 100; k++) {
        *t += 10 * MS;
        cr_assert_eq(sample(c, m, *t, *t + 300) & (RL_CLOCK_EV_FAST | RL_CLOCK_EV_SLOW), 0);
    }
    cr_assert_eq(c->state, RL_CLOCK_TRUSTED);
}

Test(clock_check, a_step_forward_is_flagged_at_the_next_sample)
{
    rl_clock c;
    sim_master m = {.offset_us = 123456789, .rate = 1.0};
    int64_t t = 5 * S;
    honest_history(&c, &m, &t);
    m.step_us = 5 * S;
    t += 10 * MS;
    unsigned ev = sample(&c, &m, t, t + 300);
    cr_assert(ev & RL_CLOCK_EV_FAST, "a +5 s step not flagged");
    cr_assert_eq(c.state, RL_CLOCK_FAST);
    cr_assert_geq(c.proof.master_ms, 5000);
}

Test(clock_check, a_step_back_sets_slow_and_keeps_counting_the_master)
{
    rl_clock c;
    sim_master m = {.offset_us = 987654321, .rate = 1.0};
    int64_t t = 5 * S;
    honest_history(&c, &m, &t);
    m.step_us = -5 * S;
    t += 10 * MS;
    unsigned ev = sample(&c, &m, t, t + 300);
    cr_assert(ev & RL_CLOCK_EV_SLOW, "a -5 s step not flagged slow");
    cr_assert(!(ev & RL_CLOCK_EV_FAST));
    cr_assert(c.slow);
    cr_assert(rl_clock_counts(&c));
    t += 10 * MS;
    cr_assert_eq(sample(&c, &m, t, t + 300) & RL_CLOCK_EV_SLOW, 0, "SLOW is reported once");
}

Test(clock_check, a_recent_change_is_caught_after_a_long_honest_history)
{
    /* 250 s honest, then x1.1: against the anchor alone the change would
     * take some 28 s to show; against the recent samples it does not. */
    rl_clock c;
    rl_clock_init(&c, DRIFT);
    sim_master m = {.offset_us = 5e8, .rate = 1.0};
    int64_t t = 5 * S;
    set_probe(&c, &m, t, t + 200, "run-a");
    t += 250 * S;
    for (int k = 0; k < RL_CLOCK_RECENT; k++, t += 10 * MS)
        cr_assert_eq(sample(&c, &m, t, t + 300) & RL_CLOCK_EV_FAST, 0);
    /* From now on 1.1 times as fast, continuing from where it is. */
    m.offset_us += (m.rate - 1.1) * (double)t;
    m.rate = 1.1;
    int64_t changed = t;
    while (!(sample(&c, &m, t, t + 300) & RL_CLOCK_EV_FAST)) {
        t += 10 * MS;
        cr_assert_lt(t - changed, 200 * MS, "x1.1 after 250 honest seconds not caught in 0.2 s");
    }
}

Test(clock_check, a_vanished_probe_is_fast_on_the_same_run_and_a_restart_on_a_new_one)
{
    rl_clock c;
    sim_master m = {.offset_us = 1e9, .rate = 1.0};
    int64_t t = 5 * S;
    honest_history(&c, &m, &t);
    t += 10 * MS;
    unsigned ev = rl_clock_sample_add(&c, t, t + 300, -2, "run-a", WARMUP, QUARANTINE);
    cr_assert(ev & RL_CLOCK_EV_FAST);
    cr_assert(c.proof.vanished);
    cr_assert(!rl_clock_counts(&c));

    honest_history(&c, &m, &t);
    t += 10 * MS;
    ev = rl_clock_sample_add(&c, t, t + 300, -2, "run-b", WARMUP, QUARANTINE);
    cr_assert_eq(ev & RL_CLOCK_EV_FAST, 0, "a restarted master's empty probe is no verdict");
    cr_assert(ev & RL_CLOCK_EV_RESTART);
    cr_assert(ev & RL_CLOCK_EV_REANCHOR);
    cr_assert_eq(c.state, RL_CLOCK_UNKNOWN);
    cr_assert(!c.anchored);
    cr_assert(rl_clock_counts(&c));
}

Test(clock_check, a_probe_gone_once_its_life_could_have_run_out_is_no_verdict)
{
    /* The client fell silent after its last sample (stopped, partitioned,
     * a paused VM): the probe expired on its own, by an honest clock. */
    rl_clock c;
    sim_master m = {.offset_us = 1e9, .rate = 1.0};
    int64_t t = 5 * S;
    honest_history(&c, &m, &t);
    int64_t anchored = c.anchor.sent_us;
    t = anchored + PX_MS * MS;
    unsigned ev = rl_clock_sample_add(&c, t, t + 300, -2, "run-a", WARMUP, QUARANTINE);
    cr_assert_eq(ev & RL_CLOCK_EV_FAST, 0, "a probe as old as its life judged fast");
    cr_assert(ev & RL_CLOCK_EV_REANCHOR);
    cr_assert(!c.anchored);
    cr_assert(rl_clock_counts(&c));

    /* Gone sooner than an honest clock allows: still a verdict. */
    honest_history(&c, &m, &t);
    anchored = c.anchor.sent_us;
    t = anchored + PX_MS * MS * 98 / 100;
    ev = rl_clock_sample_add(&c, t, t + 300, -2, "run-a", WARMUP, QUARANTINE);
    cr_assert(ev & RL_CLOCK_EV_FAST, "gone at 98 %% of its life");
    cr_assert(c.proof.vanished);
}

Test(clock_check, an_honest_probe_expired_on_its_own_is_never_a_verdict)
{
    const double allowance = 1.0 - DRIFT;
    for (int n = 0; n < 100000; n++) {
        /* Any rate the allowance covers; the probe read again from half
         * its life to twice it, round trips up to 100 ms. */
        sim_master m = {.offset_us = uniform(0, 1e12), .rate = uniform(allowance, 1.0 / allowance)};
        rl_clock c;
        rl_clock_init(&c, DRIFT);
        int64_t s0 = (int64_t)uniform(0, 1e9);
        int64_t e0 = s0 + (int64_t)uniform(0, 100 * MS);
        set_probe(&c, &m, s0, e0, "run-a");
        int64_t s1 = e0 + (int64_t)uniform(0.5 * (double)(PX_MS * MS), 2.0 * (double)(PX_MS * MS));
        int64_t e1 = s1 + (int64_t)uniform(0, 100 * MS);
        if (master_ms(&m, acted_at(s1, e1)) <= m.set_ms + PX_MS)
            continue; /* still there */
        unsigned ev = rl_clock_sample_add(&c, s1, e1, -2, "run-a", WARMUP, QUARANTINE);
        if (ev & RL_CLOCK_EV_FAST)
            cr_assert_fail("case %d: rate %.6f, read %lld ms after the anchor: judged fast", n,
                           m.rate, (long long)((e1 - s0) / MS));
    }
}

Test(clock_check, trusted_only_once_the_anchor_is_a_warm_up_old)
{
    rl_clock c;
    rl_clock_init(&c, DRIFT);
    sim_master m = {.offset_us = 1e9, .rate = 1.0};
    int64_t t = 5 * S;
    set_probe(&c, &m, t, t + 200, "run-a");
    int64_t anchored = t + 200;
    for (t += 5 * MS; t - anchored < WARMUP; t += 5 * MS) {
        cr_assert_eq(sample(&c, &m, t, t + 300) & RL_CLOCK_EV_TRUSTED, 0);
        cr_assert_eq(c.state, RL_CLOCK_UNKNOWN);
    }
    cr_assert(sample(&c, &m, t, t + 300) & RL_CLOCK_EV_TRUSTED);
    cr_assert_eq(c.state, RL_CLOCK_TRUSTED);
}

Test(clock_check, quarantine_ends_in_a_fresh_anchor_and_a_still_fast_clock_is_caught_again)
{
    rl_clock c;
    rl_clock_init(&c, DRIFT);
    sim_master m = {.offset_us = 1e9, .rate = 3.0};
    int64_t t = 5 * S;
    set_probe(&c, &m, t, t + 200, "run-a");
    t += 10 * MS;
    cr_assert(sample(&c, &m, t, t + 300) & RL_CLOCK_EV_FAST);
    int64_t until = c.fast_until_us;
    cr_assert_eq(rl_clock_tick(&c, until - 1), 0);
    cr_assert_eq(c.state, RL_CLOCK_FAST);
    cr_assert_eq(rl_clock_tick(&c, until), RL_CLOCK_EV_READMIT | RL_CLOCK_EV_REANCHOR);
    cr_assert_eq(c.state, RL_CLOCK_UNKNOWN);
    cr_assert(rl_clock_counts(&c));
    t = until;
    set_probe(&c, &m, t, t + 200, "run-a");
    t += 10 * MS;
    cr_assert(sample(&c, &m, t, t + 300) & RL_CLOCK_EV_FAST, "still x3: quarantined again");
    cr_assert_gt(c.fast_until_us, until);
}

Test(clock_check, the_probe_is_set_again_when_half_its_life_is_gone)
{
    rl_clock c;
    rl_clock_init(&c, DRIFT);
    sim_master m = {.offset_us = 1e9, .rate = 1.0};
    int64_t t = 5 * S;
    set_probe(&c, &m, t, t + 200, "run-a");
    t += PX_MS * MS / 2 - 10 * MS;
    cr_assert_eq(sample(&c, &m, t, t + 300) & RL_CLOCK_EV_REANCHOR, 0);
    t += 20 * MS;
    cr_assert(sample(&c, &m, t, t + 300) & RL_CLOCK_EV_REANCHOR);
    /* A probe with no expiry (changed by someone) is no evidence either way. */
    unsigned ev = rl_clock_sample_add(&c, t, t + 300, -1, "run-a", WARMUP, QUARANTINE);
    cr_assert(ev & RL_CLOCK_EV_REANCHOR);
    cr_assert_eq(ev & RL_CLOCK_EV_FAST, 0);
    cr_assert(!c.anchored);
}

Test(clock_check, the_rate_bounds_contain_the_true_rate)
{
    for (int n = 0; n < 10000; n++) {
        rl_clock c;
        rl_clock_init(&c, DRIFT);
        sim_master m = {.offset_us = uniform(0, 1e9), .rate = uniform(0.995, 1.005)};
        int64_t t = (int64_t)uniform(0, 1e9);
        set_probe(&c, &m, t, t + (int64_t)uniform(50, 5 * MS), "run-a");
        t += (int64_t)uniform(100 * MS, 100 * S);
        sample(&c, &m, t, t + (int64_t)uniform(50, 5 * MS));
        cr_assert_leq(c.rate_lo, m.rate, "rate %.6f under its lower bound %.6f", m.rate, c.rate_lo);
        cr_assert(c.rate_hi < 0 || c.rate_hi >= m.rate, "rate %.6f over its upper bound %.6f",
                  m.rate, c.rate_hi);
    }
}
