/* SPDX-License-Identifier: BSD-3-Clause */
/* redlock_health_async(): what each master's settings say, read on its
 * connection beside the lock path (the CLI's check reads it; its findings
 * are tested in test/cli/test_cli_check.c). */
#include "harness.h"

#include <criterion/criterion.h>
#include <string.h>

static harness h;

static void stop(void)
{
    harness_stop(&h);
}

TestSuite(health, .fini = stop, .timeout = 60);

typedef struct health_seen {
    int calls;
    int status;
    bool had_health;
    redlock_health health;
} health_seen;

static void on_health(int status, const redlock_health *health, void *arg)
{
    health_seen *s = arg;
    s->calls++;
    s->status = status;
    s->had_health = health != NULL;
    if (health != NULL)
        s->health = *health;
}

static bool health_in(harness *hh, void *arg)
{
    (void)hh;
    return ((health_seen *)arg)->calls > 0;
}

static void connect_all(size_t n)
{
    harness_connect(&h);
    for (size_t i = 0; i < n; i++)
        harness_wait_connected(&h, i);
}

Test(health, reads_the_settings_of_each_master)
{
    harness_start(&h, 2, NULL);
    redisReply *r = fleet_command(h.fleet, 1, "CONFIG SET maxmemory-policy allkeys-lru");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    connect_all(2);
    static health_seen s;
    cr_assert_eq(redlock_health_async(h.client, on_health, &s), REDLOCK_OK);
    cr_assert(harness_wait_until(&h, health_in, &s, 5000));
    cr_assert_eq(s.status, REDLOCK_OK);
    cr_assert_eq(s.health.master_count, 2);
    for (unsigned i = 0; i < 2; i++) {
        const redlock_master_health *m = &s.health.masters[i];
        cr_expect(m->connected);
        cr_expect_str_eq(m->role, "master");
        cr_expect_eq(m->cluster_enabled, 0);
        cr_expect_eq(m->scripting, 1);
        cr_expect_eq(m->probe_keys, 1);
        cr_expect_eq(m->marker_keys, 1);
        cr_expect_neq(m->aof_enabled, -1);
        cr_expect_neq(m->rdb, -1);
        cr_expect_neq(m->appendfsync[0], '\0');
    }
    cr_expect_str_eq(s.health.masters[0].maxmemory_policy, "noeviction");
    cr_expect_str_eq(s.health.masters[1].maxmemory_policy, "allkeys-lru");
    cr_expect_eq(s.calls, 1);
}

Test(health, sees_cluster_mode)
{
    static const char *const args[] = {"--cluster-enabled", "yes", NULL};
    fleet_options o = {.extra_args = args};
    harness_start(&h, 1, &o);
    connect_all(1);
    static health_seen s;
    cr_assert_eq(redlock_health_async(h.client, on_health, &s), REDLOCK_OK);
    cr_assert(harness_wait_until(&h, health_in, &s, 5000));
    cr_assert_eq(s.status, REDLOCK_OK);
    cr_expect_eq(s.health.masters[0].cluster_enabled, 1);
}

Test(health, a_master_not_connected_is_not_known_and_says_why)
{
    harness_start(&h, 2, NULL);
    cr_assert_eq(fleet_kill(h.fleet, 1), 0);
    connect_all(1);
    static health_seen s;
    cr_assert_eq(redlock_health_async(h.client, on_health, &s), REDLOCK_OK);
    cr_assert(harness_wait_until(&h, health_in, &s, 5000));
    const redlock_master_health *m = &s.health.masters[1];
    cr_expect(!m->connected);
    cr_expect_not_null(m->detail);
    cr_expect_str_eq(m->role, "");
    cr_expect_eq(m->scripting, -1);
    cr_expect(s.health.masters[0].connected);
}

Test(health, freeing_the_client_first_cancels_it_once)
{
    harness_start(&h, 1, NULL);
    connect_all(1);
    static health_seen s;
    cr_assert_eq(redlock_health_async(NULL, on_health, &s), REDLOCK_EINVAL);
    cr_assert_eq(redlock_health_async(h.client, NULL, &s), REDLOCK_EINVAL);
    cr_assert_eq(redlock_health_async(h.client, on_health, &s), REDLOCK_OK);
    harness_free_client(&h);
    cr_expect_eq(s.calls, 1);
    cr_expect_eq(s.status, REDLOCK_ECANCELED);
    cr_expect(!s.had_health);
}
