/* SPDX-License-Identifier: BSD-3-Clause */
/* The failover program's modes that run no client; see offline.h. */
#include "offline.h"
#include "checker.h"
#include "failover_log.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int offline_check(int argc, char **argv, unsigned quorum, int64_t longest_ttl_ms)
{
    bool unsafe = false;
    bool json = false;
    int first = 0;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--unsafe") == 0) {
            unsafe = true;
        } else if (strcmp(argv[first], "--json") == 0) {
            json = true;
        } else {
            fprintf(stderr, "usage: redlock-failover --check [--unsafe] [--json] LOG...\n");
            return 64;
        }
    }
    if (first == argc) {
        fprintf(stderr, "usage: redlock-failover --check [--unsafe] [--json] LOG...\n");
        return 64;
    }
    checker_report r;
    if (checker_run_files((const char *const *)(argv + first), (size_t)(argc - first), quorum,
                          &r) != 0) {
        fprintf(stderr, "failover: cannot read the event logs\n");
        return 70;
    }
    printf("event logs:        %d\n", argc - first);
    checker_print(stdout, &r);
    if (json)
        checker_print_json(stdout, &r);
    return checker_verdict(stdout, &r, longest_ttl_ms, unsafe);
}

int offline_mark(int argc, char **argv)
{
    if (argc < 2 || strlen(argv[1]) != 1) {
        fprintf(stderr, "usage: redlock-failover --mark LOG EVENT [ARG...]\n");
        return 64;
    }
    char line[256];
    size_t n = (size_t)snprintf(line, sizeof(line), "%s %lld", argv[1], (long long)tc_now_ns());
    for (int i = 2; i < argc && n < sizeof(line); i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, " %s", argv[i]);
    flog_event ev;
    if (n >= sizeof(line) - 1 || flog_parse(line, &ev) != 0) {
        fprintf(stderr, "failover: --mark: not an event of the log: %s\n", line);
        return 64;
    }
    int log = flog_open(argv[0]);
    if (log < 0) {
        fprintf(stderr, "failover: cannot open %s: %s\n", argv[0], strerror(errno));
        return 70;
    }
    flog_write(log, "%s", line);
    close(log);
    return 0;
}
