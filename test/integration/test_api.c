/* SPDX-License-Identifier: BSD-3-Clause */
/* The asynchronous API's contract: argument checks, callbacks exactly once,
 * cancellation when the client is freed (also from inside a callback), and
 * handles freed while an operation runs. */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static harness h;

static void three_masters(void)
{
    harness_start(&h, 3, NULL);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(api, .init = three_masters, .fini = teardown, .timeout = 60);

static int calls;
static int last_status;

static void count_acquire(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    calls++;
    last_status = status;
    redlock_lock_free(lock);
}

static void count_done(int status, const redlock_result *r, void *arg)
{
    calls++;
    last_status = status;
}

Test(api, bad_arguments_are_refused_and_never_call_back)
{
    harness_connect(&h);
    calls = 0;
    char big[64];
    memset(big, 'x', sizeof(big));
    cr_assert_eq(redlock_acquire_async(NULL, "r", 1, NULL, count_acquire, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_acquire_async(h.client, "r", 0, NULL, count_acquire, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_acquire_async(h.client, NULL, 1, NULL, count_acquire, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_acquire_async(h.client, big, REDLOCK_MAX_RESOURCE_LEN + 1, NULL,
                                       count_acquire, NULL),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_acquire_async(h.client, "r", 1, NULL, NULL, NULL), REDLOCK_EINVAL);
    redlock_acquire_options o = fleet_acquire_options(0, 0);
    cr_assert_eq(redlock_acquire_async(h.client, "r", 1, &o, count_acquire, NULL), REDLOCK_EINVAL);
    o = fleet_acquire_options(1000, -7);
    cr_assert_eq(redlock_acquire_async(h.client, "r", 1, &o, count_acquire, NULL), REDLOCK_EINVAL);
    o = fleet_acquire_options(1000, 0);
    o.wait_ms = -3;
    cr_assert_eq(redlock_acquire_async(h.client, "r", 1, &o, count_acquire, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_extend_async(h.client, NULL, 0, count_done, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_release_async(NULL, NULL, count_done, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_inspect_async(h.client, "r", 0, count_done, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_inspect_async(h.client, NULL, 1, count_done, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_inspect_async(h.client, big, REDLOCK_MAX_RESOURCE_LEN + 1, count_done,
                                       NULL),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_inspect_async(h.client, "r", 1, NULL, NULL), REDLOCK_EINVAL);

    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_lock_new(&lock, "r", 1, "", 0, 0), REDLOCK_EINVAL);
    cr_assert_eq(redlock_lock_new(&lock, "", 0, "v", 1, 0), REDLOCK_EINVAL);
    cr_assert_eq(redlock_lock_new(&lock, "r", 1, "v", 1, -1), REDLOCK_EINVAL);
    cr_assert_null(lock);
    cr_assert_eq(redlock_lock_new(&lock, "r", 1, "v", 1, 0), REDLOCK_OK);
    cr_assert_eq(redlock_extend_async(h.client, lock, -1, count_done, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_extend_async(h.client, lock, 0, NULL, NULL), REDLOCK_EINVAL);
    int fd = 7;
    cr_assert_eq(redlock_lock_lost_fd(NULL, &fd), REDLOCK_EINVAL);
    cr_assert_eq(fd, -1);
    cr_assert_eq(redlock_lock_lost_fd(lock, NULL), REDLOCK_EINVAL);
    redlock_lock_free(lock);
    harness_run_for(&h, 50);
    cr_assert_eq(calls, 0);
}

/* With no descriptor left, the lost fd cannot be made: a status says so,
 * and a later call, with descriptors again, makes it. */
Test(api, a_lost_fd_that_cannot_be_created_is_a_status)
{
    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_lock_new(&lock, "r", 1, "v", 1, 0), REDLOCK_OK);
    struct rlimit saved;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &saved), 0);
    int lowest_free = open("/dev/null", O_RDONLY | O_CLOEXEC);
    cr_assert_geq(lowest_free, 0);
    close(lowest_free);
    struct rlimit none_left = {.rlim_cur = (rlim_t)lowest_free, .rlim_max = saved.rlim_max};
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &none_left), 0);
    int fd = 7;
    int rc = redlock_lock_lost_fd(lock, &fd);
    int err = errno;
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &saved), 0);
    cr_assert_eq(rc, REDLOCK_ESYS, "%s", redlock_status_name(rc));
    cr_assert_eq(err, EMFILE);
    cr_assert_eq(fd, -1);
    cr_assert_eq(redlock_lock_lost_fd(lock, &fd), REDLOCK_OK);
    cr_assert_geq(fd, 0);
    redlock_lock_free(lock);
}

/* An acquire option takes exactly the range of its config setting
 * (REDLOCK_SETTING_MAP): its max is accepted, one more is refused. */
Test(api, acquire_options_take_the_ranges_of_the_config_settings)
{
    harness_connect(&h);
    calls = 0;
    static const redlock_setting keys[] = {REDLOCK_TTL_MS, REDLOCK_RETRY_COUNT,
                                           REDLOCK_RETRY_DELAY_MS, REDLOCK_RETRY_JITTER_MS};
    static const int64_t max_of[] = {
#define RL_TEST_MAX_(name, key, min, max, def) [REDLOCK_##name] = (max),
        REDLOCK_SETTING_MAP(RL_TEST_MAX_)
#undef RL_TEST_MAX_
    };
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        int64_t max = max_of[keys[k]];
        redlock_config *cfg = NULL;
        cr_assert_eq(redlock_config_new(&cfg), REDLOCK_OK);
        cr_assert_eq(redlock_config_set(cfg, keys[k], max), REDLOCK_OK);
        cr_assert_eq(redlock_config_set(cfg, keys[k], max + 1), REDLOCK_EINVAL);
        redlock_config_free(cfg);

        redlock_acquire_options o = fleet_acquire_options(1000, 0);
        int64_t *field = keys[k] == REDLOCK_TTL_MS          ? &o.ttl_ms
                         : keys[k] == REDLOCK_RETRY_COUNT    ? &o.retry_count
                         : keys[k] == REDLOCK_RETRY_DELAY_MS ? &o.retry_delay_ms
                                                             : &o.retry_jitter_ms;
        *field = max + 1;
        cr_assert_eq(redlock_acquire_async(h.client, "r", 1, &o, count_acquire, NULL),
                     REDLOCK_EINVAL, "%s = %lld", redlock_setting_name(keys[k]),
                     (long long)*field);
    }
    harness_run_for(&h, 50);
    cr_assert_eq(calls, 0);
}

Test(api, a_client_needs_nodes_and_consistent_settings)
{
    redlock_client *c = NULL;
    redlock_config *empty = NULL;
    cr_assert_eq(redlock_config_new(&empty), REDLOCK_OK);
    cr_assert_eq(redlock_client_new(&c, empty, h.loop), REDLOCK_EINVAL);
    cr_assert_null(c);
    cr_assert_eq(redlock_client_new(&c, h.cfg, NULL), REDLOCK_EINVAL);
    redlock_config_free(empty);

    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MIN_MS, 500), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MAX_MS, 100), REDLOCK_OK);
    cr_assert_eq(redlock_client_new(&c, h.cfg, h.loop), REDLOCK_ECONFIG);
    cr_assert_null(c);
    cr_assert(strstr(h.log, "reconnect_min_ms") != NULL, "log:\n%s", h.log);
}

/* A config no lock could be valid with is refused by both clients, with
 * one log line saying why; a risky one is accepted with a warning. */
Test(api, a_client_refuses_a_config_that_cannot_work_and_warns_of_a_risky_one)
{
    static const char refused[] = "invalid configuration: command_timeout_ms (10000) must be "
                                  "less than ttl_ms (10000), or a lock can expire before its "
                                  "masters answer\n";
    redlock_client *c = NULL;
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, 10000), REDLOCK_OK);
    cr_assert_eq(redlock_client_new(&c, h.cfg, h.loop), REDLOCK_ECONFIG);
    cr_assert_null(c);
    cr_assert_str_eq(h.log, refused);
    redlock_sync *s = NULL;
    cr_assert_eq(redlock_sync_new(&s, h.cfg), REDLOCK_ECONFIG);
    cr_assert_null(s);
    cr_assert_str_eq(h.log, "invalid configuration: command_timeout_ms (10000) must be less than "
                            "ttl_ms (10000), or a lock can expire before its masters answer\n"
                            "invalid configuration: command_timeout_ms (10000) must be less than "
                            "ttl_ms (10000), or a lock can expire before its masters answer\n");

    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, 50), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_set_timeouts(h.cfg, 0, 0, 100000), REDLOCK_OK);
    cr_assert_eq(redlock_client_new(&c, h.cfg, h.loop), REDLOCK_ECONFIG);
    cr_assert(strstr(h.log, "invalid configuration: nodes[0].command_timeout_ms (100000) must be "
                            "less than ttl_ms (10000), or a lock can expire before its masters "
                            "answer\n") != NULL,
              "log:\n%s", h.log);

    cr_assert_eq(redlock_config_node_set_timeouts(h.cfg, 0, 0, 1500), REDLOCK_OK);
    harness_connect(&h);
    cr_assert_not_null(h.client);
    cr_assert(strstr(h.log, "nodes[0].command_timeout_ms (1500) is more than a tenth of ttl_ms "
                            "(10000): a slow master leaves a lock little validity\n") != NULL,
              "log:\n%s", h.log);
}

Test(api, freeing_the_client_cancels_operations_in_flight_once_each)
{
    /* A stopped master and a long timeout (below the TTL, which a config
     * needs) keep the operations in flight. */
    redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, 5000);
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    cr_assert_eq(harness_acquire(&h, "held", 4, &o, &lock, NULL), REDLOCK_OK);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pause(h.fleet, i), 0);
    calls = 0;
    cr_assert_eq(redlock_acquire_async(h.client, "a", 1, &o, count_acquire, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_acquire_async(h.client, "b", 1, &o, count_acquire, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_extend_async(h.client, lock, 0, count_done, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_release_async(h.client, lock, count_done, NULL), REDLOCK_EBUSY);
    harness_run_for(&h, 50);
    cr_assert_eq(calls, 0);
    redlock_client_free(h.client);
    h.client = NULL;
    cr_assert_eq(calls, 3);
    cr_assert_eq(last_status, REDLOCK_ECANCELED);
    /* The freed client drains its connections: let the masters answer. */
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_resume(h.fleet, i), 0);
    harness_free_client(&h);
    cr_assert_eq(calls, 3);
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_RELEASED,
                 "freeing the client released the lock it held");
    redlock_lock_free(lock);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "held", 4), -2);
}

static void free_client_from_callback(int status, redlock_lock *lock, const redlock_result *r,
                                      void *arg)
{
    calls++;
    last_status = status;
    redlock_lock_free(lock);
    redlock_client_free(h.client);
    h.client = NULL;
    /* New operations on a client being freed are refused. */
}

Test(api, the_client_may_be_freed_from_inside_its_callback)
{
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    calls = 0;
    cr_assert_eq(redlock_acquire_async(h.client, "x", 1, &o, free_client_from_callback, NULL),
                 REDLOCK_OK);
    cr_assert_eq(redlock_acquire_async(h.client, "y", 1, &o, count_acquire, NULL), REDLOCK_OK);
    for (int i = 0; i < 200 && calls < 2; i++)
        ev_run(h.loop, EVRUN_ONCE);
    cr_assert_eq(calls, 2, "one completed, the other was canceled by the free");
    cr_assert_null(h.client);
}

Test(api, a_lock_handle_may_be_freed_while_its_operation_runs)
{
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    cr_assert_eq(harness_acquire(&h, "handle", 6, &o, &lock, NULL), REDLOCK_OK);
    calls = 0;
    cr_assert_eq(redlock_extend_async(h.client, lock, 20000, count_done, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    for (int i = 0; i < 200 && calls < 1; i++)
        ev_run(h.loop, EVRUN_ONCE);
    cr_assert_eq(calls, 1);
    cr_assert_eq(last_status, REDLOCK_OK);
}

Test(api, release_without_a_callback)
{
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    cr_assert_eq(harness_acquire(&h, "quiet", 5, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_release_async(h.client, lock, NULL, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_release_async(h.client, lock, NULL, NULL), REDLOCK_EBUSY);
    harness_run_for(&h, 100);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "quiet", 5), -2);
    redlock_lock_free(lock);
}

Test(api, a_result_copy_outlives_the_callback)
{
    harness_connect(&h);
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, "copy", 4, &o, &lock, &r), REDLOCK_OK);
    redlock_result *again = NULL;
    cr_assert_eq(redlock_result_copy(r, &again), REDLOCK_OK);
    redlock_result_free(r);
    cr_assert_eq(again->master_count, 3);
    cr_assert_str_eq(again->masters[0].name, redlock_config_node_name(h.cfg, 0));
    redlock_result_free(again);
    cr_assert_eq(redlock_result_copy(NULL, &again), REDLOCK_EINVAL);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}
