/* SPDX-License-Identifier: BSD-3-Clause */
/* status and ping: what every master says, one line each (or JSON). */
#include "cli.h"

#include <string.h>

static bool reachable(const redlock_master_result *m)
{
    return m->outcome == REDLOCK_MASTER_OK;
}

/* Why a master is unreachable, or NULL. */
static const char *problem(const redlock_master_result *m)
{
    if (reachable(m))
        return NULL;
    return m->detail ? m->detail : redlock_master_outcome_name(m->outcome);
}

/* "unreachable  (why)" and a newline, why escaped: a server's reply may
 * hold any byte but CR and LF. */
static void print_problem(const redlock_master_result *m)
{
    char why[1024];
    printf("unreachable  (%s)\n", cli_shown(why, sizeof(why), problem(m)));
}

static void print_status_text(const redlock_result *r)
{
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        printf("%s  ", m->name);
        if (!reachable(m)) {
            print_problem(m);
        } else if (m->value == NULL) {
            printf("free\n");
        } else {
            printf("held  ");
            text_bytes(stdout, m->value, m->value_len);
            if (m->pttl_ms >= 0)
                printf("  pttl %lld ms\n", (long long)m->pttl_ms);
            else
                printf("  no expiry\n");
        }
    }
}

static const char status_usage[] =
    "Usage: redlock status [--json] RESOURCE\n"
    "\n"
    "Show, for every master, whether it answers, the value RESOURCE holds there\n"
    "(or \"free\") and its remaining time-to-live.\n"
    "\n"
    "  --json   print a JSON object instead\n"
    "\n"
    "Exit status: 0 a quorum of masters answered, 69 otherwise, 77 credentials\n"
    "refused, 64 usage, 78 configuration.\n";

int cmd_status(cli *c, int argc, char **argv)
{
    cli_options ro = CLI_OPTIONS_INIT;
    static const cli_option opts[] = {{"json", false, cli_opt_json, 0}};
    int first;
    int rc = cli_parse_command(argc, argv, opts, 1, status_usage, &ro, 1, "RESOURCE", &first);
    if (rc != 0)
        return rc == -2 ? 0 : rc;
    const char *resource = argv[first];
    if ((rc = cli_open(c)) != 0)
        return rc;

    char shown[CLI_SHOWN_SIZE];
    cli_shown(shown, sizeof(shown), resource);
    redlock_result *r = NULL;
    int status = cli_inspect(c, resource, &r);
    if (r == NULL) {
        cli_error("status %s: %s", shown, redlock_strerror(status));
        cli_disconnect(c);
        return EX_SOFTWARE;
    }
    if (ro.json)
        cli_print_json(cli_json_status(resource, status, r));
    else
        print_status_text(r);
    if (status != REDLOCK_OK)
        cli_error("status %s: %s", shown, redlock_strerror(status));
    int code = cli_exit_for(status, r);
    redlock_result_free(r);
    cli_disconnect(c);
    return code;
}

static const char ping_usage[] =
    "Usage: redlock ping [--json]\n"
    "\n"
    "PING every master and show whether it answers and how fast.\n"
    "\n"
    "  --json   print a JSON object instead\n"
    "\n"
    "Exit status: 0 a quorum of masters answered, 69 otherwise, 77 credentials\n"
    "refused, 64 usage, 78 configuration.\n";

int cmd_ping(cli *c, int argc, char **argv)
{
    cli_options ro = CLI_OPTIONS_INIT;
    static const cli_option opts[] = {{"json", false, cli_opt_json, 0}};
    int first;
    int rc = cli_parse_command(argc, argv, opts, 1, ping_usage, &ro, 0, "no operands", &first);
    if (rc != 0)
        return rc == -2 ? 0 : rc;
    if ((rc = cli_open(c)) != 0)
        return rc;
    redlock_result *r = NULL;
    int status = cli_ping(c, &r);
    if (r == NULL) {
        cli_error("ping: %s", redlock_strerror(status));
        cli_disconnect(c);
        return EX_SOFTWARE;
    }
    if (ro.json) {
        cli_print_json(cli_json_ping(status, r));
    } else {
        for (unsigned i = 0; i < r->master_count; i++) {
            const redlock_master_result *m = &r->masters[i];
            if (reachable(m)) {
                printf("%s  ok  %.2f ms\n", m->name, (double)m->latency_us / 1000.0);
            } else {
                printf("%s  ", m->name);
                print_problem(m);
            }
        }
    }
    if (status != REDLOCK_OK)
        cli_error("ping: %s", redlock_strerror(status));
    int code = cli_exit_for(status, r);
    redlock_result_free(r);
    cli_disconnect(c);
    return code;
}
