/* SPDX-License-Identifier: BSD-3-Clause */
/* Arming libev timers at deadlines on CLOCK_MONOTONIC. See timer.h. */
#include "util/timer.h"
#include "util/util.h"

void rl_timer_arm_at(struct ev_loop *loop, ev_timer *w, int64_t deadline_us)
{
    ev_now_update(loop);
    int64_t delay_us = deadline_us - rl_now_us();
    ev_timer_stop(loop, w);
    ev_timer_set(w, delay_us > 0 ? (double)delay_us / 1e6 : 0., 0.);
    ev_timer_start(loop, w);
}

void rl_timer_arm_in(struct ev_loop *loop, ev_timer *w, int64_t delay_us)
{
    rl_timer_arm_at(loop, w, rl_now_us() + delay_us);
}
