/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tool's commands and options, as tables (commands.c): a command is a
 * row {name, options, operands, help, run}, an option a row {name, short
 * name, value, help, apply}. The same rows give the parser its options
 * (options.c), --help its text (help.c) and the manual its synopsis,
 * commands and options (manual.h, docgen/): what the tool takes and what
 * its documentation says come from one place.
 */
#ifndef REDLOCK_CLI_COMMAND_H
#define REDLOCK_CLI_COMMAND_H

#include "cli.h"
#include "manual.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* What parsing the options found. */
typedef enum cli_parse_result {
    CLI_PARSE_OK,     /* go on */
    CLI_PARSE_DONE,   /* an option did all there was to do (--help,
                         --version): exit 0 */
    CLI_PARSE_USAGE,  /* a usage error, reported: exit EX_USAGE */
    CLI_PARSE_FAILED, /* out of memory, reported: exit EX_SOFTWARE */
} cli_parse_result;

/* The exit status after a result other than CLI_PARSE_OK. */
int cli_parse_exit_status(cli_parse_result result);

/* cli_option.flags */
#define CLI_OPT_REPEATABLE 1u /* may be given again: "..." in the synopsis */
#define CLI_OPT_ALONE 2u      /* used alone (--help, --version): not in the
                                 synopsis */
#define CLI_OPT_HELP 4u       /* prints the command's --help */

typedef struct cli_option {
    const char *name;  /* long name, without "--" */
    const char *value; /* the name of its value (TIME), or NULL: takes none */
    /* Takes the value (NULL if none) into ctx: the command's cli_options,
     * or redlock's cli for its own options. NULL for CLI_OPT_HELP. */
    cli_parse_result (*apply)(const char *value, void *ctx);
    const char *help;    /* what --help says: a phrase, which the manual
                            starts with (markup) */
    const char *details; /* what the manual adds (one paragraph), or NULL */
    unsigned flags;
    char short_name; /* its one-letter form, or 0 */
} cli_option;

/* cli_command.operand_count of a command that checks its operands itself. */
#define CLI_OPERANDS_CHECKED (-1)

typedef struct cli_command cli_command;
struct cli_command {
    const char *name; /* NULL: redlock itself, with its own options */
    const cli_option *const *options; /* in --help's order */
    size_t option_count;
    const char *operands;  /* as the synopsis shows them (markup) */
    int operand_count;     /* exactly this many; or CLI_OPERANDS_CHECKED
                              (RESOURCE... first: cli_resources_take()) */
    bool options_first;    /* options only before the first operand (in
                              run, the rest is CMD's) */
    const char *brief;     /* its line in redlock --help (markup) */
    const char *summary;   /* what --help says of it (markup paragraphs) */
    const char *exit_summary; /* --help's "Exit status:" (markup); NULL: the
                                 help of each of exit_statuses */
    const char *details;   /* what the manual adds (markup blocks), or NULL */
    /* Does the command. What it leaves in c (the client, the config, the
     * lock and the result) is freed after it returns, in one place. */
    int (*run)(cli *c, const cli_options *options, char **operands, int count);

    /* redlock itself: its commands, and what --help lists besides. */
    const cli_command *const *commands;
    size_t command_count;
    const doc_entry *environment;   /* those with help */
    const doc_entry *exit_statuses; /* those with help */
    const char *notes;              /* --help's last paragraphs (markup) */
};

/* redlock itself; its commands are cli_tool.commands. */
extern const cli_command cli_tool;
/* The command called name, or NULL. */
const cli_command *cli_find_command(const char *name);

/* Parse the options of argv (argv[0]: the command's name, or the
 * program's) with getopt_long over cmd's table, applying each to ctx;
 * CLI_OPT_HELP prints cmd's --help. Options may follow operands (which are
 * then moved to the end) unless cmd->options_first. CLI_PARSE_OK with
 * *first_operand the index of the first operand; otherwise why it stopped,
 * reported. */
cli_parse_result cli_parse_options(const cli_command *cmd, int argc, char **argv, void *ctx,
                                   int *first_operand);

/* cli_parse_options() for a command, taking also the options of globals
 * (redlock's own, but those used alone) into globals_ctx: `redlock run -v`
 * is `redlock -v run`. */
cli_parse_result cli_parse_command_options(const cli_command *cmd, int argc, char **argv,
                                           void *ctx, const cli_command *globals,
                                           void *globals_ctx, int *first_operand);

/* cmd's operands as plain text ("RESOURCE VALUE"), or "no operands". */
void cli_operand_names(const cli_command *cmd, char *buf, size_t size);
/* cmd's --help, as plain text. */
void cli_help_write(FILE *out, const cli_command *cmd);
/* The synopsis of cmd's options and operands (markup), without "redlock
 * NAME ": [`-t` *TIME*] ... *RESOURCE*; with long_forms, [`-t`|`--ttl`
 * *TIME*]. false when it does not fit in size bytes. */
bool cli_synopsis(const cli_command *cmd, bool long_forms, char *buf, size_t size);

/* Options of the commands, into a cli_options. */
cli_parse_result cli_opt_ttl(const char *value, void *ctx);
cli_parse_result cli_opt_wait(const char *value, void *ctx);
cli_parse_result cli_opt_kill_after(const char *value, void *ctx);
cli_parse_result cli_opt_max_hold(const char *value, void *ctx);
cli_parse_result cli_opt_lock_delay(const char *value, void *ctx);
cli_parse_result cli_opt_json(const char *value, void *ctx);
cli_parse_result cli_opt_fencing(const char *value, void *ctx);
cli_parse_result cli_opt_no_fencing(const char *value, void *ctx);
cli_parse_result cli_opt_slots(const char *value, void *ctx);
cli_parse_result cli_opt_conflict_exit(const char *value, void *ctx);
cli_parse_result cli_opt_owner(const char *value, void *ctx);
cli_parse_result cli_opt_label(const char *value, void *ctx);
cli_parse_result cli_opt_metrics_file(const char *value, void *ctx);
/* redlock's own options, into a cli. */
cli_parse_result cli_opt_config(const char *value, void *ctx);
cli_parse_result cli_opt_node(const char *value, void *ctx);
cli_parse_result cli_opt_verbose(const char *value, void *ctx);
cli_parse_result cli_opt_quiet(const char *value, void *ctx);
cli_parse_result cli_opt_version(const char *value, void *ctx);

/* The commands (cmd_*.c). operands: RESOURCE... first but for ping, then
 * VALUE (release, extend); run's are RESOURCE... -- CMD [ARG...] or
 * RESOURCE CMD [ARG...]. Each checks them and returns the exit status. */
int cmd_run(cli *c, const cli_options *o, char **operands, int count);
int cmd_acquire(cli *c, const cli_options *o, char **operands, int count);
int cmd_release(cli *c, const cli_options *o, char **operands, int count);
int cmd_extend(cli *c, const cli_options *o, char **operands, int count);
int cmd_status(cli *c, const cli_options *o, char **operands, int count);
int cmd_ping(cli *c, const cli_options *o, char **operands, int count);
int cmd_fencing_init(cli *c, const cli_options *o, char **operands, int count);
int cmd_check(cli *c, const cli_options *o, char **operands, int count);

#endif
