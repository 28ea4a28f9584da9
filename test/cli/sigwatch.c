/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sigwatch: a CMD for `redlock run` in the CLI tests that records the
 * signals it receives.
 *
 *   sigwatch [--ignore SIG]... [--exit SIG CODE]... [--lifetime SECONDS] FILE
 *
 * Appends one line per event to FILE, each written with a single write():
 *   START <monotonic ns> <pid>   once its signal handling is in place
 *   <SIG> <monotonic ns>         on TERM, INT, HUP, QUIT, USR1 or USR2
 *   TIMEOUT <monotonic ns>       when the lifetime ran out (exit 124)
 * After recording a signal it dies of that signal (default), exits with CODE
 * (--exit), or carries on (--ignore). SIGKILL cannot be recorded: a test sees
 * it as the process disappearing. The lifetime (default 120 s) keeps a
 * forgotten sigwatch from running for ever.
 */
#include "testclock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum action { DIE, IGNORE, EXIT };

static const struct {
    const char *name;
    int signo;
} watched[] = {{"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},
               {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
#define WATCHED (sizeof(watched) / sizeof(watched[0]))

static enum action actions[WATCHED];
static int exit_codes[WATCHED];

static int watched_index(const char *name)
{
    if (strncmp(name, "SIG", 3) == 0)
        name += 3;
    for (size_t k = 0; k < WATCHED; k++)
        if (strcmp(watched[k].name, name) == 0)
            return (int)k;
    return -1;
}

/* One line, one write(), O_APPEND: lines from several writers never mix. */
static void record(const char *file, const char *line)
{
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
        fprintf(stderr, "sigwatch: %s: %s\n", file, strerror(errno));
        exit(2);
    }
    close(fd);
}

static __attribute__((noreturn)) void usage(void)
{
    fprintf(stderr, "usage: sigwatch [--ignore SIG]... [--exit SIG CODE]... "
                    "[--lifetime SECONDS] FILE\n");
    exit(2);
}

static int parse_signal(const char *name)
{
    int k = name != NULL ? watched_index(name) : -1;
    if (k < 0)
        usage();
    return k;
}

int main(int argc, char **argv)
{
    long lifetime_s = 120;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--ignore") == 0) {
            actions[parse_signal(argv[++i])] = IGNORE;
        } else if (strcmp(argv[i], "--exit") == 0 && i + 2 < argc) {
            int k = parse_signal(argv[++i]);
            actions[k] = EXIT;
            exit_codes[k] = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--lifetime") == 0 && i + 1 < argc) {
            lifetime_s = atol(argv[++i]);
        } else {
            usage();
        }
    }
    if (i != argc - 1 || lifetime_s <= 0)
        usage();
    const char *file = argv[i];
    /* Dying of SIGQUIT must not leave a core file behind. */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);

    /* Signals stay blocked and are taken with sigtimedwait(), so each one
     * is stamped the moment it is accepted, outside any handler. */
    sigset_t set;
    sigemptyset(&set);
    for (size_t k = 0; k < WATCHED; k++)
        sigaddset(&set, watched[k].signo);
    sigprocmask(SIG_BLOCK, &set, NULL);

    char line[128];
    snprintf(line, sizeof(line), "START %lld %ld\n", (long long)tc_now_ns(), (long)getpid());
    record(file, line);

    long long end_ns = (long long)tc_now_ns() + lifetime_s * 1000000000LL;
    for (;;) {
        long long left_ns = end_ns - (long long)tc_now_ns();
        if (left_ns <= 0) {
            snprintf(line, sizeof(line), "TIMEOUT %lld\n", (long long)tc_now_ns());
            record(file, line);
            return 124;
        }
        struct timespec wait = {left_ns / 1000000000LL, left_ns % 1000000000LL};
        int signo = sigtimedwait(&set, NULL, &wait);
        long long at_ns = (long long)tc_now_ns();
        if (signo < 0)
            continue; /* EAGAIN (the lifetime is checked above) or EINTR */
        size_t k = 0;
        while (k < WATCHED && watched[k].signo != signo)
            k++;
        if (k == WATCHED)
            continue; /* only watched signals are in the set */
        snprintf(line, sizeof(line), "%s %lld\n", watched[k].name, at_ns);
        record(file, line);
        if (actions[k] == EXIT)
            return exit_codes[k];
        if (actions[k] == DIE) {
            signal(signo, SIG_DFL);
            sigset_t one;
            sigemptyset(&one);
            sigaddset(&one, signo);
            raise(signo); /* stays pending until unblocked below */
            /* cppcheck-suppress unreachableCode ; raise returns: signo is blocked */
            sigprocmask(SIG_UNBLOCK, &one, NULL);
            return 128 + signo; /* not reached */
        }
    }
}
