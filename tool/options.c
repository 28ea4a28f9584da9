/* A command's options: getopt_long over a small table. */
#include "cli.h"

#include <getopt.h>

int cli_parse_options(int argc, char **argv, const cli_option *options, size_t count,
                      bool stop_at_operand, const char *usage, void *ctx, int *first_arg)
{
    struct option longs[16];
    size_t n = 0;
    for (; n < count && n < 14; n++)
        longs[n] = (struct option){options[n].name, options[n].has_arg ? required_argument
                                                                        : no_argument,
                                   NULL, (int)n};
    longs[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n] = (struct option){NULL, 0, NULL, 0};

    optind = 0; /* 0: glibc starts afresh (main parsed the global options) */
    opterr = 0;
    for (;;) {
        int index = -1;
        /* "+" stops at the first operand, so run's CMD keeps its options;
         * the other commands take options anywhere (GNU style). */
        int opt = getopt_long(argc, argv, stop_at_operand ? "+h" : "h", longs, &index);
        if (opt == -1)
            break;
        if (opt == 'h') {
            fputs(usage, stdout);
            return -2;
        }
        if (opt == '?' || opt == ':') {
            cli_error("%s: unknown option or missing value: %s (see redlock %s --help)",
                      argv[0], argv[optind - 1], argv[0]);
            return EX_USAGE;
        }
        int rc = options[opt].apply(optarg, ctx);
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

/* Parse TIME into *field, or say what was expected. */
static int set_time(const char *option, const char *value, int64_t min, const char *examples,
                    int64_t *field)
{
    if (cli_parse_duration(value, min, INT32_MAX, field) == 0)
        return 0;
    cli_error("--%s %s: expected a%s TIME (e.g. %s)", option, value, min > 0 ? " positive" : "",
              examples);
    return EX_USAGE;
}

int cli_opt_ttl(const char *value, void *ctx)
{
    return set_time("ttl", value, 1, "1500, 30s, 2m", &((cli_options *)ctx)->ttl_ms);
}

int cli_opt_wait(const char *value, void *ctx)
{
    return set_time("wait", value, 0, "0, 500ms, 30s", &((cli_options *)ctx)->wait_ms);
}

int cli_opt_kill_after(const char *value, void *ctx)
{
    return set_time("kill-after", value, 0, "0, 500ms, 5s", &((cli_options *)ctx)->kill_after_ms);
}

int cli_opt_json(const char *value, void *ctx)
{
    (void)value;
    ((cli_options *)ctx)->json = true;
    return 0;
}
