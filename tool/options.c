/* SPDX-License-Identifier: BSD-3-Clause */
/* Options: getopt_long over a command's table, and what each option does. */
#include "cli_command.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_exit_status(cli_parse_result result)
{
    switch (result) {
    case CLI_PARSE_OK:
    case CLI_PARSE_DONE:
        return 0;
    case CLI_PARSE_USAGE:
        return EX_USAGE;
    case CLI_PARSE_FAILED:
    default:
        return EX_SOFTWARE;
    }
}

/* getopt_long's tables for cmd's options, sized from it: the long options
 * (each with val 0: getopt_long's index says which) and the short ones. */
typedef struct getopt_tables {
    struct option *longs;
    char *shorts;
} getopt_tables;

static bool tables_build(getopt_tables *t, const cli_command *cmd)
{
    size_t n = cmd->option_count;
    t->longs = calloc(n + 1, sizeof(*t->longs));
    t->shorts = malloc(1 + 2 * n + 1);
    if (t->longs == NULL || t->shorts == NULL)
        return false;
    /* "+" stops at the first operand, so run's CMD keeps its options; the
     * other commands take options anywhere (GNU style). */
    size_t s = 0;
    if (cmd->options_first)
        t->shorts[s++] = '+';
    for (size_t i = 0; i < n; i++) {
        const cli_option *o = cmd->options[i];
        t->longs[i] = (struct option){o->name, o->value ? required_argument : no_argument, NULL, 0};
        if (o->short_name != 0) {
            t->shorts[s++] = o->short_name;
            if (o->value != NULL)
                t->shorts[s++] = ':';
        }
    }
    t->shorts[s] = '\0';
    return true;
}

static void tables_free(getopt_tables *t)
{
    free(t->longs);
    free(t->shorts);
}

/* The option getopt_long returned: 0 for a long one (at long_index), else
 * its short name; NULL for anything else. */
static const cli_option *option_of(const cli_command *cmd, int opt, int long_index)
{
    if (opt == 0)
        return long_index >= 0 && (size_t)long_index < cmd->option_count
                   ? cmd->options[long_index]
                   : NULL;
    for (size_t i = 0; i < cmd->option_count; i++)
        if (cmd->options[i]->short_name != 0 && cmd->options[i]->short_name == opt)
            return cmd->options[i];
    return NULL;
}

static cli_parse_result parse(const cli_command *cmd, const getopt_tables *t, int argc,
                              char **argv, void *ctx)
{
    optind = 0; /* 0: glibc starts afresh (main parsed the global options) */
    opterr = 0;
    for (;;) {
        int long_index = -1;
        int opt = getopt_long(argc, argv, t->shorts, t->longs, &long_index);
        if (opt == -1)
            return CLI_PARSE_OK;
        const cli_option *o = opt == '?' || opt == ':' ? NULL : option_of(cmd, opt, long_index);
        if (o == NULL) {
            if (cmd->name == NULL)
                cli_error("unknown option or missing value: %s (see redlock --help)",
                          argv[optind - 1]);
            else
                cli_error("%s: unknown option or missing value: %s (see redlock %s --help)",
                          cmd->name, argv[optind - 1], cmd->name);
            return CLI_PARSE_USAGE;
        }
        if (o->flags & CLI_OPT_HELP) {
            cli_help_write(stdout, cmd);
            return CLI_PARSE_DONE;
        }
        cli_parse_result result = o->apply(optarg, ctx);
        if (result != CLI_PARSE_OK)
            return result;
    }
}

cli_parse_result cli_parse_options(const cli_command *cmd, int argc, char **argv, void *ctx,
                                   int *first_operand)
{
    getopt_tables t = {NULL, NULL};
    cli_parse_result result;
    if (!tables_build(&t, cmd)) {
        cli_error("out of memory");
        result = CLI_PARSE_FAILED;
    } else {
        result = parse(cmd, &t, argc, argv, ctx);
    }
    tables_free(&t);
    *first_operand = optind;
    return result;
}

/* ---- Command options ------------------------------------------------------ */

/* Parse TIME into *field, or say what is wrong with it. */
static cli_parse_result set_time(const char *option, const char *value, int64_t min,
                                 const char *examples, int64_t *field)
{
    int rc = cli_parse_duration(value, min, INT32_MAX, field);
    if (rc == 0)
        return CLI_PARSE_OK;
    if (rc == CLI_TIME_RANGE)
        cli_error("--%s %s: out of range (%lld ms to %d ms, about 24.8 days)", option, value,
                  (long long)min, INT32_MAX);
    else
        cli_error("--%s %s: expected a TIME (e.g. %s)", option, value, examples);
    return CLI_PARSE_USAGE;
}

cli_parse_result cli_opt_ttl(const char *value, void *ctx)
{
    return set_time("ttl", value, 1, "1500, 250ms, 1.5s, 2m, 1h", &((cli_options *)ctx)->ttl_ms);
}

cli_parse_result cli_opt_wait(const char *value, void *ctx)
{
    cli_options *o = ctx;
    if (strcmp(value, "forever") == 0 || strcmp(value, "inf") == 0) {
        o->wait_ms = CLI_WAIT_FOREVER;
        return CLI_PARSE_OK;
    }
    return set_time("wait", value, 0, "0, 500ms, 1.5s, 2m, forever", &o->wait_ms);
}

cli_parse_result cli_opt_kill_after(const char *value, void *ctx)
{
    return set_time("kill-after", value, 0, "0, 500ms, 1.5s", &((cli_options *)ctx)->kill_after_ms);
}

cli_parse_result cli_opt_max_hold(const char *value, void *ctx)
{
    return set_time("max-hold", value, 1, "500ms, 90s, 2m, 1h", &((cli_options *)ctx)->max_hold_ms);
}

cli_parse_result cli_opt_lock_delay(const char *value, void *ctx)
{
    return set_time("lock-delay", value, 0, "0, 500ms, 5s, 1m",
                    &((cli_options *)ctx)->lock_delay_ms);
}

cli_parse_result cli_opt_json(const char *value, void *ctx)
{
    (void)value;
    ((cli_options *)ctx)->json = true;
    return CLI_PARSE_OK;
}

cli_parse_result cli_opt_fencing(const char *value, void *ctx)
{
    (void)value;
    ((cli_options *)ctx)->fencing = 1;
    return CLI_PARSE_OK;
}

cli_parse_result cli_opt_no_fencing(const char *value, void *ctx)
{
    (void)value;
    ((cli_options *)ctx)->fencing = 0;
    return CLI_PARSE_OK;
}

cli_parse_result cli_opt_conflict_exit(const char *value, void *ctx)
{
    /* As flock -E: any exit status a process can have. */
    int code = 0;
    const char *p = value;
    for (; *p >= '0' && *p <= '9' && code <= 255; p++)
        code = code * 10 + (*p - '0');
    if (*value == '\0' || *p != '\0' || code > 255) {
        cli_error("--conflict-exit-code %s: expected an exit status, 0 to 255", value);
        return CLI_PARSE_USAGE;
    }
    ((cli_options *)ctx)->conflict_exit = code;
    return CLI_PARSE_OK;
}

cli_parse_result cli_opt_owner(const char *value, void *ctx)
{
    size_t len = strlen(value);
    if (len == 0 || len > REDLOCK_MAX_VALUE_LEN) {
        cli_error("--owner: TOKEN must be 1 to %d bytes", REDLOCK_MAX_VALUE_LEN);
        return CLI_PARSE_USAGE;
    }
    ((cli_options *)ctx)->owner = value;
    return CLI_PARSE_OK;
}

/* ---- redlock's own options -------------------------------------------------- */

cli_parse_result cli_opt_config(const char *value, void *ctx)
{
    ((cli *)ctx)->config_path = value;
    return CLI_PARSE_OK;
}

cli_parse_result cli_opt_node(const char *value, void *ctx)
{
    cli *c = ctx;
    if (c->node_count == CLI_MAX_NODES) {
        cli_error("too many --node options (at most %d)", CLI_MAX_NODES);
        return CLI_PARSE_USAGE;
    }
    /* value is optarg, a string of argv, which is writable: the password
     * in it is overwritten once the masters are read (config_source.c). */
    c->nodes[c->node_count++] = (char *)(uintptr_t)value;
    return CLI_PARSE_OK;
}

cli_parse_result cli_opt_verbose(const char *value, void *ctx)
{
    (void)value;
    ((cli *)ctx)->verbosity++;
    return CLI_PARSE_OK;
}

cli_parse_result cli_opt_version(const char *value, void *ctx)
{
    (void)value;
    (void)ctx;
    printf("redlock %s\n", redlock_version());
    return CLI_PARSE_DONE;
}
