/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check: what on each master makes Redlock unsafe there, and what to
 * change. A ping (latency, clock verdicts, restart state) and the
 * library's health snapshot (redlock_health_async(): INFO, CONFIG GET,
 * what the ACL allows), each master's findings from both, and an exit
 * status a monitoring script can act on (docs/cli.md):
 *   0 every master safe, nothing found; 1 findings, but a quorum of
 *   masters safe; 69 fewer safe masters than a quorum; 77 credentials
 *   refused.
 */
#include "cli_command.h"

#include <stdarg.h>
#include <string.h>

#define CLI_EXIT_FINDINGS 1

/* ---- the health snapshot, waited for ---------------------------------- */

typedef struct health_wait {
    bool done;
    int status;
    redlock_health health;
} health_wait;

static void on_health(int status, const redlock_health *health, void *arg)
{
    health_wait *w = arg;
    w->done = true;
    w->status = status;
    if (health != NULL)
        w->health = *health;
}

static void on_guard(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t, (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* The snapshot, or NULL. The library completes it within a command
 * timeout; the guard only bounds the loop. */
static const redlock_health *read_health(cli *c, health_wait *w)
{
    if (redlock_health_async(c->client, on_health, w) != REDLOCK_OK)
        return NULL;
    int64_t timeout_ms = 0;
    redlock_config_get(c->cfg, REDLOCK_COMMAND_TIMEOUT_MS, &timeout_ms);
    ev_timer guard;
    ev_timer_init(&guard, on_guard, (double)(timeout_ms + 1000) / 1000.0, 0.);
    ev_timer_start(c->loop, &guard);
    while (!w->done && ev_is_active(&guard))
        ev_run(c->loop, EVRUN_ONCE);
    ev_timer_stop(c->loop, &guard);
    return w->done && w->status == REDLOCK_OK ? &w->health : NULL;
}

/* ---- findings ---------------------------------------------------------- */

static void add(cli_check_master *cm, int severity, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(cli_check_master *cm, int severity, const char *code, const char *fmt, ...)
{
    if (cm->finding_count >= CLI_CHECK_MAX_FINDINGS)
        return;
    cli_finding *f = &cm->findings[cm->finding_count++];
    f->severity = severity;
    f->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof(f->message), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): started above
    va_end(ap);
    if (severity > cm->state)
        cm->state = severity;
}

static int64_t setting(const cli *c, redlock_setting key)
{
    int64_t value = 0;
    redlock_config_get(c->cfg, key, &value);
    return value;
}

/* The clock verdict, and why a clock is not checked. */
static void check_clock(const cli *c, const redlock_master_result *m,
                        const redlock_master_health *h, cli_check_master *cm)
{
    cm->clock_why[0] = '\0';
    if (m->clock_state == REDLOCK_CLOCK_FAST) {
        cm->clock = "fast";
        if (m->clock_rate_lo > 0)
            add(cm, CLI_CHECK_UNSAFE, "clock-fast",
                "its expiry clock runs at least %.2f times ours: its keys expire early, so two "
                "clients can hold the lock (its OKs are not counted); fix the host's clock or "
                "time source, or replace the master",
                m->clock_rate_lo);
        else
            add(cm, CLI_CHECK_UNSAFE, "clock-fast",
                "its clock probe key vanished before its time: its keys expire early (or are "
                "deleted), so two clients can hold the lock (its OKs are not counted); fix the "
                "host's clock, or what deletes redlock:clock:* keys");
    } else if (m->clock_slow) {
        cm->clock = "slow";
        add(cm, CLI_CHECK_WARNING, "clock-slow",
            "its expiry clock runs slower than ours: locks there outlive their TTL, so a lock "
            "whose holder died is taken again late; fix the host's clock or time source");
    } else if (m->clock_state == REDLOCK_CLOCK_TRUSTED) {
        cm->clock = "ok";
    } else {
        cm->clock = "not-checked";
        if (setting(c, REDLOCK_CLOCK_CHECK) == REDLOCK_CLOCK_CHECK_OFF)
            snprintf(cm->clock_why, sizeof(cm->clock_why), "clock_check is off");
        else if (h != NULL && h->probe_keys == 0)
            snprintf(cm->clock_why, sizeof(cm->clock_why),
                     "the ACL refuses the clock probe keys");
        else if (m->clock_state == REDLOCK_CLOCK_CHECKING)
            snprintf(cm->clock_why, sizeof(cm->clock_why), "too few samples yet");
        else
            snprintf(cm->clock_why, sizeof(cm->clock_why), "no probe answered");
    }
}

/* "none", "rdb", "aof (appendfsync X)", "rdb+aof (...)", or "unknown". */
static void describe_persistence(const redlock_master_health *h, cli_check_master *cm)
{
    const char *fsync = h->appendfsync[0] != '\0' ? h->appendfsync : "unknown";
    if (h->aof_enabled < 0)
        snprintf(cm->persistence, sizeof(cm->persistence), "unknown");
    else if (h->aof_enabled == 1)
        snprintf(cm->persistence, sizeof(cm->persistence), "%saof (appendfsync %s)",
                 h->rdb == 1 ? "rdb+" : "", fsync);
    else if (h->rdb < 0)
        snprintf(cm->persistence, sizeof(cm->persistence), "no aof, rdb unknown");
    else
        snprintf(cm->persistence, sizeof(cm->persistence), "%s", h->rdb ? "rdb" : "none");
}

/* How persistence fits the restart rule (docs/safety.md, "Masters
 * restarted empty"): only a durable declaration is the operator's claim
 * to check. */
static void check_persistence(const redlock_master_health *h, cli_check_master *cm)
{
    describe_persistence(h, cm);
    if (!h->durable)
        return; /* a restart is waited out for max_ttl_ms, whatever it keeps */
    if (h->aof_enabled == 0)
        add(cm, CLI_CHECK_UNSAFE, "durable",
            "declared durable, but appendonly is off: a restart loses its lock keys and it "
            "counts at once, so two clients can hold the lock; set appendonly yes and "
            "appendfsync always, or drop durable so a restart is waited out");
    else if (h->aof_enabled == 1 && h->appendfsync[0] != '\0' &&
             strcmp(h->appendfsync, "always") != 0)
        add(cm, CLI_CHECK_UNSAFE, "durable",
            "declared durable, but appendfsync is %s: a crash loses the last writes, lock keys "
            "with them, and it counts at once, so two clients can hold the lock; set appendfsync "
            "always, or drop durable so a restart is waited out",
            h->appendfsync);
    else if (h->aof_enabled < 0 || h->appendfsync[0] == '\0')
        add(cm, CLI_CHECK_WARNING, "durable",
            "declared durable, but its persistence cannot be read (CONFIG GET refused): the "
            "declaration is unchecked; allow the user +config|get, or check appendonly yes and "
            "appendfsync always by hand");
}

static void check_settings(const redlock_master_health *h, cli_check_master *cm)
{
    if (strcmp(h->role, "slave") == 0 || strcmp(h->role, "replica") == 0)
        add(cm, CLI_CHECK_UNSAFE, "replica",
            "it is a replica, not a master: it refuses lock writes (READONLY) or loses them "
            "to its master's copy, and it fails over with its master, which is then one server "
            "counted twice; point the config at independent masters");
    if (h->cluster_enabled == 1)
        add(cm, CLI_CHECK_UNSAFE, "cluster",
            "cluster mode is on: it refuses lock keys of slots it does not serve (MOVED), and "
            "its failovers lose acknowledged writes; use standalone masters (cluster-enabled "
            "no)");
    if (h->maxmemory_policy[0] != '\0' && strcmp(h->maxmemory_policy, "noeviction") != 0)
        add(cm, CLI_CHECK_UNSAFE, "maxmemory-policy",
            "maxmemory-policy is %s: Redis may evict lock keys, so two clients can hold the "
            "lock; set maxmemory-policy noeviction",
            h->maxmemory_policy);
    if (h->scripting == 0)
        add(cm, CLI_CHECK_UNSAFE, "scripting",
            "scripts are refused (%s): fenced (redlock's default), reentrant and "
            "multi-resource locks run Lua scripts there, and so does every lock on a server "
            "without SET IFEQ and DELIFEQ or DELEX (before Valkey 9.0 and Redis 8.4); allow "
            "the user +eval +evalsha +script|load",
            h->scripting_error);
    if (h->probe_keys == 0)
        add(cm, CLI_CHECK_WARNING, "acl-probe-keys",
            "the ACL refuses the clock probe keys (%s): its clock is not checked, so a fast "
            "clock would go unnoticed; add ~redlock:clock:* to the user",
            h->probe_keys_error);
    if (h->marker_keys == 0)
        add(cm, CLI_CHECK_WARNING, "acl-marker-keys",
            "the ACL refuses the restart marker keys (%s): were INFO's run_id hidden, a restart "
            "could not be told; add ~redlock:restart:* to the user",
            h->marker_keys_error);
}

/* A master not counted now for its restart (as ping says). */
static void check_restart(const redlock_stats *s, unsigned i, cli_check_master *cm)
{
    if (s == NULL || i >= s->master_count || s->restarts[i].state != REDLOCK_RESTART_EXCLUDED)
        return;
    add(cm, CLI_CHECK_UNSAFE, "restarted",
        "it restarted without being declared durable: its OKs count only in %lld s, once its "
        "lost keys have expired everywhere; nothing to change (declare it durable only if it "
        "runs appendonly yes with appendfsync always)",
        (long long)((s->restarts[i].excluded_ms + 999) / 1000));
}

static void check_master(const cli *c, const redlock_master_result *m,
                         const redlock_master_health *h, const redlock_stats *s, unsigned i,
                         cli_check_master *cm)
{
    memset(cm, 0, sizeof(*cm));
    snprintf(cm->persistence, sizeof(cm->persistence), "unknown");
    check_clock(c, m, h, cm);
    if (m->outcome != REDLOCK_MASTER_OK) {
        const char *why = m->detail ? m->detail : redlock_master_outcome_name(m->outcome);
        if (strstr(why, "the same Redis server as") != NULL)
            add(cm, CLI_CHECK_UNSAFE, "same-server",
                "%s; remove one of the two entries from the config", why);
        cm->state = CLI_CHECK_UNREACHABLE;
        return;
    }
    if (h != NULL && h->connected) {
        check_settings(h, cm);
        check_persistence(h, cm);
    }
    check_restart(s, i, cm);
}

/* ---- output ------------------------------------------------------------ */

static const char *state_name(int state)
{
    static const char *const names[] = {"ok", "warning", "unsafe", "unreachable"};
    return state >= 0 && state <= CLI_CHECK_UNREACHABLE ? names[state] : "unknown";
}

static void print_text(const redlock_result *r, const cli_check_master *masters)
{
    char shown[1024];
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        const cli_check_master *cm = &masters[i];
        printf("%s  %s", m->name, state_name(cm->state));
        if (m->outcome == REDLOCK_MASTER_OK) {
            printf("  %.2f ms  clock %s", (double)m->latency_us / 1000.0, cm->clock);
            if (cm->clock_why[0] != '\0')
                printf(" (%s)", cm->clock_why);
            printf("  persistence %s", cm->persistence);
            if (m->server != NULL)
                printf("  server %s", m->server);
        } else {
            printf("  (%s)",
                   cli_shown(shown, sizeof(shown),
                             m->detail ? m->detail : redlock_master_outcome_name(m->outcome)));
        }
        printf("\n");
        for (unsigned f = 0; f < cm->finding_count; f++)
            printf("  %s: %s\n", cm->findings[f].severity == CLI_CHECK_UNSAFE ? "unsafe" : "warning",
                   cli_shown(shown, sizeof(shown), cm->findings[f].message));
    }
}

int cmd_check(cli *c, const cli_options *o, char **operands, int count)
{
    (void)operands;
    (void)count;
    int status = 0;
    int rc = cli_open_and_ping(c, "check", &status);
    if (rc != 0)
        return rc;
    const redlock_result *r = c->result;
    static redlock_stats stats; /* some 30 KiB: not on the stack */
    stats.size = sizeof(stats);
    const redlock_stats *s = redlock_client_stats(c->client, &stats) == REDLOCK_OK ? &stats : NULL;
    static health_wait wait;
    const redlock_health *h = read_health(c, &wait);

    static cli_check_master masters[REDLOCK_MAX_NODES];
    unsigned safe = 0;
    bool findings = false;
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_health *mh = h != NULL && i < h->master_count ? &h->masters[i] : NULL;
        check_master(c, &r->masters[i], mh, s, i, &masters[i]);
        safe += masters[i].state <= CLI_CHECK_WARNING;
        findings = findings || masters[i].state != CLI_CHECK_OK;
    }
    if (o->json)
        cli_print_json(cli_json_check(status, r, s, h, masters, safe));
    else
        print_text(r, masters);

    if (h == NULL)
        cli_error("check: the masters' settings could not be read");
    if (safe < r->quorum) {
        cli_error("check: %u of %u masters safe, %u needed", safe, r->master_count, r->quorum);
        int exit = cli_exit_for(status, r);
        return exit == EX_NOPERM ? EX_NOPERM : EX_UNAVAILABLE;
    }
    if (findings || h == NULL) {
        cli_error("check: %u of %u masters safe (%u needed), with findings", safe,
                  r->master_count, r->quorum);
        return CLI_EXIT_FINDINGS;
    }
    return 0;
}
