/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock-hold-bench: how one asynchronous client copes with many locks
 * held at once, each auto-extended (docs/performance.md, "Many locks in
 * one client").
 *
 *   redlock-hold-bench [--local N | --config FILE] [--locks K] [--ttl-ms T]
 *                      [--hold-seconds S] [--acquire-rate R] [--in-flight N]
 *                      [--command-timeout-ms MS] [--tool PATH] [--smoke] [--json]
 *
 * --local N (default 5) starts N redis-server masters on loopback for the
 * run; --config uses the masters a config file names (TCP nodes, no
 * passwords). Figures are printed, never asserted.
 */
#include "fleet.h"
#include "hold.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifndef REDLOCK_HOLD_TOOL
#define REDLOCK_HOLD_TOOL "redlock"
#endif

static void usage(void)
{
    fprintf(stderr,
            "usage: redlock-hold-bench [--local N | --config FILE] [--locks K] [--ttl-ms T]\n"
            "                          [--hold-seconds S] [--acquire-rate R] [--in-flight N]\n"
            "                          [--command-timeout-ms MS] [--tool PATH] [--smoke] "
            "[--json]\n");
}

/* An option that takes a value; false if a is not one. */
static bool set_value_option(hold_options *o, const char *a, const char *v)
{
    if (strcmp(a, "--local") == 0)
        o->local = strtoul(v, NULL, 10);
    else if (strcmp(a, "--config") == 0)
        o->config = v, o->local = 0;
    else if (strcmp(a, "--locks") == 0)
        o->locks = strtoul(v, NULL, 10);
    else if (strcmp(a, "--ttl-ms") == 0)
        o->ttl_ms = strtoll(v, NULL, 10);
    else if (strcmp(a, "--hold-seconds") == 0)
        o->hold_seconds = strtod(v, NULL);
    else if (strcmp(a, "--acquire-rate") == 0)
        o->acquire_rate = strtod(v, NULL);
    else if (strcmp(a, "--in-flight") == 0)
        o->in_flight = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(a, "--command-timeout-ms") == 0)
        o->command_timeout_ms = strtoll(v, NULL, 10);
    else if (strcmp(a, "--tool") == 0)
        o->tool = v;
    else
        return false;
    return true;
}

static bool options_valid(const hold_options *o)
{
    return (o->local > 0 || o->config != NULL) && o->local <= BENCH_MAX_MASTERS &&
           o->locks >= 1 && o->locks <= 10000000 && o->ttl_ms >= 30 && o->ttl_ms <= INT32_MAX &&
           o->hold_seconds > 0 && o->hold_seconds <= 86400 && o->acquire_rate >= 0 &&
           o->in_flight >= 1 && o->in_flight <= 1000000 && o->command_timeout_ms >= 1 &&
           o->command_timeout_ms <= 600000;
}

static int parse_options(int argc, char **argv, hold_options *o)
{
    *o = (hold_options){.local = 5,
                        .locks = 10000,
                        .ttl_ms = 10000,
                        .hold_seconds = 60,
                        .in_flight = 1000,
                        /* As redlock-bench: a loaded machine must not turn
                         * into failures by itself. */
                        .command_timeout_ms = 1000,
                        .tool = REDLOCK_HOLD_TOOL};
    for (int i = 1; i < argc && argv[i] != NULL; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v != NULL && set_value_option(o, argv[i], v)) {
            i++;
        } else if (strcmp(argv[i], "--smoke") == 0) {
            o->smoke = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = true;
        } else {
            usage();
            return -1;
        }
    }
    if (o->smoke) {
        o->locks = 200;
        o->hold_seconds = 2;
        o->ttl_ms = 1500;
    }
    if (!options_valid(o)) {
        usage();
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    hold_options o;
    if (parse_options(argc, argv, &o) != 0)
        return 64;
    signal(SIGPIPE, SIG_IGN); /* the masters' sockets; fleet_start() does it too */
    bench_masters ms;
    fleet *f = NULL;
    if (o.local > 0) {
        if ((f = fleet_start(o.local, NULL)) == NULL)
            return 70;
        bench_masters_from_fleet(f, o.local, &ms);
        o.own_masters = true;
    } else if (bench_masters_from_config("redlock-hold-bench", o.config, &ms) != 0) {
        return 78;
    }
    fprintf(stderr, "redlock-hold-bench: libredlock %s, %zu masters, %lu locks, TTL %lld ms, "
                    "hold %.1f s\n",
            redlock_version(), ms.n, o.locks, (long long)o.ttl_ms, o.hold_seconds);
    hold_figures figures;
    memset(&figures, 0, sizeof(figures));
    int rc = hold_run(&ms, &o, &figures);
    fleet_stop(f);
    if (rc == 0) {
        if (o.json)
            hold_print_json(stdout, &o, &figures);
        else
            hold_print_text(stdout, &o, &figures);
    }
    hold_figures_free(&figures);
    return rc == 0 ? 0 : 69;
}
