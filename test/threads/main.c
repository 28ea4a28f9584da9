/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The thread tests' runner: `threads_tests [--list] [SCENARIO...]` runs the
 * named scenarios (all without names), each with a fresh fleet, and exits 0
 * only when every check of every scenario held. ctest runs one scenario
 * per test.
 */
#include "threads.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static const scenario scenarios[] = {
    {"contention", scenario_contention, 5, false},
    /* Persistent masters: a killed master keeps the keys it acknowledged,
     * so mutual exclusion must hold across kills and restarts. */
    {"faults", scenario_faults, 5, true},
    {"lost_fd", scenario_lost_fd, 5, false},
    {"handles_freed_while_extended", scenario_handles_freed_while_extended, 5, false},
    {"free_releases_locks", scenario_free_releases_locks, 5, false},
    {"released_locks_never_look_expired", scenario_released_locks_never_look_expired, 3, false},
    {"free_while_threads_wait", scenario_free_while_threads_wait, 5, false},
    {"handles_freed_while_client_freed", scenario_handles_freed_while_client_freed, 5, false},
    {"cancel_blocked_callers", scenario_cancel_blocked_callers, 5, false},
    {"loop_runners", scenario_loop_runners, 5, false},
    {"cancel_fd_shared", scenario_cancel_fd_shared, 5, false},
};
#define SCENARIO_COUNT (sizeof(scenarios) / sizeof(scenarios[0]))

static const scenario *find(const char *name)
{
    for (size_t i = 0; i < SCENARIO_COUNT; i++)
        if (strcmp(scenarios[i].name, name) == 0)
            return &scenarios[i];
    return NULL;
}

/* Run one scenario on a fresh fleet; true when no check failed. */
static bool run(const scenario *s)
{
    int before = check_failures();
    double t0 = tc_now_ms();
    fleet_options opts = {.appendonly = s->appendonly};
    fleet *masters = fleet_start(s->masters, &opts);
    REQUIRE(masters != NULL, "could not start %zu redis-server masters", s->masters);
    redlock_config *cfg = fleet_config(masters);
    REQUIRE(cfg != NULL, "fleet_config");
    s->run(masters, cfg);
    redlock_config_free(cfg);
    fleet_stop(masters);
    bool passed = check_failures() == before;
    printf("%s %s (%.1f s)\n", passed ? "PASS" : "FAIL", s->name, (tc_now_ms() - t0) / 1000);
    fflush(stdout);
    return passed;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < SCENARIO_COUNT; i++)
            printf("%s\n", scenarios[i].name);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (find(argv[i]) == NULL) {
            fprintf(stderr, "usage: %s [--list] [SCENARIO...]\nno scenario '%s'\n", argv[0],
                    argv[i]);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN); /* as the fleet does; before any thread starts */
    bool passed = true;
    if (argc == 1) {
        for (size_t i = 0; i < SCENARIO_COUNT; i++)
            passed = run(&scenarios[i]) && passed;
    } else {
        for (int i = 1; i < argc; i++)
            passed = run(find(argv[i])) && passed;
    }
    return passed ? 0 : 1;
}
