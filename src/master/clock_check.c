/* SPDX-License-Identifier: BSD-3-Clause */
/* What one master's expiry clock is proven to do: the pair tests and the
 * state they drive (clock_check.h has the arithmetic and the diagram). */
#include "master/clock_check.h"

#include <string.h>

void rl_clock_init(rl_clock *c, double drift_factor)
{
    memset(c, 0, sizeof(*c));
    c->state = RL_CLOCK_UNKNOWN;
    c->allowance = 1.0 - drift_factor;
    c->rate_hi = -1;
}

bool rl_clock_pair_fast(const rl_clock_sample *i, const rl_clock_sample *j, double allowance)
{
    /* The least the master's clock moved, in us, against the most ours did. */
    double master_us = (double)(j->advance_ms - i->advance_ms - 1) * 1000.0;
    double ours_us = (double)(j->recv_us - i->sent_us);
    return master_us * allowance > ours_us;
}

bool rl_clock_pair_slow(const rl_clock_sample *i, const rl_clock_sample *j, double allowance)
{
    /* The most the master's clock moved against the least ours did. */
    double master_us = (double)(j->advance_ms - i->advance_ms + 1) * 1000.0;
    double ours_us = (double)(j->sent_us - i->recv_us);
    return master_us < ours_us * allowance;
}

static bool same_run(const rl_clock *c, const char *run_id)
{
    return run_id == NULL || run_id[0] == '\0' || c->run_id[0] == '\0' ||
           strcmp(run_id, c->run_id) == 0;
}

/* Forget the anchor and its samples (not FAST: a quarantine runs on). */
static void drop_anchor(rl_clock *c)
{
    c->anchored = false;
    c->nrecent = c->next = 0;
    c->slow = false;
    c->rate_lo = 0;
    c->rate_hi = -1;
    if (c->state == RL_CLOCK_TRUSTED)
        c->state = RL_CLOCK_UNKNOWN;
}

void rl_clock_anchor(rl_clock *c, int64_t sent_us, int64_t recv_us, int64_t px_ms,
                     const char *run_id)
{
    drop_anchor(c);
    c->anchored = true;
    c->px_ms = px_ms;
    c->anchor = (rl_clock_sample){sent_us, recv_us, 0};
    size_t n = 0;
    if (run_id != NULL)
        for (; n + 1 < sizeof(c->run_id) && run_id[n] != '\0'; n++)
            c->run_id[n] = run_id[n];
    c->run_id[n] = '\0';
}

/* Proven fast: quarantined from now (again, if it was), and anchored
 * afresh, so that a step proven once is not proven again for ever: only a
 * clock still fast keeps it quarantined. */
static unsigned turn_fast(rl_clock *c, rl_clock_proof proof, int64_t now_us, int64_t quarantine_us)
{
    unsigned ev = c->state == RL_CLOCK_FAST ? 0U : (unsigned)RL_CLOCK_EV_FAST;
    c->state = RL_CLOCK_FAST;
    c->proof = proof;
    c->fast_until_us = now_us + quarantine_us;
    drop_anchor(c);
    return ev | RL_CLOCK_EV_REANCHOR;
}

/* The bounds on the rate the anchor and s prove. */
static void bound_rate(rl_clock *c, const rl_clock_sample *s)
{
    double most_ours = (double)(s->recv_us - c->anchor.sent_us) / 1000.0;
    double least_ours = (double)(s->sent_us - c->anchor.recv_us) / 1000.0;
    double least_master = (double)(s->advance_ms - 1);
    c->rate_lo = most_ours > 0 && least_master > 0 ? least_master / most_ours : 0;
    c->rate_hi = least_ours > 0 ? (double)(s->advance_ms + 1) / least_ours : -1;
}

/* Whether a probe gone, read by a request written at sent_us and answered
 * at recv_us, proves the clock fast: the master's clock moved at least the
 * probe's life since it was set, a pair test with the anchor (or a recent
 * sample) like any other. */
static bool vanished_fast(const rl_clock *c, int64_t sent_us, int64_t recv_us)
{
    rl_clock_sample gone = {sent_us, recv_us, c->px_ms};
    if (rl_clock_pair_fast(&c->anchor, &gone, c->allowance))
        return true;
    for (size_t k = 0; k < c->nrecent; k++)
        if (rl_clock_pair_fast(&c->recent[k], &gone, c->allowance))
            return true;
    return false;
}

unsigned rl_clock_sample_add(rl_clock *c, int64_t sent_us, int64_t recv_us, int64_t pttl_ms,
                             const char *run_id, int64_t warmup_us, int64_t quarantine_us)
{
    unsigned ev = rl_clock_tick(c, recv_us);
    if (!c->anchored)
        return ev | RL_CLOCK_EV_REANCHOR;
    if (!same_run(c, run_id)) {
        drop_anchor(c);
        return ev | RL_CLOCK_EV_RESTART | RL_CLOCK_EV_REANCHOR;
    }
    /* Gone while ours moved too little for it to expire; else it may have
     * simply expired (the client or the link silent that long): no
     * evidence. */
    if (pttl_ms == -2 && vanished_fast(c, sent_us, recv_us)) {
        rl_clock_proof proof = {.vanished = true};
        return ev | turn_fast(c, proof, recv_us, quarantine_us);
    }
    if (pttl_ms < 0) {
        drop_anchor(c); /* expired, or no expiry (changed by someone): no evidence */
        return ev | RL_CLOCK_EV_REANCHOR;
    }
    rl_clock_sample s = {sent_us, recv_us, c->px_ms - pttl_ms};
    bound_rate(c, &s);
    const rl_clock_sample *fast_from = NULL;
    bool slow = false;
    if (rl_clock_pair_fast(&c->anchor, &s, c->allowance))
        fast_from = &c->anchor;
    slow = rl_clock_pair_slow(&c->anchor, &s, c->allowance);
    for (size_t k = 0; k < c->nrecent; k++) {
        const rl_clock_sample *r = &c->recent[k];
        if (fast_from == NULL && rl_clock_pair_fast(r, &s, c->allowance))
            fast_from = r;
        if (!slow && rl_clock_pair_slow(r, &s, c->allowance))
            slow = true;
    }
    if (fast_from != NULL) {
        rl_clock_proof proof = {false, s.advance_ms - fast_from->advance_ms - 1,
                                s.recv_us - fast_from->sent_us};
        return ev | turn_fast(c, proof, recv_us, quarantine_us);
    }
    if (slow && !c->slow) {
        c->slow = true;
        ev |= RL_CLOCK_EV_SLOW;
    }
    c->recent[c->next] = s;
    c->next = (c->next + 1) % RL_CLOCK_RECENT;
    if (c->nrecent < RL_CLOCK_RECENT)
        c->nrecent++;
    if (c->state == RL_CLOCK_UNKNOWN && sent_us - c->anchor.recv_us >= warmup_us) {
        c->state = RL_CLOCK_TRUSTED;
        ev |= RL_CLOCK_EV_TRUSTED;
    }
    if (pttl_ms < c->px_ms / 2)
        ev |= RL_CLOCK_EV_REANCHOR;
    return ev;
}

unsigned rl_clock_tick(rl_clock *c, int64_t now_us)
{
    if (c->state != RL_CLOCK_FAST || now_us < c->fast_until_us)
        return 0;
    c->state = RL_CLOCK_UNKNOWN;
    drop_anchor(c);
    return RL_CLOCK_EV_READMIT | RL_CLOCK_EV_REANCHOR;
}

bool rl_clock_counts(const rl_clock *c)
{
    return c->state != RL_CLOCK_FAST;
}
