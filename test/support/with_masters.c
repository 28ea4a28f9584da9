/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * with-masters: run a command while N local redis-server masters run.
 *
 *   with-masters [--timeout SECONDS] N CONFIG -- CMD [ARG...]
 *
 * Starts N masters on free loopback ports (the test fleet, fleet.h), writes
 * a libredlock YAML config naming them to CONFIG, runs CMD with
 * REDLOCK_CONFIG=CONFIG in its environment, then stops the masters and
 * exits with CMD's status (128+N if a signal ended it). CMD still running
 * after the timeout (default 120 s) is killed, and the status is 124.
 * For scripts that need real masters: the examples, the package checks.
 */
#include "fleet.h"
#include "testclock.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_USAGE 64
#define EXIT_TIMEOUT 124
#define EXIT_FAILED 70

static int usage(void)
{
    fputs("usage: with-masters [--timeout SECONDS] N CONFIG -- CMD [ARG...]\n", stderr);
    return EXIT_USAGE;
}

static int write_config(const fleet *f, const char *path)
{
    FILE *out = fopen(path, "w");
    if (out == NULL) {
        fprintf(stderr, "with-masters: %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* Started moments ago, they would look restarted: declared durable,
     * they count at once. */
    fputs("# Written by with-masters: local masters for one run.\ndurable: true\nnodes:\n", out);
    for (size_t i = 0; i < fleet_size(f); i++)
        fprintf(out, "  - host: 127.0.0.1\n    port: %d\n", fleet_port(f, i));
    if (fclose(out) != 0) {
        fprintf(stderr, "with-masters: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Wait for pid at most timeout_s seconds; its exit status as a shell gives it. */
static int wait_bounded(pid_t pid, long timeout_s)
{
    for (long waited_ms = 0; waited_ms < timeout_s * 1000; waited_ms += 20) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 && errno != EINTR)
            return EXIT_FAILED;
        tc_sleep_ms(20);
    }
    fprintf(stderr, "with-masters: the command ran longer than %ld s; killed\n", timeout_s);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return EXIT_TIMEOUT;
}

int main(int argc, char **argv)
{
    long timeout_s = 120;
    int i = 1;
    if (argc > 2 && strcmp(argv[1], "--timeout") == 0) {
        char *end = NULL;
        timeout_s = strtol(argv[2], &end, 10);
        if (end == argv[2] || *end != '\0' || timeout_s < 1 || timeout_s > 86400)
            return usage();
        i = 3;
    }
    if (argc - i < 4 || strcmp(argv[i + 2], "--") != 0)
        return usage();
    char *end = NULL;
    long n = strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || n < 1 || n > FLEET_MAX_SERVERS)
        return usage();
    const char *config = argv[i + 1];
    char **cmd = &argv[i + 3];

    fleet *f = fleet_start((size_t)n, NULL);
    if (f == NULL)
        return EXIT_FAILED;
    int status = EXIT_FAILED;
    if (write_config(f, config) == 0 && setenv("REDLOCK_CONFIG", config, 1) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGPIPE, SIG_DFL); /* the fleet ignores it; CMD should not */
            execvp(cmd[0], cmd);
            fprintf(stderr, "with-masters: %s: %s\n", cmd[0], strerror(errno));
            _exit(errno == ENOENT ? 127 : 126);
        }
        if (pid > 0)
            status = wait_bounded(pid, timeout_s);
        else
            fprintf(stderr, "with-masters: fork: %s\n", strerror(errno));
    }
    fleet_stop(f);
    return status;
}
