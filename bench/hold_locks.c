/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The measured run: one asynchronous client on one loop acquires K locks
 * (a bounded number in flight, optionally paced), auto-extends every one,
 * holds them all for the hold time while the probe thread reads the
 * masters, then releases them all. Each phase is bounded in time; the
 * loop's lag is recorded throughout, phase by phase.
 */
#include "hold.h"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define NS_PER_S ((int64_t)1000000000)
#define LAG_PERIOD_MS 10
#define CONNECT_MAX_NS (10 * NS_PER_S)
#define ACQUIRE_MAX_NS (180 * NS_PER_S)  /* plus K/R when paced */
#define DRAIN_MAX_NS (60 * NS_PER_S)     /* acquires in flight at the end */
#define RELEASE_MAX_NS (300 * NS_PER_S)
#define CLOSE_MAX_S 10.0
/* An acquire refused with REDLOCK_EOVERLOAD (the extensions of the locks
 * held are behind) is tried again, after a pause of the acquires: as fast
 * as the library allows is as fast as it takes them. */
#define OVERLOAD_PAUSE_NS (20 * (int64_t)1000000)

typedef enum entry_state {
    ENTRY_IDLE,
    ENTRY_ACQUIRING,
    ENTRY_FAILED,
    ENTRY_HELD,        /* acquired, auto-extended */
    ENTRY_UNWATCHED,   /* acquired, auto-extension refused */
    ENTRY_LOST,
    ENTRY_RELEASED
} entry_state;

typedef enum hold_phase { PHASE_ACQUIRE, PHASE_HOLD, PHASE_RELEASE } hold_phase;

typedef struct hold_state hold_state;

/* One lock of the K. */
typedef struct entry {
    hold_state *h;
    redlock_lock *lock;
    int64_t lost_ns;   /* 0: never lost */
    unsigned long index;
    entry_state state;
} entry;

struct hold_state {
    const bench_masters *ms;
    const hold_options *o;
    hold_figures *f;
    struct ev_loop *loop;
    redlock_client *client;
    redlock_acquire_options opts;
    char prefix[HOLD_PREFIX_SIZE];
    entry *entries;
    hold_phase phase;
    unsigned long next;        /* the next entry the phase starts */
    unsigned long in_flight;
    int64_t phase_start_ns, stop_starting_ns;
    int ping_status;           /* 1 until the first ping completes */
    hold_lag lag;
    unsigned long *retry;      /* entries refused with EOVERLOAD, to start again */
    size_t retry_n;
    int64_t pause_until_ns;    /* no acquire starts before */
    hold_lost_watch *lost_watch; /* the keys of locks reported lost */
    /* The client's requests to the masters so far, read every probe
     * period in the hold (rate_sample) */
    int64_t *rate_ns;
    uint64_t *rate_requests;
    size_t rate_n, rate_cap;
    int64_t rate_period_ns, rate_next_ns;
};

static int64_t thread_cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
           ru.ru_stime.tv_usec;
}

static size_t status_index(int status)
{
    size_t i = status < 0 ? (size_t)-status : 0;
    return i < HOLD_STATUSES ? i : 0;
}

/* Run the loop until done(h) or deadline_ns, calling each(h) (may be NULL)
 * after every iteration. The lag timer wakes the loop every 10 ms. */
static void run_until(hold_state *h, bool (*done)(const hold_state *), int64_t deadline_ns,
                      void (*each)(hold_state *))
{
    while ((done == NULL || !done(h)) && tc_now_ns() < deadline_ns) {
        ev_run(h->loop, EVRUN_ONCE);
        if (each != NULL)
            each(h);
    }
}

/* ---- Connecting --------------------------------------------------------- */

static void on_ping(int status, const redlock_result *r, void *arg)
{
    *(int *)arg = status;
}

/* Every master connected (a ping answered by a quorum); false if not. */
static bool connect_client(hold_state *h)
{
    h->ping_status = 1; /* no status is positive */
    if (redlock_ping_async(h->client, on_ping, &h->ping_status) != REDLOCK_OK)
        return false;
    int64_t deadline = tc_now_ns() + CONNECT_MAX_NS;
    while (h->ping_status == 1 && tc_now_ns() < deadline)
        ev_run(h->loop, EVRUN_ONCE);
    return h->ping_status == REDLOCK_OK;
}

/* ---- Acquiring ---------------------------------------------------------- */

static void on_lost(int status, redlock_lock *lock, void *arg)
{
    entry *e = arg;
    hold_state *h = e->h;
    e->state = ENTRY_LOST;
    e->lost_ns = tc_now_ns();
    int64_t validity = redlock_lock_validity_ms(lock);
    if (validity <= 0)
        h->f->lost_without_validity++;
    if (h->f->lost_validity_min_ms < 0 || validity < h->f->lost_validity_min_ms)
        h->f->lost_validity_min_ms = validity;
    hold_lost_watch_add(h->lost_watch, e->index, e->lost_ns);
    h->f->lost_status[status_index(status)]++;
    if (h->phase == PHASE_ACQUIRE)
        h->f->lost_acquiring++;
    else if (h->phase == PHASE_HOLD)
        h->f->lost_holding++;
    else
        h->f->lost_releasing++;
}

static void acquire_pump(hold_state *h);

/* An acquire of e refused as the masters are behind: again after a pause
 * (while the phase still starts acquires). */
static void overloaded(hold_state *h, entry *e)
{
    e->state = ENTRY_IDLE;
    h->f->overload_retries++;
    h->retry[h->retry_n++] = e->index;
    h->pause_until_ns = tc_now_ns() + OVERLOAD_PAUSE_NS;
}

static void on_acquired(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    entry *e = arg;
    hold_state *h = e->h;
    hold_figures *f = h->f;
    h->in_flight--;
    if (r != NULL)
        f->attempts += r->attempts;
    if (status == REDLOCK_EOVERLOAD) {
        overloaded(h, e);
    } else if (status != REDLOCK_OK) {
        e->state = ENTRY_FAILED;
        f->acquire_failed++;
        f->acquire_status[status_index(status)]++;
    } else {
        e->lock = lock;
        f->acquired++;
        if (redlock_auto_extend_async(h->client, lock, on_lost, e) == REDLOCK_OK) {
            e->state = ENTRY_HELD;
        } else {
            e->state = ENTRY_UNWATCHED;
            f->auto_extend_refused++;
        }
    }
    acquire_pump(h);
}

/* Start acquires while fewer than in_flight are out, within the pace. */
static void acquire_pump(hold_state *h)
{
    const hold_options *o = h->o;
    int64_t now = tc_now_ns();
    double allowed = o->acquire_rate > 0
                         ? 1 + o->acquire_rate * (double)(now - h->phase_start_ns) / 1e9
                         : (double)o->locks;
    if (now < h->pause_until_ns)
        return;
    while (h->in_flight < o->in_flight && (h->retry_n > 0 || h->next < o->locks) &&
           (double)h->next < allowed && now < h->stop_starting_ns &&
           h->pause_until_ns <= now) {
        entry *e = &h->entries[h->retry_n > 0 ? h->retry[--h->retry_n] : h->next++];
        char key[HOLD_PREFIX_SIZE + 24];
        int len = snprintf(key, sizeof(key), "%s%lu", h->prefix, e->index);
        int rc = redlock_acquire_async(h->client, key, (size_t)len, &h->opts, on_acquired, e);
        if (rc == REDLOCK_EOVERLOAD) {
            overloaded(h, e);
            continue;
        }
        if (rc != REDLOCK_OK) {
            e->state = ENTRY_FAILED;
            h->f->acquire_failed++;
            h->f->acquire_status[status_index(rc)]++;
            continue;
        }
        e->state = ENTRY_ACQUIRING;
        h->in_flight++;
    }
}

static bool acquire_done(const hold_state *h)
{
    return h->in_flight == 0 &&
           ((h->next == h->o->locks && h->retry_n == 0) || tc_now_ns() >= h->stop_starting_ns);
}

static void acquire_all(hold_state *h)
{
    hold_figures *f = h->f;
    h->phase = PHASE_ACQUIRE;
    h->next = 0;
    h->phase_start_ns = tc_now_ns();
    int64_t paced = h->o->acquire_rate > 0
                        ? (int64_t)((double)h->o->locks / h->o->acquire_rate * 1e9)
                        : 0;
    h->stop_starting_ns = h->phase_start_ns + ACQUIRE_MAX_NS + paced;
    int64_t cpu = thread_cpu_us();
    acquire_pump(h);
    run_until(h, acquire_done, h->stop_starting_ns + DRAIN_MAX_NS, acquire_pump);
    f->acquire_seconds = (double)(tc_now_ns() - h->phase_start_ns) / 1e9;
    f->not_started = h->o->locks - h->next + h->retry_n;
    f->acquire_cpu_us_per_lock =
        (double)(thread_cpu_us() - cpu) / (double)(h->next > 0 ? h->next : 1);
}

/* ---- Holding ------------------------------------------------------------ */

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The indexes of the entries held, into held; how many. */
static size_t collect_held(const hold_state *h, unsigned long *held)
{
    size_t n = 0;
    for (unsigned long i = 0; i < h->o->locks; i++)
        if (h->entries[i].state == ENTRY_HELD)
            held[n++] = h->entries[i].index;
    return n;
}

/* Up to HOLD_SAMPLE_KEYS held entries, at random; how many. */
static size_t pick_sample(const hold_state *h, unsigned long *keys)
{
    unsigned long *held = malloc(h->o->locks * sizeof(*held));
    if (held == NULL)
        return 0;
    size_t n = collect_held(h, held);
    uint64_t seed = (uint64_t)tc_now_ns() ^ ((uint64_t)getpid() << 32);
    size_t picked = 0;
    /* A partial Fisher-Yates shuffle. */
    for (; picked < n && picked < HOLD_SAMPLE_KEYS; picked++) {
        size_t j = picked + (size_t)(xorshift(&seed) % (n - picked));
        unsigned long t = held[picked];
        held[picked] = held[j];
        held[j] = t;
        keys[picked] = held[picked];
    }
    free(held);
    return picked;
}

/* Lock-seconds held in [start, end] by locks held at start. */
static double lock_seconds(const hold_state *h, int64_t start, int64_t end)
{
    double sum = 0;
    for (unsigned long i = 0; i < h->o->locks; i++) {
        const entry *e = &h->entries[i];
        if (e->state != ENTRY_HELD && e->state != ENTRY_LOST)
            continue;
        if (e->lost_ns != 0 && e->lost_ns < start)
            continue;
        int64_t until = e->lost_ns != 0 && e->lost_ns < end ? e->lost_ns : end;
        sum += (double)(until - start) / 1e9;
    }
    return sum;
}

static unsigned long count_held(const hold_state *h)
{
    unsigned long n = 0;
    for (unsigned long i = 0; i < h->o->locks; i++)
        n += h->entries[i].state == ENTRY_HELD;
    return n;
}

/* The probe reads once a second; a short hold (the smoke run) more often. */
static int64_t probe_period_ms(const hold_options *o)
{
    return o->hold_seconds >= 8 ? 1000 : (int64_t)(o->hold_seconds * 1000 / 8) + 1;
}

/* The client's statistics now, or NULL when they cannot be read. One
 * buffer, some 30 KiB, read on the loop thread only. */
static const redlock_stats *client_stats(const redlock_client *client)
{
    static redlock_stats st;
    memset(&st, 0, sizeof(st));
    st.size = sizeof(st);
    return redlock_client_stats(client, &st) == REDLOCK_OK ? &st : NULL;
}

static bool client_extends(const redlock_client *client, uint64_t *extends)
{
    const redlock_stats *st = client_stats(client);
    if (st == NULL)
        return false;
    *extends = st->extends;
    return true;
}

/* What the masters spent so far and the client's extends, at one instant:
 * the loop does not run between the two readings, so no extension
 * completes in between. The masters' CPU is -1 when one cannot be read
 * (why says which), extends_read false when the client's cannot. */
typedef struct spent {
    double masters_cpu_s;
    bool extends_read;
    uint64_t extends;
} spent;

static spent read_spent(hold_state *h, redisContext **conns, char *why, size_t why_size)
{
    spent s = {.masters_cpu_s = hold_masters_cpu_s(h->ms, conns, why, why_size)};
    s.extends_read = client_extends(h->client, &s.extends);
    return s;
}

/* The masters' CPU and the client's extends between the two readings. */
static void spent_figures(hold_figures *f, const spent *a, const spent *b, const char *why)
{
    f->hold_extends_read = a->extends_read && b->extends_read;
    if (f->hold_extends_read)
        f->hold_extends = b->extends - a->extends;
    f->masters_cpu_read = a->masters_cpu_s >= 0 && b->masters_cpu_s >= 0 &&
                          b->masters_cpu_s >= a->masters_cpu_s;
    if (f->masters_cpu_read)
        f->masters_cpu_s = b->masters_cpu_s - a->masters_cpu_s;
    else if (a->masters_cpu_s >= 0 && b->masters_cpu_s >= 0)
        snprintf(f->masters_cpu_why_not, sizeof(f->masters_cpu_why_not),
                 "a master's CPU went down: restarted in the hold?");
    else
        snprintf(f->masters_cpu_why_not, sizeof(f->masters_cpu_why_not), "%s", why);
}

/* The requests the client has written to the masters, summed (a batch
 * counts each lock's); false when the statistics cannot be read. */
static bool client_requests(const redlock_client *client, uint64_t *out)
{
    const redlock_stats *st = client_stats(client);
    if (st == NULL)
        return false;
    *out = 0;
    for (unsigned i = 0; i < st->master_count; i++)
        *out += st->masters[i].requests;
    return true;
}

/* After a loop iteration in the hold: a reading of the requests when a
 * period has passed (the lag timer wakes the loop every 10 ms). */
static void rate_sample(hold_state *h)
{
    int64_t now = tc_now_ns();
    if (now < h->rate_next_ns || h->rate_n == h->rate_cap || h->rate_ns == NULL ||
        h->rate_requests == NULL)
        return;
    uint64_t requests = 0;
    if (!client_requests(h->client, &requests))
        return;
    h->rate_ns[h->rate_n] = now;
    h->rate_requests[h->rate_n++] = requests;
    h->rate_next_ns = now + h->rate_period_ns;
}

/* The extension request rate from the readings in [from_ns, to_ns]: the
 * mean, the busiest period and each period's. */
static void rate_figures(const hold_state *h, int64_t from_ns, int64_t to_ns, hold_figures *f)
{
    f->ext_mean_per_s = f->ext_busiest_per_s = -1;
    if (h->rate_ns == NULL || h->rate_requests == NULL)
        return;
    f->ext_series = calloc(h->rate_n > 0 ? h->rate_n : 1, sizeof(*f->ext_series));
    size_t first = h->rate_n;
    size_t prev = h->rate_n;
    for (size_t k = 0; k < h->rate_n; k++) {
        if (h->rate_ns[k] < from_ns || h->rate_ns[k] > to_ns)
            continue;
        if (prev < h->rate_n) {
            double rate = (double)(h->rate_requests[k] - h->rate_requests[prev]) * 1e9 /
                          (double)(h->rate_ns[k] - h->rate_ns[prev]);
            if (f->ext_series != NULL)
                f->ext_series[f->ext_seconds++] = rate;
            if (rate > f->ext_busiest_per_s)
                f->ext_busiest_per_s = rate;
        }
        if (first == h->rate_n)
            first = k;
        prev = k;
    }
    if (first < h->rate_n && prev != first) {
        f->ext_window_s = (double)(h->rate_ns[prev] - h->rate_ns[first]) / 1e9;
        f->ext_mean_per_s =
            (double)(h->rate_requests[prev] - h->rate_requests[first]) / f->ext_window_s;
    }
}

/* Hold for the hold time; the probe runs from its start and is asked to
 * stop at its end (joined later, so the loop never waits for it). The
 * masters' CPU is read just before and just after, outside the client's
 * CPU figure. */
static hold_probe *hold_all(hold_state *h, int64_t *start, int64_t *end)
{
    hold_figures *f = h->f;
    unsigned long keys[HOLD_SAMPLE_KEYS];
    f->sample_keys = pick_sample(h, keys);
    f->held_at_start = count_held(h);
    h->phase = PHASE_HOLD;
    hold_lag_switch(&h->lag, &f->lag_hold);
    int64_t period = probe_period_ms(h->o);
    f->probe_period_s = (double)period / 1000;
    size_t ticks = (size_t)(h->o->hold_seconds * 1000 / (double)period) + 16;
    redisContext *conns[BENCH_MAX_MASTERS] = {NULL};
    char why[sizeof(f->masters_cpu_why_not)] = "";
    spent before = read_spent(h, conns, why, sizeof(why));
    int64_t cpu = thread_cpu_us();
    *start = tc_now_ns();
    hold_probe *probe = hold_probe_start(h->ms, h->prefix, keys, f->sample_keys, period, ticks);
    h->rate_period_ns = period * 1000000;
    h->rate_next_ns = *start;
    h->rate_cap = ticks;
    h->rate_ns = calloc(ticks, sizeof(*h->rate_ns));
    h->rate_requests = calloc(ticks, sizeof(*h->rate_requests));
    if (h->rate_ns == NULL || h->rate_requests == NULL)
        h->rate_cap = 0;
    run_until(h, NULL, *start + (int64_t)(h->o->hold_seconds * 1e9), rate_sample);
    *end = tc_now_ns();
    f->heap_hold_max = h->lag.heap_max;
    if (probe != NULL)
        hold_probe_signal_stop(probe);
    f->hold_cpu_s = (double)(thread_cpu_us() - cpu) / 1e6;
    /* No second reading after a failed first: it would only wait again. */
    spent after = {.masters_cpu_s = -1};
    if (before.masters_cpu_s >= 0)
        after = read_spent(h, conns, why, sizeof(why));
    else
        after.extends_read = client_extends(h->client, &after.extends);
    spent_figures(f, &before, &after, why);
    for (size_t i = 0; i < h->ms->n; i++)
        if (conns[i] != NULL)
            redisFree(conns[i]);
    f->hold_seconds = (double)(*end - *start) / 1e9;
    f->lock_seconds = lock_seconds(h, *start, *end);
    f->rss_hold_end_kb = bench_rss_kb();
    return probe;
}

/* ---- Releasing ---------------------------------------------------------- */

static void on_released(int status, const redlock_result *r, void *arg)
{
    hold_state *h = arg;
    h->in_flight--;
    if (status == REDLOCK_OK) {
        h->f->released++;
    } else {
        h->f->release_failed++;
        h->f->release_status[status_index(status)]++;
    }
}

/* Release every lock acquired, held or lost (a lost lock's keys may still
 * be on some masters), while fewer than in_flight are out. The release
 * copies what it needs, so the handle goes at once. */
static void release_pump(hold_state *h)
{
    while (h->in_flight < h->o->in_flight && h->next < h->o->locks) {
        entry *e = &h->entries[h->next++];
        if (e->lock == NULL)
            continue;
        int rc = redlock_release_async(h->client, e->lock, on_released, h);
        redlock_lock_free(e->lock);
        e->lock = NULL;
        e->state = ENTRY_RELEASED;
        if (rc == REDLOCK_OK) {
            h->in_flight++;
        } else {
            h->f->release_failed++;
            h->f->release_status[status_index(rc)]++;
        }
    }
}

static bool release_done(const hold_state *h)
{
    return h->in_flight == 0 && h->next == h->o->locks;
}

static void release_all(hold_state *h)
{
    h->phase = PHASE_RELEASE;
    hold_lag_switch(&h->lag, &h->f->lag_release);
    h->next = 0;
    int64_t start = tc_now_ns();
    release_pump(h);
    run_until(h, release_done, start + RELEASE_MAX_NS, release_pump);
    h->f->release_seconds = (double)(tc_now_ns() - start) / 1e9;
}

/* ---- The run ------------------------------------------------------------ */

static void client_figures(const redlock_client *client, hold_figures *f)
{
    const redlock_stats *st = client_stats(client);
    if (st == NULL)
        return;
    f->extends = st->extends;
    f->extend_failures = st->extend_failures;
    f->auto_extend_failures = st->auto_extend_failures;
    f->lib_locks_lost = st->locks_lost;
    for (unsigned i = 0; i < st->master_count; i++) {
        const redlock_master_stats *m = &st->masters[i];
        f->requests += m->requests;
        f->late += m->late;
        f->connects += m->connects;
        for (int k = 0; k < REDLOCK_STATS_OUTCOMES; k++) {
            if (k == REDLOCK_MASTER_OK)
                f->outcome_ok += m->outcomes[k];
            else if (k == REDLOCK_MASTER_TIMEOUT)
                f->outcome_timeout += m->outcomes[k];
            else if (k == REDLOCK_MASTER_NOT_CONNECTED)
                f->outcome_not_connected += m->outcomes[k];
            else if (k == REDLOCK_MASTER_HELD || k == REDLOCK_MASTER_ABSENT)
                f->outcome_held_absent += m->outcomes[k];
            else
                f->outcome_other += m->outcomes[k];
        }
    }
}

static void on_close_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_break(loop, EVBREAK_ALL);
}

/* Free the client and run the loop until it has closed (bounded). */
static void close_client(hold_state *h)
{
    redlock_client_free(h->client);
    h->client = NULL;
    ev_timer guard;
    ev_timer_init(&guard, on_close_guard, CLOSE_MAX_S, 0.);
    ev_timer_start(h->loop, &guard);
    ev_unref(h->loop); /* the guard alone does not keep the loop running */
    ev_run(h->loop, 0);
    ev_ref(h->loop);
    ev_timer_stop(h->loop, &guard);
}

/* The client, its loop and the entries; false when the masters cannot be
 * reached. */
static bool hold_setup(hold_state *h)
{
    const hold_options *o = h->o;
    h->entries = malloc(o->locks * sizeof(*h->entries));
    if (h->entries == NULL)
        return false;
    /* Every entry written now, so that its pages count in "before". */
    for (unsigned long i = 0; i < o->locks; i++)
        h->entries[i] = (entry){.h = h, .index = i, .state = ENTRY_IDLE};
    h->retry = calloc(o->locks, sizeof(*h->retry));
    if (h->retry == NULL)
        return false;
    redlock_config *cfg = bench_config_default_retry(h->ms);
    h->loop = ev_loop_new(EVFLAG_AUTO);
    if (cfg == NULL || h->loop == NULL) {
        redlock_config_free(cfg);
        return false;
    }
    redlock_config_set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, o->command_timeout_ms);
    int rc = redlock_client_new(&h->client, cfg, h->loop);
    redlock_config_free(cfg);
    if (rc != REDLOCK_OK)
        return false;
    redlock_acquire_options_init(&h->opts);
    h->opts.ttl_ms = o->ttl_ms;
    snprintf(h->prefix, sizeof(h->prefix), "redlock-hold-bench:%ld:", (long)getpid());
    return connect_client(h);
}

static void hold_teardown(hold_state *h)
{
    if (h->client != NULL)
        close_client(h);
    if (h->loop != NULL)
        ev_loop_destroy(h->loop);
    /* An acquire that completed after the release phase had passed its
     * entry: the client released it as it closed; the handle is ours. */
    for (unsigned long i = 0; h->entries != NULL && i < h->o->locks; i++)
        redlock_lock_free(h->entries[i].lock);
    free(h->entries);
    free(h->rate_ns);
    free(h->rate_requests);
    free(h->retry);
}

/* What the probe read, over the hold after the first extension cycle. */
static void probe_figures(hold_state *h, hold_probe *probe, int64_t start, int64_t end)
{
    hold_figures *f = h->f;
    int64_t ttl_ms = h->o->ttl_ms;
    f->ext_theory_per_s = (double)f->held_at_start * (double)h->ms->n * 3000.0 / (double)ttl_ms;
    rate_figures(h, start + ttl_ms * 1000000 / 3, end, f);
    f->calls_mean_per_s = f->calls_busiest_per_s = -1;
    f->pttl_min_ms = -1;
    if (probe == NULL)
        return;
    probe_tick *ticks = NULL;
    size_t n = hold_probe_join(probe, &ticks);
    hold_probe_summarize(ticks, n, h->ms->n, start + ttl_ms * 1000000 / 3, end, f);
    free(ticks);
}

int hold_run(const bench_masters *ms, const hold_options *o, hold_figures *f)
{
    hold_state h = {.ms = ms, .o = o, .f = f};
    f->masters = ms->n;
    f->locks = o->locks;
    f->ttl_ms = o->ttl_ms;
    f->hold_seconds_asked = o->hold_seconds;
    f->first_loss_s = -1;
    f->lost_validity_min_ms = -1;
    f->keys_left = -1;
    /* Room for every lag sample, so recording allocates nothing. */
    samples_reserve(&f->lag_acquire, (size_t)(ACQUIRE_MAX_NS / NS_PER_S) * 100 + 1000);
    samples_reserve(&f->lag_hold, (size_t)(o->hold_seconds * 100) + 1000);
    samples_reserve(&f->lag_release, 10000);
    if (!hold_setup(&h)) {
        fprintf(stderr, "redlock-hold-bench: the masters cannot be reached\n");
        hold_teardown(&h);
        return -1;
    }
    f->rss_before_kb = bench_rss_kb();
    f->heap_before = bench_live_bytes();
    hold_lag_start(&h.lag, h.loop, LAG_PERIOD_MS, &f->lag_acquire);
    h.lost_watch = hold_lost_watch_start(ms, h.prefix, o->ttl_ms);

    acquire_all(&h);
    f->rss_held_kb = bench_rss_kb();
    f->heap_held = bench_live_bytes();

    int64_t start = 0;
    int64_t end = 0;
    hold_probe *probe = hold_all(&h, &start, &end);
    for (unsigned long i = 0; i < o->locks; i++) {
        int64_t lost = h.entries[i].lost_ns;
        double after = (double)(lost - start) / 1e9;
        if (lost >= start && lost <= end && (f->first_loss_s < 0 || after < f->first_loss_s))
            f->first_loss_s = after;
    }

    release_all(&h);
    hold_lost_watch_stop(h.lost_watch, &f->lost_watch);
    h.lost_watch = NULL;
    hold_lag_stop(&h.lag);
    probe_figures(&h, probe, start, end);
    f->rss_after_kb = bench_rss_kb();
    f->heap_after = bench_live_bytes();
    /* The kernel updates VmHWM lazily: it may lag a reading of VmRSS. */
    f->rss_peak_kb = bench_peak_rss_kb();
    long readings[] = {f->rss_before_kb, f->rss_held_kb, f->rss_hold_end_kb, f->rss_after_kb};
    for (size_t i = 0; i < sizeof(readings) / sizeof(readings[0]); i++)
        if (readings[i] > f->rss_peak_kb)
            f->rss_peak_kb = readings[i];
    client_figures(h.client, f);
    hold_teardown(&h);

    f->keys_left = 0;
    for (size_t i = 0; i < ms->n && f->keys_left >= 0; i++) {
        long n = hold_count_keys(ms, i, h.prefix);
        f->keys_left = n < 0 ? -1 : f->keys_left + n;
    }
    fprintf(stderr, "redlock-hold-bench: the extend scripts' cost on master 0\n");
    hold_script_cost_measure(ms, h.prefix, &f->script_cost);
    fprintf(stderr, "redlock-hold-bench: redlock run through a recording proxy\n");
    for (int fenced = 0; fenced < HOLD_RTT_RUNS; fenced++) {
        char resource[HOLD_PREFIX_SIZE + 16];
        snprintf(resource, sizeof(resource), "%srtt:%d", h.prefix, fenced);
        hold_rtt_measure(ms, o->tool, resource, fenced, fenced && o->own_masters, &f->rtt[fenced]);
    }
    return 0;
}

void hold_figures_free(hold_figures *f)
{
    samples_free(&f->lag_acquire);
    samples_free(&f->lag_hold);
    samples_free(&f->lag_release);
    free(f->ext_series);
    f->ext_series = NULL;
    for (int i = 0; i < HOLD_RTT_RUNS; i++)
        hold_rtt_free(&f->rtt[i]);
}
