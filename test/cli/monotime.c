/* SPDX-License-Identifier: BSD-3-Clause */
/* monotime: print CLOCK_MONOTONIC in nanoseconds, for shell commands in the
 * CLI tests to stamp events on the same clock the test process reads. */
#include "testclock.h"

#include <stdio.h>

int main(void)
{
    printf("%lld\n", (long long)tc_now_ns());
    return fflush(stdout) == 0 ? 0 : 1;
}
