/* SPDX-License-Identifier: BSD-3-Clause */
/* acquire, release, extend: one step of a lock managed across commands. */
#include "cli_command.h"

#include <signal.h>
#include <string.h>

/* SIGINT, SIGTERM, SIGHUP or SIGQUIT while acquiring (--wait forever waits
 * for nothing else): give up at once. Freeing the client cancels the
 * acquire, releasing on every master what the attempt in flight took. */
static const int interrupt_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

typedef struct interruption {
    cli *c;
    int signum; /* the first signal, or 0 */
    ev_signal watchers[ARRAY_SIZE(interrupt_signals)];
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
    for (size_t i = 0; i < ARRAY_SIZE(in->watchers); i++) {
        if (on) {
            ev_signal_init(&in->watchers[i], on_interrupt, interrupt_signals[i]);
            in->watchers[i].data = in;
            ev_signal_start(in->c->loop, &in->watchers[i]);
        } else {
            ev_signal_stop(in->c->loop, &in->watchers[i]);
        }
    }
}

int cmd_acquire(cli *c, const cli_options *o, char **operands, int count)
{
    cli_resources set;
    int rc = cli_resources_take("acquire", operands, count, 0, &set);
    if (rc != 0 || (rc = cli_load_settings(c, o)) != 0 || (rc = cli_open(c)) != 0)
        return rc;

    redlock_acquire_options ao = cli_acquire_options(o);
    interruption in = {.c = c};
    watch_interrupts(&in, true);
    int status = cli_acquire(c, &set, &ao, &c->lock, &c->result);
    watch_interrupts(&in, false);
    if (in.signum != 0) {
        char shown[CLI_SHOWN_SET_SIZE];
        cli_error("acquire: interrupted by signal %d while acquiring %s", in.signum,
                  cli_resources_shown(&set, shown, sizeof(shown)));
        return 128 + in.signum;
    }
    /* A semaphore's lock is of the slot it won: its key is the resource
     * to extend and release. */
    cli_resources slot = set;
    if (status == REDLOCK_OK && o->slots > 1) {
        slot.names[0] = redlock_lock_resource(c->lock, &slot.lens[0]);
        slot.count = 1;
    }
    if (o->json)
        cli_print_json(cli_json_acquire(&slot, status, c->lock, c->result));
    else if (status == REDLOCK_OK && o->slots > 1)
        printf("%s\n%.*s\n", redlock_lock_value(c->lock, NULL), (int)slot.lens[0],
               slot.names[0]);
    else if (status == REDLOCK_OK)
        printf("%s\n", redlock_lock_value(c->lock, NULL));
    if (status != REDLOCK_OK)
        cli_report_not_acquired(&set, status, c->result, c->quiet);
    /* The handle is forgotten after: the lock stays until its TTL or a release. */
    return cli_exit_for_acquire(status, c->result, o->conflict_exit);
}

/* The resources and the handle for RESOURCE... VALUE given on the command
 * line. */
static int adopt(const char *command, char **operands, int count, int64_t ttl_ms,
                 cli_resources *set, redlock_lock **lock)
{
    int rc = cli_resources_take(command, operands, count, 1, set);
    if (rc != 0)
        return rc;
    const char *value = operands[count - 1];
    size_t len = strlen(value);
    if (len == 0 || len > REDLOCK_MAX_VALUE_LEN) {
        cli_error("%s: VALUE must be 1 to %d bytes", command, REDLOCK_MAX_VALUE_LEN);
        return EX_USAGE;
    }
    rc = redlock_lock_new_many(lock, (const void *const *)set->names, set->lens, set->count,
                               value, len, ttl_ms < 0 ? 0 : ttl_ms);
    if (rc != REDLOCK_OK) {
        cli_error("%s: %s", command, redlock_strerror(rc));
        return EX_SOFTWARE;
    }
    return 0;
}

/* One line on a release or extend that did not succeed. */
static void report_failure(const char *what, const cli_resources *set, int status,
                           const redlock_result *r)
{
    char failures[512];
    char shown[CLI_SHOWN_SET_SIZE];
    cli_describe_failures(r, failures, sizeof(failures));
    cli_error("%s %s: %s%s", what, cli_resources_shown(set, shown, sizeof(shown)),
              redlock_strerror(status), failures);
}

int cmd_release(cli *c, const cli_options *o, char **operands, int count)
{
    cli_resources set;
    int rc = adopt("release", operands, count, -1, &set, &c->lock);
    if (rc != 0 || (rc = cli_open(c)) != 0)
        return rc;
    int status = cli_release(c, c->lock, &c->result);
    if (o->json)
        cli_print_json(cli_json_release(&set, status, c->result));
    if (status != REDLOCK_OK)
        report_failure("release", &set, status, c->result);
    return cli_exit_for(status, c->result);
}

int cmd_extend(cli *c, const cli_options *o, char **operands, int count)
{
    cli_resources set;
    int rc = adopt("extend", operands, count, o->ttl_ms, &set, &c->lock);
    if (rc != 0 || (rc = cli_load_settings(c, o)) != 0 || (rc = cli_open(c)) != 0)
        return rc;
    int status = cli_extend(c, c->lock, 0, &c->result);
    if (o->json)
        cli_print_json(cli_json_extend(&set, status, c->lock, c->result));
    else if (status == REDLOCK_OK)
        printf("%lld\n", (long long)redlock_lock_validity_ms(c->lock));
    if (status != REDLOCK_OK)
        report_failure("extend", &set, status, c->result);
    return cli_exit_for(status, c->result);
}
