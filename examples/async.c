/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An asynchronous example on the program's own libev loop: acquire, keep
 * the lock extended while a timer stands in for the work, release, and let
 * the loop end.
 *
 *   async [CONFIG] [RESOURCE]
 *
 * CONFIG defaults to $REDLOCK_CONFIG; RESOURCE to "example-async". Exits 0
 * when the lock was taken, kept and released.
 */
#include <redlock/redlock.h>

#include <ev.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct app {
    struct ev_loop *loop;
    redlock_client *client;
    redlock_lock *lock;
    ev_timer work;
    int exit_code;
} app;

static void finish(app *a, int exit_code)
{
    a->exit_code = exit_code;
    /* Freeing the client closes its connections on the loop; ev_run()
     * returns once they are closed. */
    redlock_client_free(a->client);
    a->client = NULL;
}

static void on_released(int status, const redlock_result *result, void *arg)
{
    app *a = arg;
    (void)result;
    printf("released: %s\n", redlock_strerror(status));
    redlock_lock_free(a->lock);
    a->lock = NULL;
    finish(a, status == REDLOCK_OK ? 0 : 1);
}

static void on_work_done(struct ev_loop *loop, ev_timer *w, int revents)
{
    app *a = w->data;
    (void)loop;
    (void)revents;
    int rc = redlock_release_async(a->client, a->lock, on_released, a);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "release: %s\n", redlock_strerror(rc));
        finish(a, 1);
    }
}

static void on_lost(int status, redlock_lock *lock, void *arg)
{
    app *a = arg;
    (void)lock;
    fprintf(stderr, "lock lost: %s: stop the work now\n", redlock_strerror(status));
    ev_timer_stop(a->loop, &a->work);
    finish(a, 1);
}

static void on_acquired(int status, redlock_lock *lock, const redlock_result *result,
                        void *arg)
{
    app *a = arg;
    if (status != REDLOCK_OK) {
        fprintf(stderr, "acquire: %s (%u of %u masters)\n", redlock_strerror(status),
                result ? result->masters_locked : 0U, result ? result->master_count : 0U);
        finish(a, status == REDLOCK_ECONFLICT ? 75 : 1);
        return;
    }
    a->lock = lock;
    printf("holding for %lld ms, extended in the background\n",
           (long long)redlock_lock_validity_ms(lock));
    int rc = redlock_auto_extend_async(a->client, lock, on_lost, a);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "auto-extend: %s\n", redlock_strerror(rc));
        on_work_done(a->loop, &a->work, 0);
        return;
    }
    /* 1.5 s of "work", longer than the 1 s TTL: the extensions keep it. */
    ev_timer_init(&a->work, on_work_done, 1.5, 0.0);
    a->work.data = a;
    ev_timer_start(a->loop, &a->work);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : getenv("REDLOCK_CONFIG");
    const char *resource = argc > 2 ? argv[2] : "example-async";
    if (path == NULL) {
        fprintf(stderr, "usage: %s CONFIG [RESOURCE] (or set REDLOCK_CONFIG)\n", argv[0]);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN); /* hiredis writes with write(2) */

    char err[256];
    redlock_config *cfg = NULL;
    if (redlock_config_load_file(&cfg, path, err, sizeof(err)) != REDLOCK_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    app a = {.loop = ev_default_loop(0), .exit_code = 1};
    int rc = redlock_client_new(&a.client, cfg, a.loop);
    redlock_config_free(cfg);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "client: %s\n", redlock_strerror(rc));
        return 1;
    }
    redlock_acquire_options opts;
    redlock_acquire_options_init(&opts);
    opts.ttl_ms = 1000;
    rc = redlock_acquire_async(a.client, resource, strlen(resource), &opts, on_acquired, &a);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "acquire: %s\n", redlock_strerror(rc));
        finish(&a, 1);
    }
    ev_run(a.loop, 0);
    if (a.lock != NULL)
        redlock_lock_free(a.lock);
    return a.exit_code;
}
