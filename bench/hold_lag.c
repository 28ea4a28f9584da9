/* SPDX-License-Identifier: BSD-3-Clause */
/* The loop's lag: a one-shot timer, re-armed from the clock each time it
 * fires, records how late it fired. A loop busy with callbacks (thousands
 * of extensions at once) fires it late; that delay is what every other
 * watcher of the loop -- the holder's own -- waits as well. Each tick also
 * samples the heap in use, for its high-water mark. */
#include "hold.h"

static void lag_arm(hold_lag *lag)
{
    /* Re-read the clock: libev counts the timeout from the loop's cached
     * time, which may be old after a long batch of callbacks. */
    ev_now_update(lag->loop);
    lag->due_ns = tc_now_ns() + lag->period_ns;
    ev_timer_set(&lag->timer, (double)lag->period_ns / 1e9, 0.);
    ev_timer_start(lag->loop, &lag->timer);
}

static void lag_on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    hold_lag *lag = w->data;
    int64_t late = tc_now_ns() - lag->due_ns;
    samples_add(lag->into, late > 0 ? late : 0);
    long heap = bench_live_bytes();
    if (heap > lag->heap_max)
        lag->heap_max = heap;
    lag_arm(lag);
}

void hold_lag_start(hold_lag *lag, struct ev_loop *loop, int64_t period_ms, samples *into)
{
    lag->loop = loop;
    lag->period_ns = period_ms * 1000000;
    lag->into = into;
    lag->heap_max = bench_live_bytes();
    ev_timer_init(&lag->timer, lag_on_timer, 0., 0.);
    lag->timer.data = lag;
    lag_arm(lag);
}

void hold_lag_switch(hold_lag *lag, samples *into)
{
    lag->into = into;
    lag->heap_max = bench_live_bytes();
}

void hold_lag_stop(hold_lag *lag)
{
    ev_timer_stop(lag->loop, &lag->timer);
}
