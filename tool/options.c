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
