/* SPDX-License-Identifier: BSD-3-Clause */
/* acquire, release, extend: one step of a lock managed across commands. */
#include "cli.h"

#include <signal.h>
#include <string.h>

static const char acquire_usage[] =
    "Usage: redlock acquire [-t TIME] [-w TIME] [-E N] [--json] RESOURCE\n"
    "\n"
    "Take the lock on RESOURCE and print its value on the first line of stdout\n"
    "(V=$(redlock acquire R) works). The lock is not extended: it expires after\n"
    "its TTL unless released (redlock release R \"$V\") or extended first.\n"
    "\n"
    "  -t, --ttl TIME     time-to-live (default: the config's ttl_ms)\n"
    "  -w, --wait TIME    retry until TIME has passed (0: one attempt; forever:\n"
    "                     until acquired or interrupted; default: the config's\n"
    "                     retry_count, retry_delay_ms, retry_jitter_ms)\n"
    "  -E, --conflict-exit-code N  exit N instead of 75 when held\n"
    "  --json             print a JSON object instead\n"
    "\n"
    "Exit status: 0 acquired, 75 held by another holder, 69 no quorum reachable,\n"
    "77 credentials refused, 64 usage, 78 configuration.\n";

/* SIGINT, SIGTERM, SIGHUP or SIGQUIT while acquiring (--wait forever waits
 * for nothing else): give up at once. Freeing the client cancels the
 * acquire, releasing on every master what the attempt in flight took. */
typedef struct interruption {
    cli *c;
    int signum; /* the first signal, or 0 */
    ev_signal watchers[4];
} interruption;

static void on_interrupt(struct ev_loop *loop, ev_signal *w, int revents)
{
    interruption *in = w->data;
    if (in->signum != 0)
        return;
    in->signum = w->signum;
    redlock_client_free(in->c->client);
    in->c->client = NULL;
}

static void watch_interrupts(interruption *in, bool on)
{
    static const int signals[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < 4; i++) {
        if (on) {
            ev_signal_init(&in->watchers[i], on_interrupt, signals[i]);
            in->watchers[i].data = in;
            ev_signal_start(in->c->loop, &in->watchers[i]);
        } else {
            ev_signal_stop(in->c->loop, &in->watchers[i]);
        }
    }
}

int cmd_acquire(cli *c, int argc, char **argv)
{
    cli_options lo = CLI_OPTIONS_INIT;
    static const cli_option opts[] = {
        {"ttl", true, cli_opt_ttl, 't'},
        {"wait", true, cli_opt_wait, 'w'},
        {"conflict-exit-code", true, cli_opt_conflict_exit, 'E'},
        {"json", false, cli_opt_json, 0}};
    int first;
    int rc = cli_parse_command(argc, argv, opts, 4, acquire_usage, &lo, 1, "RESOURCE", &first);
    if (rc != 0)
        return rc == -2 ? 0 : rc;
    const char *resource = argv[first];
    if ((rc = cli_open(c)) != 0)
        return rc;

    redlock_acquire_options o = cli_acquire_options(lo.ttl_ms, lo.wait_ms);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    interruption in = {.c = c};
    watch_interrupts(&in, true);
    int status = cli_acquire(c, resource, &o, &lock, &r);
    watch_interrupts(&in, false);
    if (in.signum != 0) {
        char name[CLI_SHOWN_SIZE];
        cli_error("acquire: interrupted by signal %d while acquiring %s", in.signum,
                  cli_shown(name, sizeof(name), resource));
    } else {
        if (lo.json)
            cli_print_json(cli_json_acquire(resource, status, lock, r));
        else if (status == REDLOCK_OK)
            printf("%s\n", redlock_lock_value(lock, NULL));
        if (status != REDLOCK_OK)
            cli_report_not_acquired(resource, status, r);
    }
    int code = in.signum != 0 ? 128 + in.signum : cli_exit_for_acquire(status, r, lo.conflict_exit);
    redlock_result_free(r);
    /* Forget the handle: the lock stays until its TTL or a release. */
    redlock_lock_free(lock);
    cli_disconnect(c);
    return code;
}

/* A handle for RESOURCE VALUE given on the command line. */
static int adopt(const char *command, const char *resource, const char *value, int64_t ttl_ms,
                 redlock_lock **lock)
{
    size_t len = strlen(value);
    if (len == 0 || len > REDLOCK_MAX_VALUE_LEN) {
        cli_error("%s: VALUE must be 1 to %d bytes", command, REDLOCK_MAX_VALUE_LEN);
        return EX_USAGE;
    }
    int rc = redlock_lock_new(lock, resource, strlen(resource), value, len,
                              ttl_ms < 0 ? 0 : ttl_ms);
    if (rc != REDLOCK_OK) {
        cli_error("%s: %s", command, redlock_strerror(rc));
        return EX_SOFTWARE;
    }
    return 0;
}

/* One line on a release or extend that did not succeed. */
static void report_failure(const char *what, const char *resource, int status,
                           const redlock_result *r)
{
    char failures[512];
    char shown[CLI_SHOWN_SIZE];
    cli_describe_failures(r, failures, sizeof(failures));
    cli_error("%s %s: %s%s", what, cli_shown(shown, sizeof(shown), resource),
              redlock_strerror(status), failures);
}

static const char release_usage[] =
    "Usage: redlock release [--json] RESOURCE VALUE\n"
    "\n"
    "Delete RESOURCE on every master where it still holds VALUE (never a key\n"
    "holding another value).\n"
    "\n"
    "  --json   print a JSON object\n"
    "\n"
    "Exit status: 0 released, 1 VALUE was on no master (the lock had expired\n"
    "or is someone else's), 69 no quorum reachable, 77 credentials refused,\n"
    "64 usage, 78 configuration.\n";

int cmd_release(cli *c, int argc, char **argv)
{
    cli_options lo = CLI_OPTIONS_INIT;
    static const cli_option opts[] = {{"json", false, cli_opt_json, 0}};
    int first;
    int rc = cli_parse_command(argc, argv, opts, 1, release_usage, &lo, 2, "RESOURCE VALUE", &first);
    if (rc != 0)
        return rc == -2 ? 0 : rc;
    const char *resource = argv[first];
    redlock_lock *lock = NULL;
    if ((rc = adopt("release", resource, argv[first + 1], -1, &lock)) != 0)
        return rc;
    if ((rc = cli_open(c)) != 0) {
        redlock_lock_free(lock);
        return rc;
    }
    redlock_result *r = NULL;
    int status = cli_release(c, lock, &r);
    if (lo.json)
        cli_print_json(cli_json_release(resource, status, r));
    if (status != REDLOCK_OK)
        report_failure("release", resource, status, r);
    int code = cli_exit_for(status, r);
    redlock_result_free(r);
    redlock_lock_free(lock);
    cli_disconnect(c);
    return code;
}

static const char extend_usage[] =
    "Usage: redlock extend [-t TIME] [--json] RESOURCE VALUE\n"
    "\n"
    "Reset the time-to-live of the lock RESOURCE holding VALUE on every master\n"
    "where it still holds it, and print the new validity in milliseconds.\n"
    "\n"
    "  -t, --ttl TIME   the new time-to-live (default: the config's ttl_ms)\n"
    "  --json           print a JSON object instead\n"
    "\n"
    "Exit status: 0 extended, 1 the lock is no longer ours, 69 no quorum\n"
    "reachable, 77 credentials refused, 64 usage, 78 configuration.\n";

int cmd_extend(cli *c, int argc, char **argv)
{
    cli_options lo = CLI_OPTIONS_INIT;
    static const cli_option opts[] = {{"ttl", true, cli_opt_ttl, 't'},
                                      {"json", false, cli_opt_json, 0}};
    int first;
    int rc = cli_parse_command(argc, argv, opts, 2, extend_usage, &lo, 2, "RESOURCE VALUE", &first);
    if (rc != 0)
        return rc == -2 ? 0 : rc;
    const char *resource = argv[first];
    redlock_lock *lock = NULL;
    if ((rc = adopt("extend", resource, argv[first + 1], lo.ttl_ms, &lock)) != 0)
        return rc;
    if ((rc = cli_open(c)) != 0) {
        redlock_lock_free(lock);
        return rc;
    }
    redlock_result *r = NULL;
    int status = cli_extend(c, lock, 0, &r);
    if (lo.json) {
        cli_print_json(cli_json_extend(resource, status, lock, r));
    } else if (status == REDLOCK_OK) {
        printf("%lld\n", (long long)redlock_lock_validity_ms(lock));
    }
    if (status != REDLOCK_OK)
        report_failure("extend", resource, status, r);
    int code = cli_exit_for(status, r);
    redlock_result_free(r);
    redlock_lock_free(lock);
    cli_disconnect(c);
    return code;
}
