/* SPDX-License-Identifier: BSD-3-Clause */
/* redlock_stats_format_prometheus(): the names, units and labels of the
 * exposition, label values escaped, and the buffer too small told with the
 * size it needs, never a truncated text. */
#include "redlock/redlock.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static redlock_stats stats; /* some 30 KiB */
static char text[256 * 1024];

/* Two masters: one ready with a trusted clock, one down and restarted. */
static void fill(redlock_stats *s)
{
    memset(s, 0, sizeof(*s));
    s->size = sizeof(*s);
    s->acquires[0] = 3;
    s->acquires[-REDLOCK_ECONFLICT] = 2;
    s->extends = 5;
    s->locks_held = 1;
    s->hold_ms[1] = 1; /* [1, 2) ms */
    s->hold_sum_ms = 1500;
    s->master_count = 2;
    s->masters[0].state = REDLOCK_CONNECTION_READY;
    s->masters[0].connects = 1;
    s->masters[0].requests = 7;
    s->masters[0].outcomes[REDLOCK_MASTER_NOT_CONNECTED] = 4;
    s->masters[0].late = 6;
    s->masters[0].latency_us[20] = 2; /* below 2^20 us */
    s->masters[0].latency_sum_us = 1500001;
    s->masters[1].state = REDLOCK_CONNECTION_DOWN;
    s->clocks[0].state = REDLOCK_CLOCK_TRUSTED;
    s->clocks[1].state = REDLOCK_CLOCK_FAST;
    s->clocks[1].slow = true;
    s->restarts[0].state = REDLOCK_RESTART_COUNTS;
    s->restarts[1].state = REDLOCK_RESTART_EXCLUDED;
    s->restarts[1].excluded_ms = 1001;
}

static redlock_config *two_masters(const char *second)
{
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_new(&cfg), REDLOCK_OK);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "127.0.0.1", 7001, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_config_add_unix_node(cfg, second, NULL), REDLOCK_OK);
    return cfg;
}

static void render(const redlock_config *cfg, const char *prefix)
{
    size_t needed = 0;
    cr_assert_eq(redlock_stats_format_prometheus(&stats, cfg, prefix, text, sizeof(text), &needed),
                 REDLOCK_OK);
    cr_assert_eq(needed, strlen(text) + 1);
}

static void has_line(const char *line)
{
    size_t n = strlen(line);
    for (const char *p = strstr(text, line); p != NULL; p = strstr(p + 1, line))
        if ((p == text || p[-1] == '\n') && p[n] == '\n')
            return;
    cr_assert_fail("no line \"%s\" in:\n%s", line, text);
}

Test(stats_prometheus, counters_units_and_enum_states_are_named_as_prometheus_asks)
{
    fill(&stats);
    redlock_config *cfg = two_masters("/tmp/m.sock");
    render(cfg, NULL);
    has_line("# HELP redlock_acquires_total Acquires completed, by status.");
    has_line("# TYPE redlock_acquires_total counter");
    has_line("redlock_acquires_total{status=\"ok\"} 3");
    has_line("redlock_acquires_total{status=\"conflict\"} 2");
    has_line("redlock_acquires_total{status=\"noquorum\"} 0"); /* every status, from 0 */
    has_line("redlock_extends_total 5");
    has_line("# TYPE redlock_locks_held gauge");
    has_line("redlock_locks_held 1");
    has_line("# TYPE redlock_hold_seconds histogram");
    has_line("redlock_hold_seconds_bucket{le=\"0.001\"} 0");
    has_line("redlock_hold_seconds_bucket{le=\"0.002\"} 1");
    has_line("redlock_hold_seconds_bucket{le=\"+Inf\"} 1");
    has_line("redlock_hold_seconds_sum 1.5");
    has_line("redlock_hold_seconds_count 1");
    has_line("redlock_master_up{master=\"127.0.0.1:7001\"} 1");
    has_line("redlock_master_up{master=\"unix:/tmp/m.sock\"} 0");
    has_line("redlock_master_state{master=\"127.0.0.1:7001\",state=\"ready\"} 1");
    has_line("redlock_master_state{master=\"127.0.0.1:7001\",state=\"down\"} 0");
    has_line("redlock_master_state{master=\"unix:/tmp/m.sock\",state=\"down\"} 1");
    has_line("redlock_master_state{master=\"unix:/tmp/m.sock\",state=\"ready\"} 0");
    has_line("redlock_master_connects_total{master=\"127.0.0.1:7001\"} 1");
    has_line("redlock_master_requests_total{master=\"127.0.0.1:7001\"} 7");
    has_line("redlock_master_outcomes_total{master=\"127.0.0.1:7001\",outcome=\"not-connected\"} 4");
    has_line("redlock_master_outcomes_total{master=\"127.0.0.1:7001\",outcome=\"ok\"} 0");
    has_line("redlock_master_late_replies_total{master=\"127.0.0.1:7001\"} 6");
    has_line("redlock_master_latency_seconds_bucket{master=\"127.0.0.1:7001\",le=\"0.524288\"} 0");
    has_line("redlock_master_latency_seconds_bucket{master=\"127.0.0.1:7001\",le=\"1.048576\"} 2");
    has_line("redlock_master_latency_seconds_sum{master=\"127.0.0.1:7001\"} 1.500001");
    has_line("redlock_master_latency_seconds_count{master=\"127.0.0.1:7001\"} 2");
    has_line("redlock_master_clock_state{master=\"127.0.0.1:7001\",state=\"trusted\"} 1");
    has_line("redlock_master_clock_state{master=\"127.0.0.1:7001\",state=\"fast\"} 0");
    has_line("redlock_master_clock_state{master=\"unix:/tmp/m.sock\",state=\"fast\"} 1");
    has_line("redlock_master_clock_slow{master=\"unix:/tmp/m.sock\"} 1");
    has_line("redlock_master_restart_state{master=\"127.0.0.1:7001\",state=\"counts\"} 1");
    has_line("redlock_master_restart_state{master=\"unix:/tmp/m.sock\",state=\"excluded\"} 1");
    has_line("redlock_master_restart_excluded_seconds{master=\"unix:/tmp/m.sock\"} 2");
    /* No "ms" unit, no upper case in a label value, and every sample's
     * metric has its TYPE line before it. */
    cr_assert_null(strstr(text, "_ms"));
    char *save = NULL;
    static char copy[sizeof(text)];
    memcpy(copy, text, strlen(text) + 1);
    for (char *line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        for (const char *q = strchr(line, '"'); q != NULL && q < strchr(line, '}');
             q = strchr(q + 1, '"'))
            cr_assert(!isupper((unsigned char)q[1]), "upper case label value: %s", line);
        char name[128];
        size_t n = strcspn(line, "{ ");
        cr_assert_lt(n, sizeof(name));
        memcpy(name, line, n);
        name[n] = '\0';
        for (const char *suffix = "_bucket\0_sum\0_count\0"; *suffix; suffix += strlen(suffix) + 1)
            if (n > strlen(suffix) && strcmp(name + n - strlen(suffix), suffix) == 0 &&
                (strstr(line, "latency") != NULL || strstr(line, "hold") != NULL))
                name[n - strlen(suffix)] = '\0';
        char type[160];
        snprintf(type, sizeof(type), "# TYPE %s ", name);
        const char *t = strstr(text, type);
        cr_assert(t != NULL && t < text + (line - copy), "no TYPE before: %s", line);
    }
    redlock_config_free(cfg);
}

Test(stats_prometheus, label_values_are_escaped_and_no_config_labels_by_index)
{
    fill(&stats);
    redlock_config *cfg = two_masters("/tmp/a\"b\\c");
    render(cfg, NULL);
    has_line("redlock_master_up{master=\"unix:/tmp/a\\\"b\\\\c\"} 0");
    redlock_config_free(cfg);
    render(NULL, NULL);
    has_line("redlock_master_up{master=\"0\"} 1");
    has_line("redlock_master_up{master=\"1\"} 0");
}

Test(stats_prometheus, a_prefix_names_every_metric_and_a_bad_one_is_refused)
{
    fill(&stats);
    render(NULL, "app_lock");
    has_line("# TYPE app_lock_acquires_total counter");
    has_line("app_lock_master_up{master=\"0\"} 1");
    cr_assert_null(strstr(text, "redlock_"));
    char too_long[66];
    memset(too_long, 'x', sizeof(too_long) - 1);
    too_long[sizeof(too_long) - 1] = '\0'; /* 65 characters */
    const char *bad[] = {"", "1x", "a-b", "a:b", "a b", too_long};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(redlock_stats_format_prometheus(&stats, NULL, bad[i], text, sizeof(text), NULL),
                     REDLOCK_EINVAL, "%s", bad[i]);
}

Test(stats_prometheus, a_buffer_too_small_gives_the_size_needed_and_no_text)
{
    fill(&stats);
    render(NULL, NULL);
    size_t full = strlen(text) + 1;
    static char small[sizeof(text)];
    size_t needed = 0;
    memset(small, 'x', sizeof(small));
    cr_assert_eq(redlock_stats_format_prometheus(&stats, NULL, NULL, small, full - 1, &needed),
                 REDLOCK_ENOSPC);
    cr_assert_eq(needed, full);
    cr_assert_eq(small[0], '\0');
    cr_assert_eq(redlock_stats_format_prometheus(&stats, NULL, NULL, NULL, 0, &needed),
                 REDLOCK_ENOSPC);
    cr_assert_eq(needed, full);
    cr_assert_eq(redlock_stats_format_prometheus(&stats, NULL, NULL, small, full, &needed),
                 REDLOCK_OK);
    cr_assert_str_eq(small, text);
    cr_assert_str_neq(redlock_strerror(REDLOCK_ENOSPC), "unknown status");
}

Test(stats_prometheus, an_older_snapshot_leaves_out_what_it_lacks)
{
    fill(&stats);
    stats.size = offsetof(redlock_stats, restarts);
    render(NULL, NULL);
    has_line("redlock_master_up{master=\"0\"} 1");
    cr_assert_null(strstr(text, "restart_state"));
    cr_assert_null(strstr(text, "clock_state"));
    stats.size = offsetof(redlock_stats, masters);
    cr_assert_eq(redlock_stats_format_prometheus(&stats, NULL, NULL, text, sizeof(text), NULL),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_stats_format_prometheus(NULL, NULL, NULL, text, sizeof(text), NULL),
                 REDLOCK_EINVAL);
}
