/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock_client_free() from inside any callback, at any point a scenario
 * calls back: a log line (every level), an acquire's, an operation's or a
 * lost callback. Each scenario runs once to count its callbacks, then once
 * for each of them with the client freed there (and a few past the count:
 * a run may call back a little more than the first). Every run must end
 * with the client freed in full (its config copy freed), nothing left on
 * the loop, each operation's callback called exactly once, and every
 * callback made with a frame of the library's on the stack
 * (rl_client_entered): that frame is what defers the free until it returns.
 * Under AddressSanitizer (scripts/sanitize.sh asan) each run's memory is
 * checked as well; under valgrind, every fourth run's.
 */
#include "harness.h"
#include "context/context.h"
#include "lock/lock.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <string.h>

#define RES "swept"
#define RES_LEN 5
#define TTL_MS 3000
/* Runs past the counted callbacks: timing may add a line or two. */
#define SWEEP_SLACK 3
/* No scenario calls back more than this (bounds the sweep). */
#define SWEEP_MAX 200

static harness h;

static void stop(void)
{
    harness_stop(&h);
}

TestSuite(free_in_callback, .fini = stop, .timeout = 300);

typedef struct sweep {
    redlock_client *client; /* this run's, kept after its free to check frames */
    unsigned events;        /* callbacks so far in this run */
    unsigned free_at;       /* the callback that frees the client; 0: none */
    bool freed;             /* freed from a callback */
    unsigned outside;       /* callbacks made with no frame of the library's */
    unsigned started;       /* operations started... */
    unsigned completed;     /* ...and their callbacks (lost callbacks apart) */
    unsigned lost;          /* lost callbacks */
    int step;               /* how far the scenario got */
    bool over;              /* the scenario ended (or could not go on) */
    redlock_lock *lock;     /* the scenario's lock, freed after the run */
} sweep;

static sweep sw;

/* Every callback of the program's comes here first. */
static void callback_made(void)
{
    if (sw.client == NULL)
        return; /* a line of redlock_client_new()'s: no client to free yet */
    if (!rl_client_entered(sw.client))
        sw.outside++;
    if (++sw.events != sw.free_at || sw.freed)
        return;
    sw.freed = true;
    h.client = NULL;
    redlock_client_free(sw.client);
}

static void on_line(harness *hh, const char *message)
{
    (void)hh;
    (void)message;
    callback_made();
}

/* ---- The scenarios: each step is started by the callback of the last ---- */

typedef struct scenario {
    const char *name;
    void (*configure)(void);               /* before the client is made; may be NULL */
    void (*start)(void);                   /* once the client is made */
    void (*on_line)(const char *message);  /* each log line; may be NULL */
} scenario;

/* What a callback starts next (a pointer to it travels as the callback's
 * argument). */
typedef struct next_step {
    void (*run)(void);
} next_step;

static void on_done(int status, const redlock_result *result, void *arg);

static void step_release(void)
{
    if (redlock_release_async(sw.client, sw.lock, on_done, NULL) == REDLOCK_OK)
        sw.started++;
    else
        sw.over = true;
}

static void on_lost(int status, redlock_lock *lock, void *arg)
{
    (void)status;
    (void)lock;
    (void)arg;
    callback_made();
    sw.lost++;
    sw.over = true;
}

static void on_acquired(int status, redlock_lock *lock, const redlock_result *result, void *arg)
{
    (void)result;
    const next_step *next = arg;
    callback_made();
    sw.completed++;
    sw.lock = lock;
    if (status != REDLOCK_OK || sw.freed) {
        sw.over = true;
        return;
    }
    next->run();
}

static void on_done(int status, const redlock_result *result, void *arg)
{
    (void)result;
    const next_step *next = arg;
    callback_made();
    sw.completed++;
    if (status != REDLOCK_OK || sw.freed || next == NULL) {
        sw.over = true;
        return;
    }
    next->run();
}

static void acquire_then(const next_step *next, int64_t ttl_ms, int64_t retries)
{
    redlock_acquire_options o = fleet_acquire_options(ttl_ms, retries);
    if (redlock_acquire_async(sw.client, RES, RES_LEN, &o, on_acquired, (void *)next) ==
        REDLOCK_OK)
        sw.started++;
    else
        sw.over = true;
}

/* Acquire, extend, release. */
static void lifecycle_extend(void)
{
    static const next_step release = {step_release};
    if (redlock_extend_async(sw.client, sw.lock, TTL_MS, on_done, (void *)&release) ==
        REDLOCK_OK)
        sw.started++;
    else
        sw.over = true;
}

static void lifecycle_start(void)
{
    static const next_step extend = {lifecycle_extend};
    acquire_then(&extend, TTL_MS, 0);
}

/* Contention: another holder's keys, which expire while the acquire retries. */
static void contention_start(void)
{
    for (size_t i = 0; i < fleet_size(h.fleet); i++) {
        redisReply *r = fleet_command(h.fleet, i, "SET %s other-holder PX 100", RES);
        cr_assert_not_null(r);
        freeReplyObject(r);
    }
    static const next_step release = {step_release};
    acquire_then(&release, TTL_MS, 100); /* 20 ms apart */
}

/* Loss: the keys vanish under an auto-extended lock. */
static void loss_vanish(void)
{
    if (redlock_auto_extend_async(sw.client, sw.lock, on_lost, NULL) != REDLOCK_OK) {
        sw.over = true;
        return;
    }
    for (size_t i = 0; i < fleet_size(h.fleet); i++)
        fleet_del(h.fleet, i, RES, RES_LEN);
}

/* A short TTL, so the first extension comes soon. */
#define LOSS_TTL_MS 800

static void loss_configure(void)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(LOSS_TTL_MS)),
                 REDLOCK_OK);
}

static void loss_start(void)
{
    static const next_step vanish = {loss_vanish};
    acquire_then(&vanish, fleet_scaled_ms(LOSS_TTL_MS), 0);
}

/* Reconnect: master 0 killed and restarted while the lock is held; the
 * release goes out once it is back. */
static void reconnect_fault(void)
{
    cr_assert_eq(fleet_kill(h.fleet, 0), 0);
    cr_assert_eq(fleet_restart(h.fleet, 0), 0);
    sw.step = 1;
}

static void reconnect_start(void)
{
    static const next_step fault = {reconnect_fault};
    acquire_then(&fault, TTL_MS, 0);
}

static void reconnect_line(const char *message)
{
    if (sw.step == 1 && strstr(message, ": reconnected") != NULL && !sw.freed) {
        sw.step = 2;
        step_release();
    }
}

/* Clock verdict: two of three masters lose their clock probe on the same
 * run (FLUSHALL), are proven fast, and the auto-extended lock held on them
 * is lost with REDLOCK_ECLOCK. */
static void clock_configure(void)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_CLOCK_PROBE_MS, 50), REDLOCK_OK);
}

static void clock_flush(void)
{
    if (redlock_auto_extend_async(sw.client, sw.lock, on_lost, NULL) != REDLOCK_OK) {
        sw.over = true;
        return;
    }
    for (size_t i = 0; i < 2; i++) {
        redisReply *r = fleet_command(h.fleet, i, "FLUSHALL");
        cr_assert_not_null(r);
        freeReplyObject(r);
    }
}

static void clock_start(void)
{
    static const next_step flush = {clock_flush};
    acquire_then(&flush, TTL_MS, 0);
}

/* ---- The sweep ------------------------------------------------------------- */

static const scenario *current;

static void line_seen(harness *hh, const char *message)
{
    on_line(hh, message);
    if (current->on_line != NULL)
        current->on_line(message);
}

static bool run_over(harness *hh, void *arg)
{
    (void)hh;
    (void)arg;
    return sw.over || sw.freed;
}

/* One run, the client freed at callback free_at (0: by the test, after
 * the scenario). Returns how many callbacks the run made. */
static unsigned run_once(const scenario *sc, unsigned free_at)
{
    memset(&sw, 0, sizeof(sw));
    sw.free_at = free_at;
    unsigned frees_before = harness_configs_freed();
    harness_connect(&h);
    sw.client = h.client;
    sc->start();
    cr_assert(harness_wait_until(&h, run_over, NULL, 10000),
              "%s, freed at callback %u: the scenario did not end; log:\n%s", sc->name, free_at,
              h.log);
    /* Frees the client unless a callback did, and runs the loop until no
     * watcher is left. */
    harness_free_client(&h);
    cr_assert_eq(harness_configs_freed(), frees_before + 1,
                 "%s, freed at callback %u: the client was not freed in full; log:\n%s",
                 sc->name, free_at, h.log);
    cr_assert_eq(sw.completed, sw.started,
                 "%s, freed at callback %u: %u operations, %u callbacks; log:\n%s", sc->name,
                 free_at, sw.started, sw.completed, h.log);
    cr_assert_eq(sw.outside, 0,
                 "%s, freed at callback %u: %u callbacks made with no frame of the library's",
                 sc->name, free_at, sw.outside);
    redlock_lock_free(sw.lock);
    /* The scenario's keys and the masters, as they were, for the next run. */
    for (size_t i = 0; i < fleet_size(h.fleet); i++)
        fleet_del(h.fleet, i, RES, RES_LEN);
    free(h.log);
    h.log = NULL;
    h.log_len = 0;
    return sw.events;
}

static void sweep_scenario(const scenario *sc)
{
    harness_start(&h, 3, NULL);
    if (sc->configure != NULL)
        sc->configure();
    current = sc;
    h.on_log = line_seen;
    unsigned counted = run_once(sc, 0);
    cr_assert(sw.over, "%s: the scenario did not run to its end; log:\n%s", sc->name, h.log);
    cr_assert_lt(counted, SWEEP_MAX);
    /* Under valgrind (a stretched time scale) every fourth callback: each
     * run costs seconds there, and AddressSanitizer's pass takes them all. */
    unsigned stride = fleet_time_scale() > 1 ? 4 : 1;
    for (unsigned k = 1; k <= counted + SWEEP_SLACK; k += stride)
        run_once(sc, k);
    cr_log_info("%s: %u callbacks, the client freed at every %s", sc->name, counted,
                stride == 1 ? "one" : "fourth");
}

static const scenario lifecycle = {"acquire, extend, release", NULL, lifecycle_start, NULL};
static const scenario contention = {"contention", NULL, contention_start, NULL};
static const scenario loss = {"loss", loss_configure, loss_start, NULL};
static const scenario reconnect = {"reconnect", NULL, reconnect_start, reconnect_line};
static const scenario clock_verdict = {"clock verdict", clock_configure, clock_start, NULL};

Test(free_in_callback, acquire_extend_release)
{
    sweep_scenario(&lifecycle);
}

Test(free_in_callback, contention)
{
    sweep_scenario(&contention);
}

Test(free_in_callback, loss)
{
    sweep_scenario(&loss);
}

Test(free_in_callback, reconnect)
{
    sweep_scenario(&reconnect);
}

Test(free_in_callback, clock_verdict)
{
    sweep_scenario(&clock_verdict);
}
