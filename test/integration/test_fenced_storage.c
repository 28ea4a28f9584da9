/* SPDX-License-Identifier: BSD-3-Clause */
/* What fencing tokens are for, end to end (docs/fencing.md): holder A, the
 * example program examples/fenced_storage.c, is SIGSTOPped between its
 * check of the validity and a write; its lock expires; B acquires with a
 * greater token and writes; A resumes and writes with its old token, and
 * the storage, a Redis of its own checking tokens, refuses it. */
#include "harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static harness h;
static fleet *storage;
static pid_t holder_a;

static void five_masters_and_a_storage(void)
{
    harness_start(&h, 5, NULL);
    storage = fleet_start(1, NULL);
    cr_assert_not_null(storage);
}

static void teardown(void)
{
    if (holder_a > 0) {
        kill(holder_a, SIGKILL);
        waitpid(holder_a, NULL, 0);
    }
    fleet_stop(storage);
    harness_stop(&h);
}

TestSuite(fenced_storage, .init = five_masters_and_a_storage, .fini = teardown, .timeout = 90);

static const char *write_config(int64_t ttl_ms)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/fenced.yaml", fleet_dir(h.fleet));
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out);
    /* durable: the masters started moments ago would else look restarted
     * and not count (docs/safety.md, "Masters restarted empty"). */
    fprintf(out, "ttl_ms: %lld\nretry_count: 0\ndurable: true\nnodes:\n", (long long)ttl_ms);
    for (size_t i = 0; i < fleet_size(h.fleet); i++)
        fprintf(out, "  - host: 127.0.0.1\n    port: %d\n", fleet_port(h.fleet, i));
    fclose(out);
    return path;
}

/* Start the example with args; *out reads its standard output. */
static pid_t spawn(char *const args[], int *out)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        /* No assertion here: it would talk to Criterion from a process it
         * does not know. Killed with us; SIGPIPE back to its default. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGPIPE, SIG_DFL);
        dup2(fds[1], STDOUT_FILENO);
        syscall(SYS_close_range, 3U, ~0U, 0U);
        execv(args[0], args);
        _exit(127);
    }
    cr_assert_geq(pid, 0, "fork failed");
    close(fds[1]);
    *out = fds[0];
    return pid;
}

/* The next line of fd (without its newline) into line, within timeout_ms;
 * false at EOF or on time-out. Reads a byte at a time: lines are few. */
static bool read_line(int fd, char *line, size_t size, int timeout_ms)
{
    size_t n = 0;
    double deadline = tc_now_ms() + timeout_ms;
    while (n + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(deadline - tc_now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return false;
        char c;
        if (read(fd, &c, 1) != 1)
            return false;
        if (c == '\n')
            break;
        line[n++] = c;
    }
    line[n] = '\0';
    return true;
}

/* Read lines until one starting with prefix; its text in line. */
static void expect_line(int fd, const char *prefix, char *line, size_t size)
{
    for (int i = 0; i < 10; i++) {
        cr_assert(read_line(fd, line, size, (int)fleet_scaled_ms(10000)),
                  "the example ended or stalled before \"%s\"", prefix);
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            return;
    }
    cr_assert_fail("no line \"%s\"", prefix);
}

Test(fenced_storage, a_holder_paused_past_its_validity_is_refused_by_the_storage)
{
    harness_connect(&h);
    cr_assert_eq(harness_fencing_init(&h, 0, NULL), REDLOCK_OK);
    int64_t ttl_ms = fleet_scaled_ms(1000);
    char port[16];
    snprintf(port, sizeof(port), "%d", fleet_port(storage, 0));
    char pause[16];
    snprintf(pause, sizeof(pause), "%lld", (long long)fleet_scaled_ms(300));
    char *args[] = {FENCED_STORAGE_EXAMPLE, (char *)write_config(ttl_ms), "127.0.0.1", port,
                    "job", "from-A", pause, NULL};
    int out = -1;
    holder_a = spawn(args, &out);

    char line[256];
    expect_line(out, "holding fenced:job with token ", line, sizeof(line));
    unsigned long long token_a = strtoull(line + strlen("holding fenced:job with token "), NULL, 10);
    cr_assert_gt(token_a, 0);
    expect_line(out, "write \"from-A\" with token", line, sizeof(line));
    cr_assert_not_null(strstr(line, ": accepted"), "A's first write: %s", line);
    /* A checked its validity and pauses before its second write: stop it
     * there, past its validity. */
    expect_line(out, "valid for ", line, sizeof(line));
    cr_assert_eq(kill(holder_a, SIGSTOP), 0);
    cr_assert(harness_wait_key_gone(&h, "fenced:job", 10, (int)(ttl_ms + fleet_scaled_ms(2000))),
              "A's lock did not expire");

    /* B, the same program, takes the lock with a greater token and writes. */
    char *args_b[] = {FENCED_STORAGE_EXAMPLE, args[1], "127.0.0.1", port, "job", "from-B", NULL};
    int out_b = -1;
    pid_t holder_b = spawn(args_b, &out_b);
    expect_line(out_b, "holding fenced:job with token ", line, sizeof(line));
    unsigned long long token_b = strtoull(line + strlen("holding fenced:job with token "), NULL, 10);
    cr_assert_gt(token_b, token_a);
    int status = 0;
    cr_assert_eq(waitpid(holder_b, &status, 0), holder_b);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "B's writes: exit status %d",
              status);
    close(out_b);

    /* A resumes and writes with its old token: refused. */
    cr_assert_eq(kill(holder_a, SIGCONT), 0);
    expect_line(out, "write \"from-A\" with token", line, sizeof(line));
    cr_assert_not_null(strstr(line, ": refused"), "A's late write: %s", line);
    cr_assert_eq(waitpid(holder_a, &status, 0), holder_a);
    holder_a = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3, "the example's exit status %d",
              status);
    close(out);

    redisReply *r = fleet_command(storage, 0, "HMGET job value token");
    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    cr_assert_str_eq(r->element[0]->str, "from-B", "A's late write landed");
    cr_assert_eq(strtoull(r->element[1]->str, NULL, 10), token_b);
    freeReplyObject(r);
}
