/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' one clock; see testclock.h. */
#include "testclock.h"

#include <errno.h>
#include <time.h>

int64_t tc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tc_now_us(void)
{
    return tc_now_ns() / 1000;
}

double tc_now_ms(void)
{
    return (double)tc_now_ns() / 1e6;
}

void tc_sleep_us(int64_t us)
{
    if (us <= 0)
        return;
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void tc_sleep_ms(int64_t ms)
{
    tc_sleep_us(ms * 1000);
}
