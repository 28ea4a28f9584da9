/* SPDX-License-Identifier: BSD-3-Clause */
/* The tool's connection to the masters: an asynchronous client on the
 * default loop, with blocking forms of each operation for the commands. */
#include "blocking.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int cli_connect(cli *c)
{
    /* The default loop: run's child watcher needs it. */
    c->loop = ev_default_loop(EVFLAG_AUTO);
    if (c->loop == NULL) {
        cli_error("cannot create an event loop");
        return EX_SOFTWARE;
    }
    int rc = redlock_client_new(&c->client, c->cfg, c->loop);
    if (rc != REDLOCK_OK) {
        cli_error("%s", rc == REDLOCK_EINVAL ? "the configuration lists no masters"
                                             : redlock_strerror(rc));
        return rc == REDLOCK_ENOMEM ? EX_SOFTWARE : EX_CONFIG;
    }
    return 0;
}

void cli_disconnect(cli *c)
{
    redlock_client_free(c->client);
    c->client = NULL;
    if (c->loop != NULL)
        ev_run(c->loop, 0); /* releases go out, connections close: bounded by the library */
    redlock_config_free(c->cfg);
    c->cfg = NULL;
}

static blocking_ctx ctx_of(const cli *c)
{
    /* No guard: the library bounds every operation. */
    return (blocking_ctx){.loop = c->loop, .client = c->client, .guard_s = 0};
}

/* The library's form of the set's names. */
static const void *const *names_of(const cli_resources *set)
{
    return (const void *const *)set->names;
}

int cli_acquire(cli *c, const cli_resources *set, const redlock_acquire_options *opts,
                redlock_lock **lock, redlock_result **result)
{
    blocking_ctx ctx = ctx_of(c);
    return blocking_acquire_many(&ctx, names_of(set), set->lens, set->count, opts, lock, result);
}

int cli_extend(cli *c, redlock_lock *lock, int64_t ttl_ms, redlock_result **result)
{
    blocking_ctx ctx = ctx_of(c);
    return blocking_extend(&ctx, lock, ttl_ms, result);
}

int cli_release(cli *c, redlock_lock *lock, redlock_result **result)
{
    blocking_ctx ctx = ctx_of(c);
    return blocking_release(&ctx, lock, result);
}

int cli_release_then(cli *c, redlock_lock *lock, void (*sent)(void *arg), void *arg)
{
    blocking_ctx ctx = ctx_of(c);
    return blocking_release_then(&ctx, lock, NULL, sent, arg);
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t setting(const cli *c, redlock_setting key)
{
    int64_t value = 0;
    redlock_config_get(c->cfg, key, &value);
    return value;
}

static void on_pause(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w, (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* status and ping show what each master's clock was proven to do. A new
 * process has checked nothing yet: run the loop until the clocks are
 * checked as an acquire's are (the library bounds that wait; the deadline
 * here only guards the loop). */
static void clocks_settle(cli *c)
{
    int64_t deadline = monotonic_ms() + setting(c, REDLOCK_CONNECT_TIMEOUT_MS) +
                       setting(c, REDLOCK_CLOCK_WARMUP_MS) + 100;
    bool checked = false;
    while (redlock_client_clocks_checked(c->client, &checked) == REDLOCK_OK && !checked &&
           monotonic_ms() < deadline) {
        ev_timer pause;
        ev_timer_init(&pause, on_pause, 0.005, 0.);
        ev_timer_start(c->loop, &pause);
        ev_run(c->loop, 0);
        ev_timer_stop(c->loop, &pause);
    }
}

int cli_inspect(cli *c, const cli_resources *set, redlock_result **result)
{
    clocks_settle(c);
    blocking_ctx ctx = ctx_of(c);
    return blocking_inspect_many(&ctx, names_of(set), set->lens, set->count, result);
}

int cli_ping(cli *c, redlock_result **result)
{
    clocks_settle(c);
    blocking_ctx ctx = ctx_of(c);
    return blocking_ping(&ctx, result);
}

int cli_open_and_ping(cli *c, const char *command, int *status)
{
    int rc = cli_open(c);
    if (rc != 0)
        return rc;
    *status = cli_ping(c, &c->result);
    if (c->result == NULL) {
        cli_error("%s: %s", command, redlock_strerror(*status));
        return EX_SOFTWARE;
    }
    return 0;
}

int cli_fencing_init(cli *c, uint64_t floor, redlock_result **result)
{
    blocking_ctx ctx = ctx_of(c);
    return blocking_fencing_init(&ctx, floor, result);
}

redlock_acquire_options cli_acquire_options(const cli_options *o)
{
    redlock_acquire_options opts;
    redlock_acquire_options_init(&opts);
    if (o->ttl_ms >= 0)
        opts.ttl_ms = o->ttl_ms;
    if (o->owner != NULL) { /* its length was checked with the option */
        opts.owner = o->owner;
        opts.owner_len = strlen(o->owner);
    }
    if (o->fencing >= 0)
        opts.fencing = o->fencing;
    opts.label = o->label; /* checked with the option */
    opts.slots = o->slots;  /* checked with the option */
    int64_t wait_ms = o->wait_ms;
    /* The most retries an acquire takes: at any retry delay, years. */
    const int64_t unlimited = INT32_MAX;
    if (wait_ms == CLI_WAIT_FOREVER) {
        /* Retry with the configured delay and jitter until acquired (or a
         * signal frees the client). */
        opts.retry_count = unlimited;
    } else if (wait_ms >= 0) {
        /* The same until wait_ms has passed. */
        opts.retry_count = wait_ms > 0 ? unlimited : 0;
        opts.wait_ms = wait_ms;
    }
    return opts;
}

/* Masters that neither did what was asked nor answered no: unreachable,
 * refusing us, or replying errors. */
static bool master_failed(const redlock_master_result *m)
{
    return m->outcome != REDLOCK_MASTER_OK && m->outcome != REDLOCK_MASTER_HELD &&
           m->outcome != REDLOCK_MASTER_ABSENT && m->outcome != REDLOCK_MASTER_PENDING;
}

void cli_describe_failures(const redlock_result *r, char *buf, size_t len)
{
    buf[0] = '\0';
    if (r == NULL)
        return;
    unsigned failed = 0;
    const redlock_master_result *first = NULL;
    for (unsigned i = 0; i < r->master_count; i++) {
        if (master_failed(&r->masters[i])) {
            failed++;
            first = first ? first : &r->masters[i];
        }
    }
    if (first != NULL) {
        char why[256];
        cli_shown(why, sizeof(why),
                  first->detail ? first->detail : redlock_master_outcome_name(first->outcome));
        snprintf(buf, len, "; %u of %u masters failed, e.g. %s: %s", failed, r->master_count,
                 first->name, why);
    }
}

void cli_report_not_acquired(const cli_resources *set, int status, const redlock_result *r,
                             bool quiet)
{
    if (quiet && status == REDLOCK_ECONFLICT)
        return; /* as flock -n: only the exit status says so */
    char shown[CLI_SHOWN_SET_SIZE];
    cli_resources_shown(set, shown, sizeof(shown));
    if (r == NULL) {
        cli_error("could not acquire %s: %s", shown, redlock_strerror(status));
        return;
    }
    char failures[512];
    cli_describe_failures(r, failures, sizeof(failures));
    if (status == REDLOCK_ENOFENCE) {
        /* Enough masters took the lock: what fell short is the counters
         * (an OK without one carries a detail saying why). */
        unsigned fenced = 0;
        for (unsigned i = 0; i < r->master_count; i++)
            fenced += r->masters[i].outcome == REDLOCK_MASTER_OK && r->masters[i].detail == NULL;
        cli_error("could not acquire %s: %s (%u of %u masters took the lock, %u with a fencing "
                  "counter that can give a token, %u needed; %u attempt%s%s)",
                  shown, redlock_strerror(status), r->masters_locked, r->master_count, fenced,
                  r->quorum, r->attempts, r->attempts == 1 ? "" : "s", failures);
        cli_error("the masters put their counters in use again by themselves unless too few "
                  "answer, or a counter is at 2^53 (see `redlock fencing-init`); "
                  "`--no-fencing` locks without a token");
        return;
    }
    cli_error("could not acquire %s: %s (%u of %u masters said OK, %u needed; %u attempt%s%s)",
              shown, redlock_strerror(status), r->masters_locked, r->master_count, r->quorum,
              r->attempts, r->attempts == 1 ? "" : "s", failures);
}

int cli_load_settings(cli *c, const cli_options *o)
{
    int rc = cli_load_config(c);
    if (rc != 0)
        return rc;
    /* In range: the options were parsed against the settings' ranges. */
    if (o->max_hold_ms >= 0)
        redlock_config_set(c->cfg, REDLOCK_MAX_HOLD_MS, o->max_hold_ms);
    if (o->lock_delay_ms >= 0)
        redlock_config_set(c->cfg, REDLOCK_LOCK_DELAY_MS, o->lock_delay_ms);
    return 0;
}

int cli_open(cli *c)
{
    int rc = cli_load_config(c);
    if (rc == 0 && (rc = cli_connect(c)) != 0) {
        redlock_config_free(c->cfg);
        c->cfg = NULL;
    }
    return rc;
}
