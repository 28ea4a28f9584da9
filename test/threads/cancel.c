/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Threads canceled (pthread_cancel) while blocked in a blocking call: the
 * call is withdrawn, the thread ends at once, and the loop never touches its
 * stack again. A victim is canceled running the loop itself (it found the
 * loop parked), waiting while another caller runs it, and queued while the
 * I/O thread is held. Each victim runs on a stack of our own that is
 * unmapped once it is joined, so any later write to its request crashes.
 */
#include "client/sync.h"
#include "config/config_internal.h"
#include "lock/lock.h"
#include "threads.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define VICTIM_STACK ((size_t)1 << 20) /* 1 MiB */
#define JOIN_BOUND_MS 2000   /* a canceled call returns within this */
#define WAIT_LIMIT_MS 30000  /* the victims' acquire waits, never reached */

static redlock_sync *client;
static atomic_int attempts;    /* failed first acquire attempts */
static atomic_int victim_rc;   /* what the victim's call returned, if it did */

static void log_attempts(int level, const char *message, void *arg)
{
    io_gate_log(level, message, arg);
    if (strncmp(message, "acquire attempt 1:", strlen("acquire attempt 1:")) == 0)
        atomic_fetch_add(&attempts, 1);
}

typedef struct victim {
    pthread_t thread;
    void *stack;
} victim;

static void victim_start(victim *v, void *(*fn)(void *))
{
    v->stack = mmap(NULL, VICTIM_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(v->stack != MAP_FAILED, "mmap");
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    REQUIRE(pthread_attr_setstack(&attr, v->stack, VICTIM_STACK) == 0, "pthread_attr_setstack");
    atomic_store(&victim_rc, 1);
    REQUIRE(pthread_create(&v->thread, &attr, fn, NULL) == 0, "pthread_create");
    pthread_attr_destroy(&attr);
}

/* Cancel the victim, join it (bounded) and unmap its stack. */
static void victim_cancel(victim *v)
{
    double t0 = tc_now_ms();
    REQUIRE(pthread_cancel(v->thread) == 0, "pthread_cancel");
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(fleet_scaled_ms(JOIN_BOUND_MS) / 1000);
    void *ret = NULL;
    REQUIRE(pthread_timedjoin_np(v->thread, &ret, &until) == 0,
            "the canceled thread did not end within %d ms", JOIN_BOUND_MS);
    CHECK(ret == PTHREAD_CANCELED, "the victim was not canceled (its call returned %d)",
          atomic_load(&victim_rc));
    CHECK(tc_now_ms() - t0 < (double)fleet_scaled_ms(JOIN_BOUND_MS), "cancel took %.0f ms",
          tc_now_ms() - t0);
    REQUIRE(munmap(v->stack, VICTIM_STACK) == 0, "munmap");
}

/* Retries every 20 ms, for up to WAIT_LIMIT_MS. */
static redlock_acquire_options waiting_options(void)
{
    redlock_acquire_options o = fleet_acquire_options(10000, 1000000);
    o.retry_delay_ms = 20;
    o.retry_jitter_ms = 0;
    o.wait_ms = fleet_scaled_ms(WAIT_LIMIT_MS);
    return o;
}

static void *acquire_held(void *arg)
{
    (void)arg;
    redlock_acquire_options o = waiting_options();
    redlock_lock *lock = NULL;
    atomic_store(&victim_rc, redlock_sync_acquire(client, "canceled", 8, &o, &lock, NULL));
    redlock_lock_free(lock);
    return NULL;
}

/* The loop's runner: a caller holding it for an acquire that waits. */
static void *acquire_leading(void *arg)
{
    (void)arg;
    redlock_acquire_options o = waiting_options();
    redlock_lock *lock = NULL;
    int rc = redlock_sync_acquire(client, "leading", 7, &o, &lock, NULL);
    CHECK(rc == REDLOCK_OK, "the leading acquire: %s", redlock_status_name(rc));
    if (rc == REDLOCK_OK)
        CHECK(redlock_sync_release(client, lock, NULL) == REDLOCK_OK, "release");
    redlock_lock_free(lock);
    return NULL;
}

/* Bounded waits for the loop's runner and for failed attempts. */
static void wait_runner(rl_sync_runner runner, const char *what)
{
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(5000);
    while (rl_sync_loop_runner(client) != runner && tc_now_ms() < deadline)
        tc_sleep_ms(1);
    REQUIRE(rl_sync_loop_runner(client) == runner, "%s", what);
}

static void wait_attempts(int n)
{
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(5000);
    while (atomic_load(&attempts) < n && tc_now_ms() < deadline)
        tc_sleep_ms(1);
    REQUIRE(atomic_load(&attempts) >= n, "%d of %d acquires failed an attempt",
            atomic_load(&attempts), n);
}

/* Someone else holds resource on every master. */
static void hold_elsewhere(fleet *masters, const char *resource)
{
    for (size_t m = 0; m < fleet_size(masters); m++)
        REQUIRE(fleet_set(masters, m, resource, strlen(resource), "someone-else", 12, 60000) == 0,
                "set");
}

/* The resource comes free: an acquire still retrying would take it now
 * and hand the lock to the dead thread's stack. Nothing may be left. */
static void free_and_check(fleet *masters)
{
    for (size_t m = 0; m < fleet_size(masters); m++)
        REQUIRE(fleet_del(masters, m, "canceled", 8) == 1, "del");
    double until = tc_now_ms() + (double)fleet_scaled_ms(300);
    while (tc_now_ms() < until) {
        CHECK(redlock_sync_ping(client, NULL) == REDLOCK_OK, "ping");
        tc_sleep_ms(10);
    }
    for (size_t m = 0; m < fleet_size(masters); m++)
        CHECK(fleet_pttl(masters, m, "canceled", 8) == -2, "master %zu: the canceled acquire "
              "left a key", m);
    redlock_lock *lock = NULL;
    CHECK(redlock_sync_acquire(client, "canceled", 8, NULL, &lock, NULL) == REDLOCK_OK,
          "acquire after the cancel");
    CHECK(redlock_sync_release(client, lock, NULL) == REDLOCK_OK, "release");
    redlock_lock_free(lock);
}

static void *ping(void *arg)
{
    (void)arg;
    redlock_result *r = NULL;
    atomic_store(&victim_rc, redlock_sync_ping(client, &r));
    redlock_result_free(r);
    return NULL;
}

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

void scenario_cancel_blocked_callers(fleet *masters, redlock_config *cfg)
{
#ifdef UNDER_TSAN
    /* See CMakeLists.txt: ThreadSanitizer cannot follow a thread canceled
     * inside sem_wait. */
    (void)masters;
    (void)cfg;
    printf("cancel_blocked_callers: not run under ThreadSanitizer\n");
    return;
#endif
    redlock_config_set_log(cfg, log_attempts, NULL, REDLOCK_LOG_DEBUG);
    REQUIRE(redlock_sync_new(&client, cfg) == REDLOCK_OK, "redlock_sync_new");

    /* Running the loop itself: an acquire into the parked loop, retrying on
     * a resource someone else holds, canceled where the loop sleeps. */
    hold_elsewhere(masters, "canceled");
    wait_runner(RL_SYNC_RUNNER_IDLE, "the loop was never parked");
    victim v;
    victim_start(&v, acquire_held);
    wait_attempts(1);
    CHECK(rl_sync_loop_runner(client) == RL_SYNC_RUNNER_CALLER, "the victim does not lead");
    victim_cancel(&v);
    free_and_check(masters);

    /* Waiting: the same acquire, started by another caller running the loop
     * for an acquire of its own. */
    atomic_store(&attempts, 0);
    hold_elsewhere(masters, "canceled");
    hold_elsewhere(masters, "leading");
    wait_runner(RL_SYNC_RUNNER_IDLE, "the loop was never parked");
    pthread_t leader;
    run_threads(&leader, 1, acquire_leading);
    wait_attempts(1);
    CHECK(rl_sync_loop_runner(client) == RL_SYNC_RUNNER_CALLER, "no caller leads");
    victim_start(&v, acquire_held);
    wait_attempts(2);
    victim_cancel(&v);
    for (size_t m = 0; m < fleet_size(masters); m++)
        REQUIRE(fleet_del(masters, m, "leading", 7) == 1, "del");
    join_threads(&leader, 1);
    free_and_check(masters);

    /* Queued: a ping waiting behind the held I/O thread. */
    io_gate_close(masters, client);
    victim_start(&v, ping);
    tc_sleep_ms(fleet_scaled_ms(20)); /* the ping is queued */
    victim_cancel(&v);
    io_gate_open();
    CHECK(redlock_sync_ping(client, NULL) == REDLOCK_OK, "ping after the cancel");

    redlock_sync_free(client);
}
