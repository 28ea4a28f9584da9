/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fencing tokens protecting a storage (docs/fencing.md): a holder writes
 * twice under a fenced lock to a storage that refuses a write with a token
 * lower than the greatest it has seen. Between its check of the validity
 * and its second write the holder pauses (a GC pause, swapping, SIGSTOP):
 * if the lock went to someone else meanwhile, who wrote with a greater
 * token, the storage refuses the late write instead of letting it
 * overwrite newer data.
 *
 *   fenced_storage CONFIG STORAGE_HOST STORAGE_PORT ITEM VALUE [PAUSE_MS]
 *
 * The lock's resource is "fenced:" ITEM. The storage is a Redis server
 * (not one of the lock's masters), the item a hash with the value and the
 * greatest token accepted. Exits 0 when both writes were accepted, 3 when
 * the storage refused one, 75 when another holder has the lock, 1 on any
 * other failure. The masters' fencing counters must be in use (once per
 * new deployment: `redlock fencing-init`).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <redlock/redlock.h>

#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The storage's side: compare and write in one atomic step. An equal
 * token is the same holder writing again. */
static const char store_script[] =
    "local t = tonumber(redis.call('HGET', KEYS[1], 'token') or '0')\n"
    "if tonumber(ARGV[1]) < t then\n"
    "  return 0\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 'token', ARGV[1], 'value', ARGV[2])\n"
    "return 1\n";

/* 1 accepted, 0 refused, -1 the storage failed. */
static int store(redisContext *storage, const char *item, uint64_t token, const char *value)
{
    char text[24];
    snprintf(text, sizeof(text), "%" PRIu64, token);
    redisReply *r = redisCommand(storage, "EVAL %s 1 %s %s %s", store_script, item, text, value);
    int rc = r != NULL && r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -1;
    if (r == NULL)
        fprintf(stderr, "storage: %s\n", storage->errstr);
    freeReplyObject(r);
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* One write, checking the validity first as every write should. */
static int write_once(redisContext *storage, const redlock_lock *lock, const char *item,
                      const char *value, long pause_ms)
{
    if (redlock_lock_validity_ms(lock) <= 0) {
        printf("the lock ran out: not writing\n");
        return -1;
    }
    if (pause_ms > 0) {
        printf("valid for %" PRId64 " ms more; pausing %ld ms before writing\n",
               redlock_lock_validity_ms(lock), pause_ms);
        fflush(stdout);
        sleep_ms(pause_ms); /* the pause fencing is for */
    }
    uint64_t token = redlock_lock_fencing_token(lock);
    int rc = store(storage, item, token, value);
    printf("write \"%s\" with token %" PRIu64 ": %s\n", value, token,
           rc == 1 ? "accepted" : rc == 0 ? "refused" : "failed");
    fflush(stdout);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s CONFIG STORAGE_HOST STORAGE_PORT ITEM VALUE [PAUSE_MS]\n",
                argv[0]);
        return 1;
    }
    const char *item = argv[4];
    const char *value = argv[5];
    long pause_ms = argc > 6 ? strtol(argv[6], NULL, 10) : 0;

    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    if (redlock_config_load_file(&cfg, argv[1], err, sizeof(err)) != REDLOCK_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    redlock_sync *client = NULL;
    int rc = redlock_sync_new(&client, cfg);
    redlock_config_free(cfg);
    redisContext *storage = redisConnect(argv[2], (int)strtol(argv[3], NULL, 10));
    if (rc != REDLOCK_OK || storage == NULL || storage->err) {
        fprintf(stderr, "cannot start: %s\n",
                rc != REDLOCK_OK ? redlock_strerror(rc) : storage ? storage->errstr : "no memory");
        redisFree(storage);
        redlock_sync_free(client);
        return 1;
    }

    char resource[256];
    snprintf(resource, sizeof(resource), "fenced:%s", item);
    redlock_acquire_options opts;
    redlock_acquire_options_init(&opts);
    opts.fencing = 1;
    redlock_lock *lock = NULL;
    rc = redlock_sync_acquire(client, resource, strlen(resource), &opts, &lock, NULL);
    int status = 0;
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "acquire %s: %s\n", resource, redlock_strerror(rc));
        status = rc == REDLOCK_ECONFLICT ? 75 : 1;
    } else {
        printf("holding %s with token %" PRIu64 "\n", resource, redlock_lock_fencing_token(lock));
        int first = write_once(storage, lock, item, value, 0);
        int second = first == 1 ? write_once(storage, lock, item, value, pause_ms) : first;
        status = first == 1 && second == 1 ? 0 : first == 0 || second == 0 ? 3 : 1;
        redlock_sync_release(client, lock, NULL); /* refused: someone else holds it now */
        redlock_lock_free(lock);
    }
    redisFree(storage);
    redlock_sync_free(client);
    return status;
}
