/* SPDX-License-Identifier: BSD-3-Clause */
/* The record worker under a real `redlock run`: the holder its sections
 * name is the redlock process, the pid the harness logs when that run ends
 * or is killed (X, K), so those close its section even when the command
 * could not log its end. */
#include "failover_log.h"
#include "fleet.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static fleet *masters;

static void stop(void)
{
    fleet_stop(masters);
    masters = NULL;
}

TestSuite(worker, .fini = stop, .timeout = 60);

Test(worker, a_run_section_names_the_redlock_process_as_its_holder)
{
    masters = fleet_start(3, NULL);
    cr_assert_not_null(masters);
    char config[PATH_MAX];
    char log[PATH_MAX];
    snprintf(config, sizeof(config), "%s/worker.yaml", fleet_dir(masters));
    snprintf(log, sizeof(log), "%s/worker.log", fleet_dir(masters));
    FILE *out = fopen(config, "w");
    cr_assert_not_null(out);
    /* Declared durable: masters started a moment ago count at once. */
    fprintf(out, "nodes:\n");
    for (size_t i = 0; i < fleet_size(masters); i++)
        fprintf(out, "  - host: 127.0.0.1\n    port: %d\n    durable: true\n",
                fleet_port(masters, i));
    fclose(out);

    pid_t run = fork();
    cr_assert_geq(run, 0);
    if (run == 0) {
        execl(REDLOCK_TOOL, REDLOCK_TOOL, "-c", config, "run", "--no-fencing", "res", "--",
              FAILOVER_WORKER, "record", "--log", log, "--work-min", "10", "--work-max", "10",
              (char *)NULL);
        _exit(127);
    }
    int status = 0;
    cr_assert_eq(waitpid(run, &status, 0), run);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "redlock run: status %d", status);

    FILE *in = fopen(log, "r");
    cr_assert_not_null(in, "the worker wrote no log");
    char line[512];
    int starts = 0;
    int ends = 0;
    while (fgets(line, sizeof(line), in) != NULL) {
        flog_event ev;
        cr_assert_eq(flog_parse(line, &ev), 0, "not a log line: %s", line);
        if (ev.type == 'S' || ev.type == 'E') {
            cr_assert_eq(ev.pid, (long)run, "%c names holder %ld; redlock run was %ld", ev.type,
                         ev.pid, (long)run);
            *(ev.type == 'S' ? &starts : &ends) += 1;
        }
    }
    fclose(in);
    cr_assert_eq(starts, 1);
    cr_assert_eq(ends, 1);
}
