/* SPDX-License-Identifier: BSD-3-Clause */
/* Unusual arguments: resources and values of any bytes (NUL, newline, CR,
 * 0xff) and of the largest size, through acquire, extend, inspect and
 * release, checked byte for byte on the masters; one byte too many is
 * refused; an even number of masters is accepted with a warning. */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static harness h;

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(arguments, .fini = teardown, .timeout = 90);

#define TTL_MS 10000

typedef struct expected_key {
    const void *key, *value;
    size_t key_len, len;
    long long ttl_ms;
} expected_key;

/* Whether master i holds the expected key; why not in *why. */
static bool holds(size_t i, const expected_key *e, const char **why)
{
    char buf[REDLOCK_MAX_VALUE_LEN];
    size_t got = 0;
    *why = "the key is missing";
    if (fleet_get(h.fleet, i, e->key, e->key_len, buf, sizeof(buf), &got) != 1)
        return false;
    *why = "another value";
    if (got != e->len || memcmp(buf, e->value, e->len) != 0)
        return false;
    *why = "a PTTL out of range";
    long long pttl = fleet_pttl(h.fleet, i, e->key, e->key_len);
    return pttl > 0 && pttl <= e->ttl_ms;
}

static bool held_everywhere(harness *hh, void *arg)
{
    const char *why;
    for (size_t i = 0; i < fleet_size(hh->fleet); i++)
        if (!holds(i, arg, &why))
            return false;
    return true;
}

/* On every master, key holds exactly value (len bytes) with a PTTL in
 * (0, ttl_ms] (the last master's request may land after the decision:
 * bounded wait). */
static void expect_value_everywhere(const void *key, size_t key_len, const void *value,
                                    size_t len, long long ttl_ms)
{
    expected_key e = {key, value, key_len, len, ttl_ms};
    harness_wait_until(&h, held_everywhere, &e, 3000);
    const char *why;
    for (size_t i = 0; i < fleet_size(h.fleet); i++)
        cr_assert(holds(i, &e, &why), "master %zu: %s", i, why);
}

/* The inspect result shows value (len bytes, NUL-terminated) everywhere. */
static void expect_inspected(const redlock_result *r, const void *value, size_t len)
{
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        expect_master(r, i, REDLOCK_MASTER_OK, NULL);
        cr_assert(m->value != NULL && m->value_len == len && memcmp(m->value, value, len) == 0,
                  "%s: another value", m->name);
        cr_assert_eq(m->value[len], '\0');
        cr_assert(m->pttl_ms > 0 && m->pttl_ms <= TTL_MS, "%s: PTTL %lld", m->name,
                  (long long)m->pttl_ms);
    }
}

Test(arguments, resources_are_binary_safe)
{
    static const char resource[] = {'a', '\0', 'b', '\n', '\r', ' ', (char)0xff, 'z'};
    harness_start(&h, 3, NULL);
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, resource, sizeof(resource), &o, &lock, NULL), REDLOCK_OK);
    size_t len = 0;
    const void *res = redlock_lock_resource(lock, &len);
    cr_assert(len == sizeof(resource) && memcmp(res, resource, len) == 0);
    const char *value = redlock_lock_value(lock, NULL);
    expect_value_everywhere(resource, sizeof(resource), value, REDLOCK_VALUE_LEN, TTL_MS);
    /* A prefix up to the NUL byte is a different key. */
    cr_assert_eq(fleet_pttl(h.fleet, 0, "a", 1), -2);
    redlock_result *r = NULL;
    cr_assert_eq(harness_inspect(&h, resource, sizeof(resource), &r), REDLOCK_OK);
    expect_inspected(r, value, REDLOCK_VALUE_LEN);
    redlock_result_free(r);
    cr_assert_eq(harness_extend(&h, lock, 5000, NULL), REDLOCK_OK);
    expect_value_everywhere(resource, sizeof(resource), value, REDLOCK_VALUE_LEN, 5000);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    cr_assert(harness_wait_key_gone(&h, resource, sizeof(resource), 3000));
    redlock_lock_free(lock);
}

/* A value handed over by another holder (redlock_lock_new) may hold any
 * bytes; its prefix up to a NUL byte is somebody else's value. */
Test(arguments, values_are_binary_safe)
{
    static const char resource[] = {'r', '\n', '\0', 's'};
    static const char value[] = {'v', '\0', 'a', '\n', 'l', '\r', (char)0xff};
    harness_start(&h, 3, NULL);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_set(h.fleet, i, resource, sizeof(resource), value, sizeof(value),
                               TTL_MS),
                     0);
    harness_connect(&h);

    redlock_lock *cut = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(redlock_lock_new(&cut, resource, sizeof(resource), "v", 1, TTL_MS), REDLOCK_OK);
    cr_assert_eq(harness_extend(&h, cut, TTL_MS, &r), REDLOCK_ENOTOWNER);
    for (size_t i = 0; i < 3; i++)
        expect_master_or_pending(r, i, REDLOCK_MASTER_HELD, NULL);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, cut, &r), REDLOCK_ENOTOWNER);
    cr_assert_eq(r->masters_locked, 0);
    redlock_result_free(r);
    redlock_lock_free(cut);
    expect_value_everywhere(resource, sizeof(resource), value, sizeof(value), TTL_MS);

    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_lock_new(&lock, resource, sizeof(resource), value, sizeof(value), 0),
                 REDLOCK_OK);
    size_t len = 0;
    const char *kept = redlock_lock_value(lock, &len);
    cr_assert(len == sizeof(value) && memcmp(kept, value, len) == 0 && kept[len] == '\0');
    cr_assert_eq(harness_extend(&h, lock, 5000, &r), REDLOCK_OK);
    cr_assert_geq(r->masters_locked, 2);
    redlock_result_free(r);
    expect_value_everywhere(resource, sizeof(resource), value, sizeof(value), 5000);
    cr_assert_eq(harness_inspect(&h, resource, sizeof(resource), &r), REDLOCK_OK);
    expect_inspected(r, value, sizeof(value));
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, &r), REDLOCK_OK);
    redlock_result_free(r);
    cr_assert(harness_wait_key_gone(&h, resource, sizeof(resource), 3000));
    redlock_lock_free(lock);
}

/* REDLOCK_MAX_RESOURCE_LEN (1 MiB) is the largest resource: it works end
 * to end; one byte more is refused before anything is sent. */
Test(arguments, a_resource_of_the_largest_size_works_and_one_byte_more_is_refused)
{
    size_t max = REDLOCK_MAX_RESOURCE_LEN;
    char *resource = malloc(max + 1);
    cr_assert_not_null(resource);
    for (size_t i = 0; i <= max; i++)
        resource[i] = (char)(i * 7 + 1); /* every byte value, NUL and newline included */
    harness_start(&h, 3, NULL);
    /* Three MiB go out per request: room for a loaded machine. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, 3000), REDLOCK_OK);
    harness_connect(&h);

    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, resource, max, &o, &lock, NULL), REDLOCK_OK);
    const char *value = redlock_lock_value(lock, NULL);
    expect_value_everywhere(resource, max, value, REDLOCK_VALUE_LEN, TTL_MS);
    cr_assert_eq(fleet_pttl(h.fleet, 0, resource, max - 1), -2, "a shorter key was written");
    redlock_result *r = NULL;
    cr_assert_eq(harness_inspect(&h, resource, max, &r), REDLOCK_OK);
    expect_inspected(r, value, REDLOCK_VALUE_LEN);
    redlock_result_free(r);
    cr_assert_eq(harness_extend(&h, lock, TTL_MS, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    cr_assert(harness_wait_key_gone(&h, resource, max, 3000));
    redlock_lock_free(lock);

    cr_assert_eq(harness_acquire(&h, resource, max + 1, &o, NULL, NULL), REDLOCK_EINVAL);
    cr_assert_eq(harness_inspect(&h, resource, max + 1, NULL), REDLOCK_EINVAL);
    lock = (redlock_lock *)resource;
    cr_assert_eq(redlock_lock_new(&lock, resource, max + 1, "v", 1, 0), REDLOCK_EINVAL);
    cr_assert_null(lock);
    free(resource);
}

typedef struct log_record {
    int level;
    char message[256];
} log_record;

static log_record records[64];
static size_t record_count;

static void record_log(int level, const char *message, void *arg)
{
    (void)arg;
    /* The fixture declares its fresh masters durable (harness.c: no wait
     * for their young runs) though they run without AOF; the library's
     * CONFIG check rightly says so, once per master. Not what is counted
     * here. */
    if (strstr(message, "declared durable, but its CONFIG says") != NULL)
        return;
    if (record_count < sizeof(records) / sizeof(records[0])) {
        records[record_count].level = level;
        snprintf(records[record_count].message, sizeof(records[0].message), "%s", message);
        record_count++;
    }
}

/* Four masters tolerate one failure, as three do: the client works, and
 * says so through the log callback, once, when it is created. */
Test(arguments, an_even_number_of_masters_is_accepted_with_a_warning)
{
    harness_start(&h, 4, NULL);
    record_count = 0;
    cr_assert_eq(redlock_config_set_log(h.cfg, record_log, NULL, REDLOCK_LOG_WARN), REDLOCK_OK);
    harness_connect(&h);
    cr_assert_eq(record_count, 1);
    cr_assert_eq(records[0].level, REDLOCK_LOG_WARN);
    cr_assert_str_eq(records[0].message,
                     "4 masters: an even number tolerates no more failures than 3 would; an odd "
                     "number is recommended");

    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, "even", 4, &o, &lock, &r), REDLOCK_OK);
    cr_assert_eq(r->quorum, 3);
    cr_assert_eq(r->master_count, 4);
    cr_assert_geq(r->masters_locked, 3);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert(harness_wait_key_gone(&h, "even", 4, 3000));
    cr_assert_eq(record_count, 1, "another warning: %s", records[record_count - 1].message);

    /* An odd number: no warning. */
    harness_free_client(&h);
    redlock_config_clear_nodes(h.cfg);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(redlock_config_add_tcp_node(h.cfg, "127.0.0.1", fleet_port(h.fleet, i), NULL),
                     REDLOCK_OK);
    harness_connect(&h);
    cr_assert_eq(record_count, 1);
}
