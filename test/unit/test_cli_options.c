/* SPDX-License-Identifier: BSD-3-Clause */
/* The tool's option parser (tool/options.c): getopt_long over a command's
 * table, whatever its length; --help; what stops it. */
#include "cli_command.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>

/* More options than the parser's tables once had room for (14); each is
 * given twice at most (long and short). */
enum { MANY = 20, GIVEN = 2 * MANY };

/* What the options were given, in order. */
typedef struct recorder {
    const char *values[GIVEN];
    size_t count;
} recorder;

static cli_parse_result record(const char *value, void *ctx)
{
    recorder *r = ctx;
    cr_assert_lt(r->count, GIVEN);
    r->values[r->count++] = value;
    return CLI_PARSE_OK;
}

static const char *const names[MANY] = {
    "opt1",  "opt2",  "opt3",  "opt4",  "opt5",  "opt6",  "opt7",  "opt8",  "opt9",  "opt10",
    "opt11", "opt12", "opt13", "opt14", "opt15", "opt16", "opt17", "opt18", "opt19", "opt20"};
/* Their short forms: letters, but h (--help's). */
static const char shorts[MANY + 1] = "abcdefgijklmnopqrstu";

static cli_option options[MANY];
static const cli_option help = {.name = "help", .short_name = 'h',
                                .flags = CLI_OPT_ALONE | CLI_OPT_HELP, .help = "this help"};
static const cli_option *table[MANY + 1];

static cli_command many = {
    .name = "many",
    .options = table,
    .option_count = MANY + 1,
    .operands = "*RESOURCE*",
    .operand_count = 1,
    .summary = "A command with many options.",
    .exit_summary = "0 done.",
};

static void build_table(void)
{
    for (size_t i = 0; i < MANY; i++) {
        options[i] = (cli_option){.name = names[i], .short_name = shorts[i], .value = "V",
                                  .apply = record, .help = "an option"};
        table[i] = &options[i];
    }
    table[MANY] = &help;
}

TestSuite(cli_options, .init = build_table);

/* What was written on out (redirected), as a string. */
static const char *printed(FILE *out, FILE *redirected)
{
    static char text[4096];
    fflush(out);
    fclose(out); /* the read end sees the end of the text */
    size_t n = fread(text, 1, sizeof(text) - 1, redirected);
    text[n] = '\0';
    return text;
}

/* argv as getopt_long wants it (writable, NULL-terminated). */
#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})
#define ARGC(argv) ((int)(sizeof(argv) / sizeof((argv)[0])) - 1)

Test(cli_options, a_table_longer_than_fourteen_parses_its_last_option)
{
    recorder r = {0};
    char **argv = ARGV("many", "--opt20", "last", "job");
    int first = -1;
    cr_assert_eq(cli_parse_options(&many, 4, argv, &r, &first), CLI_PARSE_OK);
    cr_assert_eq(r.count, 1);
    cr_assert_str_eq(r.values[0], "last");
    cr_assert_eq(first, 3);
    cr_assert_str_eq(argv[first], "job");
}

Test(cli_options, every_option_of_a_long_table_long_and_short)
{
    char *argv[2 * GIVEN + 3];
    char values[GIVEN][16];
    char longs[MANY][16];
    char shorts_args[MANY][3];
    int argc = 0;
    argv[argc++] = "many";
    for (size_t i = 0; i < MANY; i++) {
        snprintf(longs[i], sizeof(longs[i]), "--%s", names[i]);
        snprintf(values[2 * i], sizeof(values[0]), "long%zu", i + 1);
        argv[argc++] = longs[i];
        argv[argc++] = values[2 * i];
        snprintf(shorts_args[i], sizeof(shorts_args[i]), "-%c", shorts[i]);
        snprintf(values[2 * i + 1], sizeof(values[0]), "short%zu", i + 1);
        argv[argc++] = shorts_args[i];
        argv[argc++] = values[2 * i + 1];
    }
    argv[argc++] = "job";
    argv[argc] = NULL;

    recorder r = {0};
    int first = -1;
    cr_assert_eq(cli_parse_options(&many, argc, argv, &r, &first), CLI_PARSE_OK);
    cr_assert_eq(r.count, GIVEN, "%zu options applied of %d", r.count, GIVEN);
    for (size_t i = 0; i < GIVEN; i++)
        cr_assert_str_eq(r.values[i], values[i]);
    cr_assert_eq(first, argc - 1);
}

Test(cli_options, help_prints_the_commands_help_and_says_done, .init = cr_redirect_stdout)
{
    build_table();
    recorder r = {0};
    char **argv = ARGV("many", "--opt1", "x", "--help", "--opt2", "y");
    int first;
    cr_assert_eq(cli_parse_options(&many, 6, argv, &r, &first), CLI_PARSE_DONE);
    cr_assert_eq(cli_parse_exit_status(CLI_PARSE_DONE), 0);
    cr_assert_eq(r.count, 1, "options after --help were applied");
    cr_assert_str_eq(printed(stdout, cr_get_redirected_stdout()),
                     "Usage: redlock many [-a V] [-b V] [-c V] [-d V] [-e V] [-f V] [-g V] [-i V]\n"
                     "                    [-j V] [-k V] [-l V] [-m V] [-n V] [-o V] [-p V] [-q V]\n"
                     "                    [-r V] [-s V] [-t V] [-u V] RESOURCE\n"
                     "\n"
                     "A command with many options.\n"
                     "\n"
                     "Options:\n"
                     "  -a, --opt1 V   an option\n"
                     "  -b, --opt2 V   an option\n"
                     "  -c, --opt3 V   an option\n"
                     "  -d, --opt4 V   an option\n"
                     "  -e, --opt5 V   an option\n"
                     "  -f, --opt6 V   an option\n"
                     "  -g, --opt7 V   an option\n"
                     "  -i, --opt8 V   an option\n"
                     "  -j, --opt9 V   an option\n"
                     "  -k, --opt10 V  an option\n"
                     "  -l, --opt11 V  an option\n"
                     "  -m, --opt12 V  an option\n"
                     "  -n, --opt13 V  an option\n"
                     "  -o, --opt14 V  an option\n"
                     "  -p, --opt15 V  an option\n"
                     "  -q, --opt16 V  an option\n"
                     "  -r, --opt17 V  an option\n"
                     "  -s, --opt18 V  an option\n"
                     "  -t, --opt19 V  an option\n"
                     "  -u, --opt20 V  an option\n"
                     "  -h, --help     this help\n"
                     "\n"
                     "Exit status: 0 done.\n");
}

Test(cli_options, an_unknown_option_or_a_missing_value_is_a_usage_error,
     .init = cr_redirect_stderr)
{
    build_table();
    recorder r = {0};
    int first;
    cr_assert_eq(cli_parse_options(&many, 3, ARGV("many", "--opt21", "job"), &r, &first),
                 CLI_PARSE_USAGE);
    cr_assert_eq(cli_parse_options(&many, 2, ARGV("many", "--opt20"), &r, &first),
                 CLI_PARSE_USAGE);
    cr_assert_eq(cli_parse_options(&many, 3, ARGV("many", "-z", "job"), &r, &first),
                 CLI_PARSE_USAGE);
    cr_assert_eq(cli_parse_exit_status(CLI_PARSE_USAGE), EX_USAGE);
    cr_assert_eq(r.count, 0);
    cr_assert_str_eq(printed(stderr, cr_get_redirected_stderr()),
        "redlock: many: unknown option or missing value: --opt21 (see redlock many --help)\n"
        "redlock: many: unknown option or missing value: --opt20 (see redlock many --help)\n"
        "redlock: many: unknown option or missing value: -z (see redlock many --help)\n");
}

/* Options first (run's, redlock's own): what follows the first operand is
 * left as it is; otherwise options may follow operands. */
Test(cli_options, options_first_stops_at_the_first_operand)
{
    recorder r = {0};
    int first;
    char **argv = ARGV("many", "-a", "1", "job", "--opt2", "2");
    many.options_first = true;
    cr_assert_eq(cli_parse_options(&many, 6, argv, &r, &first), CLI_PARSE_OK);
    many.options_first = false;
    cr_assert_eq(r.count, 1);
    cr_assert_eq(first, 3);
    cr_assert_str_eq(argv[4], "--opt2");

    r.count = 0;
    argv = ARGV("many", "-a", "1", "job", "--opt2", "2");
    cr_assert_eq(cli_parse_options(&many, 6, argv, &r, &first), CLI_PARSE_OK);
    cr_assert_eq(r.count, 2);
    cr_assert_eq(first, 5);
    cr_assert_str_eq(argv[first], "job");
}
