/* SPDX-License-Identifier: BSD-3-Clause */
/* Arming libev timers at deadlines on CLOCK_MONOTONIC. */
#ifndef REDLOCK_TIMER_H
#define REDLOCK_TIMER_H

#include <ev.h>
#include <stdint.h>

/*
 * The priority of the timers that judge a master late (a request's
 * deadline, a stalled connection, a lock's guard): below I/O, so that after
 * the loop was held up (a long callback of the program's), the replies
 * that came meanwhile are read before a deadline is judged. libev runs the
 * watchers made ready by one iteration highest priority first.
 */
#define RL_DEADLINE_PRIORITY EV_MINPRI

/*
 * (Re)start w to fire once at deadline_us (rl_now_us() time), at once if
 * that has passed. libev counts a timer from the loop's cached time, which
 * is stale after the loop sat idle or busy; the cache is refreshed first, so
 * the timer never fires early. On the thread that runs loop.
 */
void rl_timer_arm_at(struct ev_loop *loop, ev_timer *w, int64_t deadline_us);

/* The same, delay_us from now. */
void rl_timer_arm_in(struct ev_loop *loop, ev_timer *w, int64_t delay_us);

#endif
