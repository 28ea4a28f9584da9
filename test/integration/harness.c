/* SPDX-License-Identifier: BSD-3-Clause */
/* Integration-test harness; see harness.h. */
#include "harness.h"
#include "blocking.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void capture_log(int level, const char *message, void *arg)
{
    harness *h = arg;
    size_t n = strlen(message);
    char *grown = realloc(h->log, h->log_len + n + 2);
    cr_assert_not_null(grown);
    h->log = grown;
    memcpy(h->log + h->log_len, message, n);
    h->log_len += n;
    h->log[h->log_len++] = '\n';
    h->log[h->log_len] = '\0';
    (void)level;
    if (h->on_log != NULL)
        h->on_log(h, message);
}

/* The program is linked with --wrap=redlock_config_free: every call comes
 * here first. */
static unsigned configs_freed;

void __real_redlock_config_free(redlock_config *cfg); // NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
void __wrap_redlock_config_free(redlock_config *cfg); // NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)

void __wrap_redlock_config_free(redlock_config *cfg) // NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
{
    if (cfg != NULL)
        configs_freed++;
    __real_redlock_config_free(cfg);
}

unsigned harness_configs_freed(void)
{
    return configs_freed;
}

void harness_start(harness *h, size_t n, const fleet_options *opts)
{
    memset(h, 0, sizeof(*h));
    h->fleet = fleet_start(n, opts);
    cr_assert_not_null(h->fleet, "could not start %zu redis-server masters", n);
    h->cfg = fleet_config(h->fleet);
    cr_assert_not_null(h->cfg);
    redlock_config_set_log(h->cfg, capture_log, h, REDLOCK_LOG_DEBUG);
    h->loop = ev_loop_new(EVFLAG_AUTO);
    cr_assert_not_null(h->loop);
}

static void on_resume_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    const harness_resume_timer *t = w->data;
    (void)loop;
    (void)revents;
    cr_assert_eq(fleet_resume(t->fleet, t->master), 0);
}

void harness_resume_in(harness *h, harness_resume_timer *t, size_t i, int64_t ms)
{
    t->fleet = h->fleet;
    t->master = i;
    ev_timer_init(&t->timer, on_resume_timer, (double)fleet_scaled_ms(ms) / 1000.0, 0.);
    t->timer.data = t;
    ev_timer_start(h->loop, &t->timer);
}

void harness_connect(harness *h)
{
    cr_assert_eq(redlock_client_new(&h->client, h->cfg, h->loop), REDLOCK_OK);
}

void harness_free_client(harness *h)
{
    redlock_client_free(h->client);
    h->client = NULL;
    /* A freed client finishes its releases and closes its connections on
     * the loop, within a command timeout; then no watcher may be left. */
    double deadline = tc_now_ms() + HARNESS_GUARD_S * 1000 * fleet_time_scale();
    while (ev_run(h->loop, EVRUN_ONCE))
        cr_assert_lt(tc_now_ms(), deadline, "the freed client left watchers active");
}

double harness_free_client_timed(harness *h)
{
    double t0 = tc_now_ms();
    harness_free_client(h);
    return tc_now_ms() - t0;
}

void harness_stop(harness *h)
{
    if (h->loop != NULL) {
        harness_free_client(h);
        ev_loop_destroy(h->loop);
    }
    redlock_config_free(h->cfg);
    fleet_stop(h->fleet);
    free(h->log);
    memset(h, 0, sizeof(*h));
}

static void guard_fired(struct ev_loop *loop, ev_timer *w, int revents)
{
    *(bool *)w->data = true;
    ev_break(loop, EVBREAK_ONE);
}

/* The tool's blocking wrappers, with a guard that fails the test. */
static blocking_ctx ctx_of(const harness *h)
{
    return (blocking_ctx){
        .loop = h->loop, .client = h->client, .guard_s = HARNESS_GUARD_S * fleet_time_scale()};
}

/* Check how an operation ended; hand over or free its result. */
static int finish(const blocking_ctx *ctx, int status, redlock_result *result,
                  redlock_result **result_out)
{
    cr_assert_neq(status, BLOCKING_GUARD_EXPIRED, "operation did not complete within %.0f s",
                  ctx->guard_s);
    cr_assert_neq(status, BLOCKING_CALLED_TWICE, "callback called twice");
    if (result != NULL)
        cr_assert_eq(result->status, status);
    if (result_out != NULL)
        *result_out = result;
    else
        redlock_result_free(result);
    return status;
}

int harness_acquire(harness *h, const void *res, size_t len, const redlock_acquire_options *opts,
                    redlock_lock **lock_out, redlock_result **result_out)
{
    return harness_acquire_many(h, &res, &len, 1, opts, lock_out, result_out);
}

int harness_acquire_many(harness *h, const void *const *res, const size_t *lens, size_t count,
                         const redlock_acquire_options *opts, redlock_lock **lock_out,
                         redlock_result **result_out)
{
    blocking_ctx ctx = ctx_of(h);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    int rc = blocking_acquire_many(&ctx, res, lens, count, opts, &lock, &r);
    rc = finish(&ctx, rc, r, result_out);
    if (lock_out != NULL)
        *lock_out = lock;
    else
        redlock_lock_free(lock);
    return rc;
}

int harness_extend(harness *h, redlock_lock *lock, int64_t ttl_ms, redlock_result **result_out)
{
    blocking_ctx ctx = ctx_of(h);
    redlock_result *r = NULL;
    int rc = blocking_extend(&ctx, lock, ttl_ms, &r);
    return finish(&ctx, rc, r, result_out);
}

int harness_release(harness *h, redlock_lock *lock, redlock_result **result_out)
{
    blocking_ctx ctx = ctx_of(h);
    redlock_result *r = NULL;
    int rc = blocking_release(&ctx, lock, &r);
    return finish(&ctx, rc, r, result_out);
}

int harness_inspect(harness *h, const void *res, size_t len, redlock_result **result_out)
{
    return harness_inspect_many(h, &res, &len, 1, result_out);
}

int harness_inspect_many(harness *h, const void *const *res, const size_t *lens, size_t count,
                         redlock_result **result_out)
{
    blocking_ctx ctx = ctx_of(h);
    redlock_result *r = NULL;
    int rc = blocking_inspect_many(&ctx, res, lens, count, &r);
    return finish(&ctx, rc, r, result_out);
}

int harness_ping(harness *h, redlock_result **result_out)
{
    blocking_ctx ctx = ctx_of(h);
    redlock_result *r = NULL;
    int rc = blocking_ping(&ctx, &r);
    return finish(&ctx, rc, r, result_out);
}

int harness_fencing_init(harness *h, uint64_t floor, redlock_result **result_out)
{
    blocking_ctx ctx = ctx_of(h);
    redlock_result *r = NULL;
    int rc = blocking_fencing_init(&ctx, floor, &r);
    return finish(&ctx, rc, r, result_out);
}

void harness_run_for(harness *h, int ms)
{
    bool expired = false;
    ev_timer t;
    ev_timer_init(&t, guard_fired, ms / 1000.0, 0.);
    t.data = &expired;
    ev_timer_start(h->loop, &t);
    while (!expired)
        ev_run(h->loop, EVRUN_ONCE);
    ev_timer_stop(h->loop, &t);
}

bool harness_wait_until(harness *h, bool (*pred)(harness *h, void *arg), void *arg,
                        int timeout_ms)
{
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(timeout_ms);
    while (!pred(h, arg)) {
        if (tc_now_ms() >= deadline)
            return false;
        harness_run_for(h, 10);
    }
    return true;
}

static bool master_connected(harness *h, void *arg)
{
    char line[64];
    snprintf(line, sizeof(line), "master 127.0.0.1:%d: connected",
             fleet_port(h->fleet, *(const size_t *)arg));
    return h->log != NULL && strstr(h->log, line) != NULL;
}

void harness_wait_connected(harness *h, size_t i)
{
    cr_assert(harness_wait_until(h, master_connected, &i, 3000), "master %zu never connected", i);
}

static bool clocks_checked(harness *h, void *arg)
{
    (void)arg;
    bool checked = false;
    return redlock_client_clocks_checked(h->client, &checked) == REDLOCK_OK && checked;
}

bool harness_wait_clocks_checked(harness *h)
{
    return harness_wait_until(h, clocks_checked, NULL, 3000);
}

static bool all_answered(harness *h, void *arg)
{
    (void)arg;
    static redlock_stats st; /* some 28 KiB */
    st.size = sizeof(st);
    if (redlock_client_stats(h->client, &st) != REDLOCK_OK)
        return false;
    for (unsigned i = 0; i < st.master_count; i++)
        if (st.masters[i].in_flight != 0 || st.masters[i].queued != 0)
            return false;
    return true;
}

bool harness_wait_all_answered(harness *h, int timeout_ms)
{
    return harness_wait_until(h, all_answered, NULL, timeout_ms);
}

typedef struct key_ref {
    const void *key;
    size_t len;
} key_ref;

static bool key_gone(harness *h, void *arg)
{
    const key_ref *k = arg;
    for (size_t i = 0; i < fleet_size(h->fleet); i++)
        if (fleet_pid(h->fleet, i) != 0 && !fleet_is_paused(h->fleet, i) &&
            fleet_pttl(h->fleet, i, k->key, k->len) != -2)
            return false;
    return true;
}

bool harness_wait_key_gone(harness *h, const void *key, size_t len, int timeout_ms)
{
    key_ref k = {key, len};
    return harness_wait_until(h, key_gone, &k, timeout_ms);
}

bool result_detail_contains(const redlock_result *r, const char *needle)
{
    for (unsigned i = 0; i < r->master_count; i++)
        if (r->masters[i].detail != NULL && strstr(r->masters[i].detail, needle) != NULL)
            return true;
    return false;
}

void expect_master(const redlock_result *r, size_t i, int outcome, const char *detail)
{
    cr_assert_lt(i, r->master_count);
    const redlock_master_result *m = &r->masters[i];
    const char *shown = m->detail != NULL ? m->detail : "(none)";
    cr_assert_eq(m->outcome, outcome, "%s: outcome %s, expected %s (detail: %s)", m->name,
                 redlock_master_outcome_name(m->outcome), redlock_master_outcome_name(outcome),
                 shown);
    if (detail == NULL) {
        cr_assert_null(m->detail, "%s: detail %s", m->name, shown);
        return;
    }
    cr_assert(m->detail != NULL && strcmp(m->detail, detail) == 0,
              "%s: detail \"%s\", expected \"%s\"", m->name, shown, detail);
}

void expect_master_or_pending(const redlock_result *r, size_t i, int outcome, const char *detail)
{
    cr_assert_lt(i, r->master_count);
    if (r->masters[i].outcome == REDLOCK_MASTER_PENDING)
        expect_master(r, i, REDLOCK_MASTER_PENDING, NULL);
    else
        expect_master(r, i, outcome, detail);
}
