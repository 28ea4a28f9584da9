/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A blocking-API example: take a lock, do the work while its validity
 * lasts, give it back.
 *
 *   blocking [CONFIG] [RESOURCE]
 *
 * CONFIG defaults to $REDLOCK_CONFIG; RESOURCE to "example". Exits 0 when
 * the lock was taken and released, 75 when another holder has it, 1 on any
 * other failure.
 */
#include <redlock/redlock.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : getenv("REDLOCK_CONFIG");
    const char *resource = argc > 2 ? argv[2] : "example";
    if (path == NULL) {
        fprintf(stderr, "usage: %s CONFIG [RESOURCE] (or set REDLOCK_CONFIG)\n", argv[0]);
        return 1;
    }

    char err[256];
    redlock_config *cfg = NULL;
    int rc = redlock_config_load_file(&cfg, path, err, sizeof(err));
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    redlock_sync *client = NULL;
    rc = redlock_sync_new(&client, cfg);
    redlock_config_free(cfg); /* the client keeps its own copy */
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "client: %s\n", redlock_strerror(rc));
        return 1;
    }

    redlock_acquire_options opts;
    redlock_acquire_options_init(&opts);
    opts.ttl_ms = 10000;
    redlock_lock *lock = NULL;
    rc = redlock_sync_acquire(client, resource, strlen(resource), &opts, &lock, NULL);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "acquire %s: %s\n", resource, redlock_strerror(rc));
        redlock_sync_free(client);
        return rc == REDLOCK_ECONFLICT ? 75 : 1;
    }
    printf("holding %s for %lld ms\n", resource, (long long)redlock_lock_validity_ms(lock));

    /* The work goes here; check the validity before every side effect. */

    rc = redlock_sync_release(client, lock, NULL);
    printf("released %s: %s\n", resource, redlock_strerror(rc));
    redlock_lock_free(lock);
    redlock_sync_free(client);
    return rc == REDLOCK_OK ? 0 : 1;
}
