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

/* The options a parse takes: a command's, and redlock's own after the
 * command's name (global options but those used alone, --help and
 * --version), each applied to its own ctx. */
typedef struct option_set {
    const cli_command *cmd;
    void *ctx;
    const cli_command *globals; /* or NULL */
    void *globals_ctx;
} option_set;

static size_t global_count(const option_set *set)
{
    size_t n = 0;
    for (size_t i = 0; set->globals != NULL && i < set->globals->option_count; i++)
        n += !(set->globals->options[i]->flags & CLI_OPT_ALONE);
    return n;
}

/* The i-th option of set (the command's first, then the globals taken), and
 * its ctx; NULL past the end. */
static const cli_option *option_at(const option_set *set, size_t i, void **ctx)
{
    if (i < set->cmd->option_count) {
        *ctx = set->ctx;
        return set->cmd->options[i];
    }
    i -= set->cmd->option_count;
    for (size_t k = 0; set->globals != NULL && k < set->globals->option_count; k++) {
        const cli_option *o = set->globals->options[k];
        if (o->flags & CLI_OPT_ALONE)
            continue;
        if (i-- == 0) {
            *ctx = set->globals_ctx;
            return o;
        }
    }
    return NULL;
}

/* getopt_long's tables for set's options, sized from it: the long options
 * (each with val 0: getopt_long's index says which) and the short ones. */
typedef struct getopt_tables {
    struct option *longs;
    char *shorts;
} getopt_tables;

static bool tables_build(getopt_tables *t, const option_set *set)
{
    size_t n = set->cmd->option_count + global_count(set);
    t->longs = calloc(n + 1, sizeof(*t->longs));
    t->shorts = malloc(1 + 2 * n + 1);
    if (t->longs == NULL || t->shorts == NULL)
        return false;
    /* "+" stops at the first operand, so run's CMD keeps its options; the
     * other commands take options anywhere (GNU style). */
    size_t s = 0;
    if (set->cmd->options_first)
        t->shorts[s++] = '+';
    for (size_t i = 0; i < n; i++) {
        void *ctx;
        const cli_option *o = option_at(set, i, &ctx);
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

/* The option getopt_long returned, and its ctx: 0 for a long one (at
 * long_index), else its short name; NULL for anything else. */
static const cli_option *option_of(const option_set *set, int opt, int long_index, void **ctx)
{
    size_t n = set->cmd->option_count + global_count(set);
    if (opt == 0)
        return long_index >= 0 && (size_t)long_index < n ? option_at(set, (size_t)long_index, ctx)
                                                         : NULL;
    for (size_t i = 0; i < n; i++) {
        const cli_option *o = option_at(set, i, ctx);
        if (o->short_name != 0 && o->short_name == opt)
            return o;
    }
    return NULL;
}

static cli_parse_result parse(const option_set *set, const getopt_tables *t, int argc,
                              char **argv)
{
    const cli_command *cmd = set->cmd;
    optind = 0; /* 0: glibc starts afresh (main parsed the global options) */
    opterr = 0;
    for (;;) {
        int long_index = -1;
        int opt = getopt_long(argc, argv, t->shorts, t->longs, &long_index);
        if (opt == -1)
            return CLI_PARSE_OK;
        void *ctx = NULL;
        const cli_option *o =
            opt == '?' || opt == ':' ? NULL : option_of(set, opt, long_index, &ctx);
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

cli_parse_result cli_parse_command_options(const cli_command *cmd, int argc, char **argv,
                                           void *ctx, const cli_command *globals,
                                           void *globals_ctx, int *first_operand)
{
    option_set set = {cmd, ctx, globals, globals_ctx};
    getopt_tables t = {NULL, NULL};
    cli_parse_result result;
    if (!tables_build(&t, &set)) {
        cli_error("out of memory");
        result = CLI_PARSE_FAILED;
    } else {
        result = parse(&set, &t, argc, argv);
    }
    tables_free(&t);
    *first_operand = optind;
    return result;
}

cli_parse_result cli_parse_options(const cli_command *cmd, int argc, char **argv, void *ctx,
                                   int *first_operand)
{
    return cli_parse_command_options(cmd, argc, argv, ctx, NULL, NULL, first_operand);
}

/* ---- Command options ------------------------------------------------------ */

/* Parse TIME into *field, or say what is wrong with it. */
static cli_parse_result set_time(const char *option, const char *value, int64_t min,
                                 const char *examples, int64_t *field)
{
    int rc = cli_parse_duration(value, min, INT32_MAX, field);
    if (rc == 0)
        return CLI_PARSE_OK;
    if (rc == CLI_TIME_TOO_FINE)
        cli_error("--%s %s: below 1 ms, the finest TIME this takes", option, value);
    else if (rc == CLI_TIME_RANGE)
        cli_error("--%s %s: out of range (%lld ms to %d ms, about 24.8 days)", option, value,
                  (long long)min, INT32_MAX);
    else
        cli_error("--%s %s: expected a TIME (e.g. %s)", option, value, examples);
    return CLI_PARSE_USAGE;
}

cli_parse_result cli_opt_ttl(const char *value, void *ctx)
{
    return set_time("ttl", value, 1, "30 (seconds), 250ms, 1.5s, 1m30s",
                    &((cli_options *)ctx)->ttl_ms);
}

cli_parse_result cli_opt_wait(const char *value, void *ctx)
{
    cli_options *o = ctx;
    if (strcmp(value, "forever") == 0 || strcmp(value, "inf") == 0) {
        o->wait_ms = CLI_WAIT_FOREVER;
        return CLI_PARSE_OK;
    }
    return set_time("wait", value, 0, "0, 2 (seconds), 500ms, 1m30s, forever", &o->wait_ms);
}

cli_parse_result cli_opt_kill_after(const char *value, void *ctx)
{
    return set_time("kill-after", value, 0, "0, 5 (seconds), 500ms, 1.5s",
                    &((cli_options *)ctx)->kill_after_ms);
}

cli_parse_result cli_opt_max_hold(const char *value, void *ctx)
{
    return set_time("max-hold", value, 1, "90 (seconds), 500ms, 2m, 1h 30min",
                    &((cli_options *)ctx)->max_hold_ms);
}

cli_parse_result cli_opt_lock_delay(const char *value, void *ctx)
{
    return set_time("lock-delay", value, 0, "0, 5 (seconds), 500ms, 1m",
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

cli_parse_result cli_opt_slots(const char *value, void *ctx)
{
    int slots = 0;
    const char *p = value;
    for (; *p >= '0' && *p <= '9' && slots <= REDLOCK_MAX_SLOTS; p++)
        slots = slots * 10 + (*p - '0');
    if (*value == '\0' || *p != '\0' || slots < 1 || slots > REDLOCK_MAX_SLOTS) {
        cli_error("--slots %s: expected how many may hold at once, 1 to %d", value,
                  REDLOCK_MAX_SLOTS);
        return CLI_PARSE_USAGE;
    }
    ((cli_options *)ctx)->slots = slots;
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

/* What the lock's value can carry as its holder label (docs/design.md, "Who
 * holds a lock"): printable ASCII, bounded. */
cli_parse_result cli_opt_label(const char *value, void *ctx)
{
    size_t len = strlen(value);
    bool printable = len > 0 && len <= REDLOCK_MAX_LABEL_LEN;
    for (size_t i = 0; printable && i < len; i++)
        printable = value[i] >= 0x20 && value[i] <= 0x7e;
    if (!printable) {
        cli_error("--label: TEXT must be 1 to %d printable ASCII characters (no control "
                  "characters, no bytes above 126)",
                  REDLOCK_MAX_LABEL_LEN);
        return CLI_PARSE_USAGE;
    }
    ((cli_options *)ctx)->label = value;
    return CLI_PARSE_OK;
}

cli_parse_result cli_opt_metrics_file(const char *value, void *ctx)
{
    if (*value == '\0' || value[strlen(value) - 1] == '/') {
        cli_error("--metrics-file: expected a file's path, not '%s'", value);
        return CLI_PARSE_USAGE;
    }
    ((cli_options *)ctx)->metrics_file = value;
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

cli_parse_result cli_opt_quiet(const char *value, void *ctx)
{
    (void)value;
    ((cli *)ctx)->quiet = true;
    return CLI_PARSE_OK;
}

cli_parse_result cli_opt_version(const char *value, void *ctx)
{
    (void)value;
    (void)ctx;
    printf("redlock %s\n", redlock_version());
    return CLI_PARSE_DONE;
}
