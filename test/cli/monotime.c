/* monotime: print CLOCK_MONOTONIC in nanoseconds, for shell commands in the
 * CLI tests to stamp events on the same clock the test process reads. */
#include <stdio.h>
#include <time.h>

int main(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        perror("monotime: clock_gettime");
        return 1;
    }
    printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    return fflush(stdout) == 0 ? 0 : 1;
}
