/* SPDX-License-Identifier: BSD-3-Clause */
/* redlock: Redlock from the shell. Global options, then one command. */
#include "cli.h"

#include <getopt.h>
#include <signal.h>
#include <string.h>

static const char usage[] =
    "Usage: redlock [OPTIONS] COMMAND [ARGS]\n"
    "\n"
    "Take a lock held on a majority of independent Redis masters (Redlock).\n"
    "\n"
    "Commands:\n"
    "  run RESOURCE [--] CMD [ARG...]  run CMD while holding the lock\n"
    "  acquire RESOURCE                take the lock, print its value\n"
    "  release RESOURCE VALUE          release a lock taken with acquire\n"
    "  extend RESOURCE VALUE           reset a lock's time-to-live\n"
    "  status RESOURCE                 show the lock on every master\n"
    "  ping                            check every master\n"
    "\n"
    "Options:\n"
    "  -c, --config FILE      YAML configuration (else $REDLOCK_CONFIG, else\n"
    "                         ~/.config/redlock/redlock.yaml, /etc/redlock/redlock.yaml)\n"
    "  -n, --node HOST:PORT   a master (repeatable); replaces the config's masters\n"
    "  -v, --verbose          show warnings (-vv: also information, -vvv: debug)\n"
    "  -h, --help             this help; COMMAND --help for a command's\n"
    "  -V, --version          print the version\n"
    "\n"
    "TIME: milliseconds, or a decimal number with a unit ms, s, m or h\n"
    "(250ms, 1.5s, 2m, 1h); --wait also takes forever (or inf).\n"
    "Exit status: 0 ok, 1 not our lock, 64 usage, 69 no quorum reachable,\n"
    "70 internal error, 75 held by another holder, 77 credentials refused,\n"
    "78 configuration, 80 lock lost.\n"
    "See docs/cli.md or redlock(1).\n";

static const struct {
    const char *name;
    int (*run)(cli *c, int argc, char **argv);
} commands[] = {
    {"run", cmd_run},         {"acquire", cmd_acquire}, {"release", cmd_release},
    {"extend", cmd_extend},   {"status", cmd_status},   {"ping", cmd_ping},
};

int main(int argc, char **argv)
{
    /* A write to a master that went away must be an error, not our death. */
    signal(SIGPIPE, SIG_IGN);

    cli c = {0};
    static const struct option longs[] = {
        {"config", required_argument, NULL, 'c'}, {"node", required_argument, NULL, 'n'},
        {"verbose", no_argument, NULL, 'v'},      {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
    };
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "+c:n:vhV", longs, NULL)) != -1) {
        switch (opt) {
        case 'c':
            c.config_path = optarg;
            break;
        case 'n':
            if (c.node_count == CLI_MAX_NODES) {
                cli_error("too many --node options (at most %d)", CLI_MAX_NODES);
                return EX_USAGE;
            }
            c.nodes[c.node_count++] = optarg;
            break;
        case 'v':
            c.verbosity++;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'V':
            printf("redlock %s\n", redlock_version());
            return 0;
        default:
            cli_error("unknown option or missing value: %s (see redlock --help)",
                      argv[optind - 1]);
            return EX_USAGE;
        }
    }
    if (optind >= argc) {
        cli_error("no command given (see redlock --help)");
        return EX_USAGE;
    }
    const char *name = argv[optind];
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].run(&c, argc - optind, argv + optind);
    cli_error("unknown command: %s (see redlock --help)", name);
    return EX_USAGE;
}
