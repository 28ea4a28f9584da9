/* SPDX-License-Identifier: BSD-3-Clause */
/* Holding a blocking client's I/O thread in its log callback; see threads.h. */
#include "threads.h"

#include <stdatomic.h>
#include <string.h>

#define GATE_RESOURCE "io-gate"
#define GATE_HOLDER "someone-else"
#define GATE_LIMIT_MS 10000 /* a bound on every wait here, never reached */

static atomic_bool armed, blocked, opened;
static redlock_sync *gated;
static pthread_t helper;

void io_gate_log(int level, const char *message, void *arg)
{
    (void)level;
    (void)arg;
    if (strncmp(message, "acquire attempt 1:", strlen("acquire attempt 1:")) != 0 ||
        !atomic_exchange(&armed, false))
        return;
    atomic_store(&blocked, true);
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(GATE_LIMIT_MS);
    while (!atomic_load(&opened) && tc_now_ms() < deadline)
        tc_sleep_ms(1);
    CHECK(atomic_load(&opened), "the I/O thread was held for %d ms", GATE_LIMIT_MS);
}

/* The helper: one attempt on a resource someone else holds. */
static void *fail_an_attempt(void *arg)
{
    (void)arg;
    redlock_acquire_options o = fleet_acquire_options(1000, 0);
    redlock_lock *lock = NULL;
    int rc = redlock_sync_acquire(gated, GATE_RESOURCE, strlen(GATE_RESOURCE), &o, &lock, NULL);
    CHECK(rc == REDLOCK_ECONFLICT, "the gate's acquire: %s", redlock_status_name(rc));
    redlock_lock_free(lock);
    return NULL;
}

void io_gate_close(fleet *masters, redlock_sync *sync)
{
    for (size_t m = 0; m < fleet_size(masters); m++)
        REQUIRE(fleet_set(masters, m, GATE_RESOURCE, strlen(GATE_RESOURCE), GATE_HOLDER,
                          strlen(GATE_HOLDER), 60000) == 0,
                "set %s", GATE_RESOURCE);
    gated = sync;
    atomic_store(&opened, false);
    atomic_store(&blocked, false);
    atomic_store(&armed, true);
    REQUIRE(pthread_create(&helper, NULL, fail_an_attempt, NULL) == 0, "pthread_create");
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(GATE_LIMIT_MS);
    while (!atomic_load(&blocked) && tc_now_ms() < deadline)
        tc_sleep_ms(1);
    REQUIRE(atomic_load(&blocked), "the I/O thread never reached the gate");
}

void io_gate_open(void)
{
    atomic_store(&opened, true);
    pthread_join(helper, NULL);
}
