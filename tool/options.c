/* SPDX-License-Identifier: BSD-3-Clause */
/* A command's options: getopt_long over a small table. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

/* The option getopt_long returned: a long one's index, or a short name. */
static int option_index(int opt, const cli_option *options, size_t count)
{
    if (opt >= 0 && (size_t)opt < count)
        return opt;
    for (size_t i = 0; i < count; i++)
        if (options[i].short_name != 0 && options[i].short_name == opt)
            return (int)i;
    return -1;
}

int cli_parse_options(int argc, char **argv, const cli_option *options, size_t count,
                      bool stop_at_operand, const char *usage, void *ctx, int *first_arg)
{
    struct option longs[16];
    /* "+" stops at the first operand, so run's CMD keeps its options; the
     * other commands take options anywhere (GNU style). */
    char shorts[2 + 3 * 16] = "+";
    size_t s = stop_at_operand ? 1 : 0;
    size_t n = 0;
    for (; n < count && n < 14; n++) {
        longs[n] = (struct option){options[n].name, options[n].has_arg ? required_argument
                                                                        : no_argument,
                                   NULL, (int)n};
        if (options[n].short_name != 0) {
            shorts[s++] = options[n].short_name;
            if (options[n].has_arg)
                shorts[s++] = ':';
        }
    }
    shorts[s++] = 'h';
    shorts[s] = '\0';
    longs[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n] = (struct option){NULL, 0, NULL, 0};

    optind = 0; /* 0: glibc starts afresh (main parsed the global options) */
    opterr = 0;
    for (;;) {
        int index = -1;
        int opt = getopt_long(argc, argv, shorts, longs, &index);
        if (opt == -1)
            break;
        if (opt == 'h') {
            fputs(usage, stdout);
            return -2;
        }
        int which = option_index(opt, options, count);
        if (opt == '?' || opt == ':' || which < 0) {
            cli_error("%s: unknown option or missing value: %s (see redlock %s --help)",
                      argv[0], argv[optind - 1], argv[0]);
            return EX_USAGE;
        }
        int rc = options[which].apply(optarg, ctx);
        if (rc != 0)
            return rc;
    }
    *first_arg = optind;
    return 0;
}

int cli_parse_command(int argc, char **argv, const cli_option *options, size_t count,
                      const char *usage, cli_options *values, int operands,
                      const char *operand_names, int *first_arg)
{
    int rc = cli_parse_options(argc, argv, options, count, false, usage, values, first_arg);
    if (rc != 0)
        return rc;
    if (argc - *first_arg != operands) {
        cli_error("%s: expected %s (see redlock %s --help)", argv[0], operand_names, argv[0]);
        return EX_USAGE;
    }
    return operands > 0 ? cli_check_resource(argv[0], argv[*first_arg]) : 0;
}

/* Parse TIME into *field, or say what is wrong with it. */
static int set_time(const char *option, const char *value, int64_t min, const char *examples,
                    int64_t *field)
{
    int rc = cli_parse_duration(value, min, INT32_MAX, field);
    if (rc == 0)
        return 0;
    if (rc == CLI_TIME_RANGE)
        cli_error("--%s %s: out of range (%lld ms to %d ms, about 24.8 days)", option, value,
                  (long long)min, INT32_MAX);
    else
        cli_error("--%s %s: expected a TIME (e.g. %s)", option, value, examples);
    return EX_USAGE;
}

int cli_opt_ttl(const char *value, void *ctx)
{
    return set_time("ttl", value, 1, "1500, 250ms, 1.5s, 2m, 1h", &((cli_options *)ctx)->ttl_ms);
}

int cli_opt_wait(const char *value, void *ctx)
{
    cli_options *o = ctx;
    if (strcmp(value, "forever") == 0 || strcmp(value, "inf") == 0) {
        o->wait_ms = CLI_WAIT_FOREVER;
        return 0;
    }
    return set_time("wait", value, 0, "0, 500ms, 1.5s, 2m, forever", &o->wait_ms);
}

int cli_opt_kill_after(const char *value, void *ctx)
{
    return set_time("kill-after", value, 0, "0, 500ms, 1.5s", &((cli_options *)ctx)->kill_after_ms);
}

int cli_opt_json(const char *value, void *ctx)
{
    (void)value;
    ((cli_options *)ctx)->json = true;
    return 0;
}

int cli_opt_conflict_exit(const char *value, void *ctx)
{
    /* As flock -E: any exit status a process can have. */
    int code = 0;
    const char *p = value;
    for (; *p >= '0' && *p <= '9' && code <= 255; p++)
        code = code * 10 + (*p - '0');
    if (*value == '\0' || *p != '\0' || code > 255) {
        cli_error("--conflict-exit-code %s: expected an exit status, 0 to 255", value);
        return EX_USAGE;
    }
    ((cli_options *)ctx)->conflict_exit = code;
    return 0;
}
