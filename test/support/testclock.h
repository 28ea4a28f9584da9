/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' one clock: CLOCK_MONOTONIC readings and sleeps, for every test
 * program (Criterion suites, the CLI harness and its helper programs, the
 * thread harness, the failover suite, the benchmark). One clock everywhere,
 * so times taken in different processes compare. */
#ifndef REDLOCK_TESTCLOCK_H
#define REDLOCK_TESTCLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns, us and (fractional) ms. Async-signal-safe: they
 * only call clock_gettime. */
int64_t tc_now_ns(void);
int64_t tc_now_us(void);
double tc_now_ms(void);

/* Sleep the whole duration: a signal does not cut it short. */
void tc_sleep_ms(int64_t ms);
void tc_sleep_us(int64_t us);

#endif
