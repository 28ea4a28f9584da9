/* Randomness from the kernel CSPRNG: lock values and retry jitter. */
#include "random.h"

#include <errno.h>
#include <sys/random.h>

int rl_random_bytes(void *buf, size_t len)
{
    unsigned char *p = buf;
    size_t done = 0;
    /* Small requests are never short once the pool is ready, but a signal
     * can interrupt the first call after boot. Bounded: at most len tries
     * that make progress, and EINTR is retried a few times only. */
    int interrupted = 0;
    while (done < len) {
        ssize_t n = getrandom(p + done, len - done, 0);
        if (n < 0) {
            if (errno == EINTR && ++interrupted < 16)
                continue;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

int rl_random_value(char out[REDLOCK_VALUE_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[REDLOCK_VALUE_LEN / 2];
    if (rl_random_bytes(raw, sizeof(raw)) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 0xf];
    }
    out[REDLOCK_VALUE_LEN] = '\0';
    return 0;
}

int64_t rl_random_jitter(int64_t max)
{
    uint64_t r;
    if (max <= 0 || rl_random_bytes(&r, sizeof(r)) != 0)
        return 0;
    return (int64_t)(r % ((uint64_t)max + 1));
}
