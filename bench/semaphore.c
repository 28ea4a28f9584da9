/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock-semaphore-bench: what a counting semaphore's acquire costs (K
 * slot locks tried in turn, docs/design.md "Semaphores") next to a lock's,
 * in the same run, on five local masters; and how many acquires succeed
 * with masters stopped (SIGSTOP), against what the counting design would
 * allow. Prints figures; asserts nothing beyond the run working.
 *
 *   redlock-semaphore-bench [--rounds N] [--smoke]
 */
#include "bench.h"
#include "fleet.h"

#include <redlock/redlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MASTERS 5
#define K 4
#define RES "semaphore-bench"

/* rounds acquires (then releases) of RES with slots (0: the lock), their
 * latencies in *l (emptied first); how many were granted. expect: the
 * status each must end with (a full semaphore refuses). */
static size_t run(redlock_sync *s, int slots, size_t rounds, int expect, samples *l)
{
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.retry_count = 0;
    o.slots = slots;
    size_t granted = 0;
    l->n = 0;
    for (size_t i = 0; i < rounds; i++) {
        redlock_lock *lock = NULL;
        int64_t t0 = tc_now_ns();
        int rc = redlock_sync_acquire(s, RES, strlen(RES), &o, &lock, NULL);
        samples_add(l, tc_now_ns() - t0);
        if (rc != expect)
            fprintf(stderr, "semaphore-bench: acquire %zu: %s, not %s\n", i, redlock_strerror(rc),
                    redlock_strerror(expect));
        if (rc == REDLOCK_OK) {
            granted++;
            redlock_sync_release(s, lock, NULL);
            redlock_lock_free(lock);
        }
    }
    return granted;
}

/* Take n of the K slots with handles of their own. */
static void take(redlock_sync *s, size_t n, redlock_lock **held)
{
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.retry_count = 0;
    o.slots = K;
    o.ttl_ms = 600000; /* held through the scenario */
    for (size_t i = 0; i < n; i++)
        if (redlock_sync_acquire(s, RES, strlen(RES), &o, &held[i], NULL) != REDLOCK_OK) {
            fprintf(stderr, "semaphore-bench: could not take slot %zu\n", i);
            exit(1);
        }
}

static void give_back(redlock_sync *s, size_t n, redlock_lock **held)
{
    for (size_t i = 0; i < n; i++) {
        redlock_sync_release(s, held[i], NULL);
        redlock_lock_free(held[i]);
        held[i] = NULL;
    }
}

int main(int argc, char **argv)
{
    size_t rounds = 300;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0)
            rounds = 10;
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = (size_t)strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [--rounds N] [--smoke]\n", argv[0]);
            return 2;
        }
    }
    if (rounds == 0)
        rounds = 1;
    fleet *f = fleet_start(MASTERS, NULL);
    if (f == NULL) {
        fprintf(stderr, "semaphore-bench: could not start %d masters\n", MASTERS);
        return 1;
    }
    redlock_config *cfg = fleet_config(f);
    redlock_sync *s = NULL;
    if (cfg == NULL || redlock_sync_new(&s, cfg) != REDLOCK_OK) {
        fprintf(stderr, "semaphore-bench: no client\n");
        fleet_stop(f);
        return 1;
    }
    samples l = {0};
    samples_reserve(&l, rounds); /* recording allocates nothing */
    redlock_lock *held[K] = {NULL};
    run(s, 0, rounds < 20 ? rounds : 20, REDLOCK_OK, &l); /* warm: connections, clocks */

    printf("acquire latency, %d local masters, %zu acquires each (then a release)\n", MASTERS,
           rounds);
    printf("  %-34s %9s %9s %9s\n", "", "p50 us", "p90 us", "x lock");
    run(s, 0, rounds, REDLOCK_OK, &l);
    double lock_p50 = samples_quantile_us(&l, 0.5);
    printf("  %-34s %9.1f %9.1f %9.2f\n", "the lock (baseline)", lock_p50,
           samples_quantile_us(&l, 0.9), 1.0);
    static const size_t taken[] = {0, 2, K};
    for (size_t t = 0; t < sizeof(taken) / sizeof(taken[0]); t++) {
        take(s, taken[t], held);
        run(s, K, rounds, taken[t] < K ? REDLOCK_OK : REDLOCK_ECONFLICT, &l);
        char label[64];
        snprintf(label, sizeof(label), "K=%d, %zu slots taken%s", K, taken[t],
                 taken[t] < K ? "" : " (refused)");
        double p50 = samples_quantile_us(&l, 0.5);
        printf("  %-34s %9.1f %9.1f %9.2f\n", label, p50, samples_quantile_us(&l, 0.9),
               lock_p50 > 0 ? p50 / lock_p50 : 0);
        give_back(s, taken[t], held);
    }

    /* The counting design is safe only with (K + 1) Q > K N: Q = 5 of 5
     * here, so a single master down refuses every acquire. */
    printf("availability with masters stopped (SIGSTOP), K=%d, no slot taken: acquires "
           "granted\n",
           K);
    printf("  %-20s %16s %28s\n", "stopped", "K slot locks", "counting design (Q=5 of 5)");
    for (size_t down = 1; down <= 2; down++) {
        for (size_t i = 0; i < down; i++)
            fleet_pause(f, MASTERS - 1 - i);
        size_t granted = run(s, K, rounds, REDLOCK_OK, &l);
        char stopped[32];
        char got[32];
        snprintf(stopped, sizeof(stopped), "%zu of %d", down, MASTERS);
        snprintf(got, sizeof(got), "%zu of %zu", granted, rounds);
        printf("  %-20s %16s %28s  (p50 %.1f us)\n", stopped, got, "none",
               samples_quantile_us(&l, 0.5));
        for (size_t i = 0; i < down; i++)
            fleet_resume(f, MASTERS - 1 - i);
    }
    samples_free(&l);
    redlock_sync_free(s);
    redlock_config_free(cfg);
    fleet_stop(f);
    return 0;
}
