/* SPDX-License-Identifier: BSD-3-Clause */
/* status, ping and fencing-init: what every master says, one line each
 * (or JSON). */
#include "cli_command.h"

#include <string.h>

static bool reachable(const redlock_master_result *m)
{
    return m->outcome == REDLOCK_MASTER_OK;
}

/* Why a master is unreachable, or NULL. */
static const char *problem(const redlock_master_result *m)
{
    if (reachable(m))
        return NULL;
    return m->detail ? m->detail : redlock_master_outcome_name(m->outcome);
}

/* "unreachable  (why)" and a newline, why escaped: a server's reply may
 * hold any byte but CR and LF. A master that answered NOPERM is reached:
 * "refused: NOPERM ...". */
static void print_problem(const redlock_master_result *m)
{
    char why[1024];
    if (m->outcome == REDLOCK_MASTER_REFUSED)
        printf("refused: %s\n", cli_shown(why, sizeof(why), problem(m)));
    else
        printf("unreachable  (%s)\n", cli_shown(why, sizeof(why), problem(m)));
}

/* The client's counters after the command, or NULL. */
static const redlock_stats *client_stats(const cli *c)
{
    static redlock_stats stats; /* some 30 KiB: not on the stack */
    stats.size = sizeof(stats);
    return redlock_client_stats(c->client, &stats) == REDLOCK_OK ? &stats : NULL;
}

/* The server, as INFO named it when this process connected. */
static void print_server(const redlock_master_result *m)
{
    if (m->server != NULL)
        printf("  server %s", m->server);
}

/* The master's clock, when something was proven of it. */
static void print_clock(const redlock_master_result *m)
{
    if (m->clock_state == REDLOCK_CLOCK_FAST && m->clock_rate_lo > 0)
        printf("  clock fast (rate >= %.2f): not counted", m->clock_rate_lo);
    else if (m->clock_state == REDLOCK_CLOCK_FAST)
        printf("  clock fast (its probe vanished): not counted");
    else if (m->clock_slow)
        printf("  clock slow");
}

/* The master's restart, when it is excluded for it (docs/safety.md,
 * "Masters restarted empty"), as the library words it in a result's
 * detail; nothing for a master that counts. */
static void print_restart(const redlock_stats *s, unsigned i)
{
    if (s == NULL || i >= s->master_count || s->restarts[i].state != REDLOCK_RESTART_EXCLUDED)
        return;
    const redlock_master_restart *r = &s->restarts[i];
    long long ago_s = r->age_ms < 0 ? 0 : (long long)(r->age_ms / 1000);
    printf("  restarted %lld s ago: not counted for %lld s more", ago_s,
           (long long)((r->excluded_ms + 999) / 1000));
}

/* Masters that answered and whose OKs count now for their restart; a
 * master whose run is not known yet does not. Without stats, all that
 * answered. */
static unsigned masters_counted(const redlock_result *r, const redlock_stats *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < r->master_count; i++)
        if (reachable(&r->masters[i]) &&
            (s == NULL || i >= s->master_count || s->restarts[i].state == REDLOCK_RESTART_COUNTS))
            n++;
    return n;
}

/* Who holds the key, as its value says (the acquire's holder label); a
 * value without that metadata (an earlier version, no label, a reentrant
 * key's owner token) names no holder. */
static void print_holder(const redlock_master_result *m)
{
    redlock_holder h;
    if (redlock_value_holder(m->value, m->value_len, &h) != REDLOCK_OK) {
        printf("  unknown holder");
        return;
    }
    char since[CLI_TIME_SIZE];
    printf("  holder %s pid %lld since %s label %s", h.host, (long long)h.pid,
           cli_utc_time(since, h.since_ms), h.label);
}

static void print_status_text(const redlock_result *r, const redlock_stats *s)
{
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        printf("%s  ", m->name);
        if (!reachable(m)) {
            print_problem(m);
        } else if (m->pttl_ms == CLI_PTTL_MIXED) {
            printf("mixed  (not all held by one value)");
            print_server(m);
            print_clock(m);
            print_restart(s, i);
            printf("\n");
        } else if (m->value == NULL) {
            printf("free");
            print_server(m);
            print_clock(m);
            print_restart(s, i);
            printf("\n");
        } else {
            printf("held  ");
            text_bytes(stdout, m->value, m->value_len);
            if (m->pttl_ms >= 0)
                printf("  pttl %lld ms", (long long)m->pttl_ms);
            else
                printf("  no expiry");
            if (m->fencing_token != 0)
                printf("  token %llu", (unsigned long long)m->fencing_token);
            print_server(m);
            print_clock(m);
            print_restart(s, i);
            print_holder(m); /* last: the label may hold spaces */
            printf("\n");
        }
    }
}

int cmd_status(cli *c, const cli_options *o, char **operands, int count)
{
    cli_resources set;
    int rc = cli_resources_take("status", operands, count, 0, &set);
    if (rc != 0 || (rc = cli_open(c)) != 0)
        return rc;

    char shown[CLI_SHOWN_SET_SIZE];
    cli_resources_shown(&set, shown, sizeof(shown));
    int status = cli_inspect(c, &set, &c->result);
    if (c->result == NULL) {
        cli_error("status %s: %s", shown, redlock_strerror(status));
        return EX_SOFTWARE;
    }
    const redlock_stats *stats = client_stats(c);
    if (o->json)
        cli_print_json(cli_json_status(&set, status, c->result, stats));
    else
        print_status_text(c->result, stats);
    if (status != REDLOCK_OK)
        cli_error("status %s: %s", shown, redlock_strerror(status));
    return cli_exit_for(status, c->result);
}

int cmd_ping(cli *c, const cli_options *o, char **operands, int count)
{
    int status = 0;
    int rc = cli_open_and_ping(c, "ping", &status);
    if (rc != 0)
        return rc;
    const redlock_result *r = c->result;
    const redlock_stats *stats = client_stats(c);
    /* A quorum answered, but too few of them count: no lock could be
     * taken now, which is no health to report. */
    unsigned counted = masters_counted(r, stats);
    if (status == REDLOCK_OK && counted < r->quorum)
        status = REDLOCK_ERESTARTED;
    if (o->json) {
        cli_print_json(cli_json_ping(status, r, stats));
    } else {
        for (unsigned i = 0; i < r->master_count; i++) {
            const redlock_master_result *m = &r->masters[i];
            if (reachable(m)) {
                printf("%s  ok  %.2f ms", m->name, (double)m->latency_us / 1000.0);
                print_server(m);
                print_restart(stats, i);
                printf("\n");
            } else {
                printf("%s  ", m->name);
                print_problem(m);
            }
        }
    }
    if (status == REDLOCK_ERESTARTED)
        cli_error("ping: %s (%u of %u masters count, %u needed)", redlock_strerror(status),
                  counted, r->master_count, r->quorum);
    else if (status != REDLOCK_OK)
        cli_error("ping: %s", redlock_strerror(status));
    return cli_exit_for(status, r);
}

/* FLOOR: a decimal below 2^53, the greatest counter the masters compare
 * exactly. */
static bool parse_floor(const char *text, uint64_t *out)
{
    uint64_t n = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9' && n < (UINT64_C(1) << 53); p++)
        n = n * 10 + (uint64_t)(*p - '0');
    if (*text == '\0' || *p != '\0' || n >= (UINT64_C(1) << 53))
        return false;
    *out = n;
    return true;
}

int cmd_fencing_init(cli *c, const cli_options *o, char **operands, int count)
{
    uint64_t floor = 0;
    if (count > 1 || (count == 1 && !parse_floor(operands[0], &floor))) {
        cli_error("fencing-init: expected at most one FLOOR, a whole number below 2^53");
        return EX_USAGE;
    }
    int rc = cli_open(c);
    if (rc != 0)
        return rc;
    int status = cli_fencing_init(c, floor, &c->result);
    const redlock_result *r = c->result;
    if (r == NULL) {
        cli_error("fencing-init: %s", redlock_strerror(status));
        return EX_SOFTWARE;
    }
    if (o->json) {
        cli_print_json(cli_json_fencing_init(status, floor, r));
    } else {
        for (unsigned i = 0; i < r->master_count; i++) {
            const redlock_master_result *m = &r->masters[i];
            printf("%s  ", m->name);
            if (reachable(m))
                printf("%s\n", cli_fencing_initialized(m) ? "initialized" : "in use already");
            else
                print_problem(m);
        }
    }
    if (status != REDLOCK_OK)
        cli_error("fencing-init: %s (%u of %u masters have their counter in use, %u needed)",
                  redlock_strerror(status), r->masters_locked, r->master_count, r->quorum);
    return cli_exit_for(status, r);
}
