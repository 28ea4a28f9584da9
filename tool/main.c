/* SPDX-License-Identifier: BSD-3-Clause */
/* redlock: Redlock from the shell. Global options, then one command
 * (cli_command.h): its options and operands are checked, it runs, and what it
 * leaves is freed here. */
#include "cli_command.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

/* Free what a command left in c: its result, its lock handle, then the
 * client (releases in flight finish) and the config. The handle goes
 * before the client: a lock handed over (acquire, extend) is forgotten,
 * and stays until its TTL or a release; one the client still owned would
 * be released by freeing the client. */
static void finish(cli *c)
{
    redlock_result_free(c->result);
    c->result = NULL;
    redlock_lock_free(c->lock);
    c->lock = NULL;
    cli_disconnect(c);
}

/* Run cmd with argv (argv[0]: its name). */
static int run_command(cli *c, const cli_command *cmd, int argc, char **argv)
{
    cli_options options = CLI_OPTIONS_INIT;
    int first;
    cli_parse_result parsed =
        cli_parse_command_options(cmd, argc, argv, &options, &cli_tool, c, &first);
    if (parsed != CLI_PARSE_OK)
        return cli_parse_exit_status(parsed);
    char **operands = argv + first;
    int count = argc - first;
    if (cmd->operand_count != CLI_OPERANDS_CHECKED && count != cmd->operand_count) {
        char names[128];
        cli_operand_names(cmd, names, sizeof(names));
        cli_error("%s: expected %s (see redlock %s --help)", cmd->name, names, cmd->name);
        return EX_USAGE;
    }
    int code = cmd->run(c, &options, operands, count);
    finish(c);
    return code;
}

/* Open /dev/null on each of fds 0 to 2 that is closed. Started with them
 * closed (by some supervisors and crontabs), the loop, its eventfd and the
 * connections to the masters would get them: our messages and output would
 * be written into a master's connection. Lower fds are open by the time
 * fd is checked, so open() returns fd itself. false if one cannot be had. */
static bool open_standard_fds(void)
{
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int null_fd = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
        if (null_fd != fd) {
            if (null_fd >= 0)
                close(null_fd);
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv)
{
    /* Before anything opens a descriptor. With no stderr to say why,
     * only the status tells. */
    if (!open_standard_fds())
        return EX_SOFTWARE;
    /* A write to a master that went away must be an error, not our death. */
    signal(SIGPIPE, SIG_IGN);

    cli c = {0};
    int first;
    cli_parse_result parsed = cli_parse_options(&cli_tool, argc, argv, &c, &first);
    if (parsed != CLI_PARSE_OK)
        return cli_parse_exit_status(parsed);
    if (first >= argc) {
        cli_error("no command given (see redlock --help)");
        return EX_USAGE;
    }
    const cli_command *cmd = cli_find_command(argv[first]);
    if (cmd == NULL) {
        cli_error("unknown command: %s (see redlock --help)", argv[first]);
        return EX_USAGE;
    }
    return run_command(&c, cmd, argc - first, argv + first);
}
