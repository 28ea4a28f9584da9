/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the YAML config loader, from a buffer
 * (redlock_config_load_string()).
 *
 * Besides what the sanitizers catch (memory errors, leaks, undefined
 * behaviour), every input must keep the loader's promises: a status it
 * documents; on success a config with 1 to 64 nodes and an empty errbuf; on
 * failure no config and one printable line in errbuf, cut cleanly to any
 * buffer size, the same line every time; and never the value of a password
 * in a message.
 */
#include "fuzz.h"

#include <redlock/redlock.h>
#include <stdbool.h>
#include <string.h>

/* password_env in an input may name this variable; its value must never
 * show in a message. Inputs holding the value itself are skipped, so that
 * any sighting comes from the environment. */
#define SECRET_VAR "REDLOCK_FUZZ_PASSWORD"
#define SECRET_VALUE "env-secret-9f3b"

static bool is_one_printable_line(const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return false;
    }
    return true;
}

/* A loaded config: plausible, copyable, freed. */
static void check_config(redlock_config *cfg)
{
    size_t n = redlock_config_node_count(cfg);
    FUZZ_CHECK(n >= 1 && n <= REDLOCK_MAX_NODES);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(redlock_config_node_name(cfg, i) != NULL);
    FUZZ_CHECK(redlock_config_node_name(cfg, n) == NULL);
    double drift = redlock_config_drift_factor(cfg);
    FUZZ_CHECK(drift >= 0 && drift < 1);
    redlock_config *copy = NULL;
    if (redlock_config_copy(cfg, &copy) == REDLOCK_OK) {
        FUZZ_CHECK(redlock_config_node_count(copy) == n);
        redlock_config_free(copy);
    }
    redlock_config_free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool env_set;
    if (!env_set) {
        setenv(SECRET_VAR, SECRET_VALUE, 1);
        env_set = true;
    }
    if (memmem(data, size, SECRET_VALUE, strlen(SECRET_VALUE)) != NULL)
        return 0;
    const char *text = (const char *)data;

    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    int rc = redlock_config_load_string(&cfg, text, size, "fuzz.yaml", err, sizeof(err));
    FUZZ_CHECK(rc == REDLOCK_OK || rc == REDLOCK_ECONFIG || rc == REDLOCK_ENOMEM);
    FUZZ_CHECK(memchr(err, '\0', sizeof(err)) != NULL);
    if (rc == REDLOCK_OK) {
        FUZZ_CHECK(cfg != NULL);
        FUZZ_CHECK(err[0] == '\0');
        check_config(cfg);
    } else {
        FUZZ_CHECK(cfg == NULL);
        FUZZ_CHECK(strncmp(err, "fuzz.yaml", 9) == 0);
        FUZZ_CHECK(is_one_printable_line(err));
        FUZZ_CHECK(strstr(err, SECRET_VALUE) == NULL);
    }

    /* The error path again, into a small buffer (its size chosen by the
     * input): the same status, the message cut to fit. */
    char small[32];
    size_t small_room = 1 + size % sizeof(small);
    memset(small, 'x', sizeof(small));
    redlock_config *again = NULL;
    int rc2 = redlock_config_load_string(&again, text, size, "fuzz.yaml", small, small_room);
    FUZZ_CHECK(rc2 == rc);
    FUZZ_CHECK(memchr(small, '\0', small_room) != NULL);
    for (size_t i = small_room; i < sizeof(small); i++)
        FUZZ_CHECK(small[i] == 'x'); /* nothing written past errlen */
    if (rc2 == REDLOCK_OK) {
        check_config(again);
    } else {
        FUZZ_CHECK(again == NULL);
        FUZZ_CHECK(strncmp(small, err, strlen(small)) == 0);
    }

    /* And with no buffer at all. */
    again = NULL;
    FUZZ_CHECK(redlock_config_load_string(&again, text, size, NULL, NULL, 0) == rc);
    if (again != NULL)
        redlock_config_free(again);
    return 0;
}
