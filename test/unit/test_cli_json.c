/* SPDX-License-Identifier: BSD-3-Clause */
/* The redlock tool's JSON objects (tool/json_out.c), without masters:
 * results made up here, read back with jansson's strict parser. */
#include "cli.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* text (freed) parsed strictly; fails the test unless it is an object. */
static json_t *parse(char *text)
{
    cr_assert_not_null(text);
    json_error_t err;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    cr_assert_not_null(o, "invalid JSON (%s at %d): %s", err.text, err.position, text);
    cr_assert(json_is_object(o));
    cr_assert_null(strchr(text, '\n'), "not one line: %s", text);
    free(text);
    return o;
}

static void expect_null(json_t *o, const char *key)
{
    cr_assert(json_is_null(json_object_get(o, key)), "\"%s\" is not null", key);
}

/* One resource, as the commands take it. */
static cli_resources one(const char *resource)
{
    cli_resources set = {.names = {resource}, .lens = {strlen(resource)}, .count = 1};
    return set;
}

static void expect_base64_of(const char *text, const void *bytes, size_t len)
{
    char *expected = cli_base64(bytes, len);
    cr_assert_str_eq(text, expected);
    free(expected);
}

Test(cli_json, base64_of_rfc_4648)
{
    static const char *const cases[][2] = {{"", ""},         {"f", "Zg=="},     {"fo", "Zm8="},
                                           {"foo", "Zm9v"},   {"foob", "Zm9vYg=="},
                                           {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *b = cli_base64((const unsigned char *)cases[i][0], strlen(cases[i][0]));
        cr_assert_str_eq(b, cases[i][1]);
        free(b);
    }
}

/* Every byte, 0x00 to 0xff, in the resource (but NUL, which an argument
 * cannot hold) and in the values: valid JSON, the bytes in base64. */
Test(cli_json, any_bytes_are_valid_utf8_json)
{
    char resource[256];
    for (int b = 1; b < 256; b++)
        resource[b - 1] = (char)b;
    resource[255] = '\0';
    char value[256];
    for (int b = 0; b < 256; b++)
        value[b] = (char)b;
    redlock_master_result m[3] = {
        {.name = "a:1", .outcome = REDLOCK_MASTER_OK, .value = value, .value_len = 256,
         .pttl_ms = 500},
        {.name = "b:1", .outcome = REDLOCK_MASTER_OK, .value = "caf\xc3\xa9", .value_len = 5,
         .pttl_ms = -1},
        {.name = "c\xff:1", .outcome = REDLOCK_MASTER_ERROR, .detail = "ERR \xfe\x01",
         .latency_us = -1, .pttl_ms = -2},
    };
    redlock_result r = {.quorum = 2, .master_count = 3, .masters = m};
    cli_resources set = one(resource);
    json_t *o = parse(cli_json_status(&set, REDLOCK_OK, &r, NULL));
    cr_assert_null(json_object_get(o, "resource"));
    expect_base64_of(json_string_value(json_object_get(o, "resource_base64")), resource, 255);
    cr_assert_null(json_object_get(o, "resources"));
    json_t *all = json_object_get(o, "resources_base64");
    cr_assert_eq(json_array_size(all), 1);
    expect_base64_of(json_string_value(json_array_get(all, 0)), resource, 255);
    json_t *masters = json_object_get(o, "masters");
    json_t *m0 = json_array_get(masters, 0);
    cr_assert_null(json_object_get(m0, "value"));
    expect_base64_of(json_string_value(json_object_get(m0, "value_base64")), value, 256);
    cr_assert_eq(json_integer_value(json_object_get(m0, "pttl_ms")), 500);
    json_t *m1 = json_array_get(masters, 1);
    cr_assert_str_eq(json_string_value(json_object_get(m1, "value")), "caf\xc3\xa9");
    expect_null(m1, "pttl_ms"); /* no expiry */
    json_t *m2 = json_array_get(masters, 2);
    cr_assert_str_eq(json_string_value(json_object_get(m2, "node")), "c\\xff:1");
    cr_assert_str_eq(json_string_value(json_object_get(m2, "error")), "ERR \\xfe\\x01");
    expect_null(m2, "value");
    expect_null(m2, "pttl_ms"); /* no key, no answer */
    json_decref(o);

    o = parse(cli_json_ping(REDLOCK_ENOQUORUM, &r, NULL));
    expect_null(json_array_get(json_object_get(o, "masters"), 2), "latency_us");
    expect_null(json_array_get(json_object_get(o, "masters"), 2), "stats");
    json_decref(o);

    /* With the client's counters: each master's, by outcome name. */
    static redlock_stats stats = {.master_count = 2};
    stats.masters[1].requests = 3;
    stats.masters[1].outcomes[REDLOCK_MASTER_OK] = 2;
    stats.masters[1].outcomes[REDLOCK_MASTER_TIMEOUT] = 1;
    stats.masters[1].state = REDLOCK_CONNECTION_READY;
    stats.masters[1].latency_us[7] = 2;
    stats.masters[1].latency_sum_us = 150;
    o = parse(cli_json_ping(REDLOCK_OK, &r, &stats));
    json_t *s1 = json_object_get(json_array_get(json_object_get(o, "masters"), 1), "stats");
    cr_assert_eq(json_integer_value(json_object_get(s1, "requests")), 3);
    json_t *outcomes = json_object_get(s1, "outcomes");
    cr_assert_eq(json_object_size(outcomes), 2);
    cr_assert_eq(json_integer_value(json_object_get(outcomes, "ok")), 2);
    cr_assert_eq(json_integer_value(json_object_get(outcomes, "timeout")), 1);
    cr_assert_str_eq(json_string_value(json_object_get(s1, "state")), "ready");
    json_t *buckets = json_object_get(s1, "latency_us_buckets");
    cr_assert_eq(json_array_size(buckets), REDLOCK_STATS_BUCKETS);
    cr_assert_eq(json_integer_value(json_array_get(buckets, 7)), 2);
    cr_assert_eq(json_integer_value(json_object_get(s1, "latency_sum_us")), 150);
    expect_null(json_array_get(json_object_get(o, "masters"), 2), "stats"); /* beyond count */
    json_decref(o);

    o = parse(cli_json_release(&set, REDLOCK_ENOTOWNER, &r));
    expect_base64_of(json_string_value(json_object_get(o, "resource_base64")), resource, 255);
    json_decref(o);
}

/* A failed acquire, even without a result (out of memory): an object whose
 * numbers that do not exist are null. */
Test(cli_json, a_failed_acquire_has_null_numbers)
{
    cli_resources set = one("job");
    json_t *o = parse(cli_json_acquire(&set, REDLOCK_ECONFLICT, NULL, NULL));
    cr_assert(json_is_false(json_object_get(o, "acquired")));
    cr_assert_str_eq(json_string_value(json_object_get(o, "status")), "REDLOCK_ECONFLICT");
    static const char *const nulls[] = {"value",         "validity_ms",          "ttl_ms",
                                        "elapsed_ms",    "attempts",             "quorum",
                                        "master_count",  "masters_ok_at_decision"};
    for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
        expect_null(o, nulls[i]);
    cr_assert_eq(json_array_size(json_object_get(o, "masters")), 0);
    json_decref(o);
}

/* Several resources: "resource" is the first given, "resources" every one
 * in the order given; as soon as one is not text, all of them go in
 * "resources_base64". A master where they differ is "mixed", not "held". */
Test(cli_json, several_resources_and_a_mixed_master)
{
    redlock_master_result m[2] = {
        {.name = "a:1", .outcome = REDLOCK_MASTER_OK, .value = "v", .value_len = 1,
         .pttl_ms = 700},
        {.name = "b:1", .outcome = REDLOCK_MASTER_OK, .pttl_ms = CLI_PTTL_MIXED},
    };
    redlock_result r = {.quorum = 2, .master_count = 2, .masters = m};
    cli_resources set = {.names = {"b", "a"}, .lens = {1, 1}, .count = 2};
    json_t *o = parse(cli_json_status(&set, REDLOCK_OK, &r, NULL));
    cr_assert_str_eq(json_string_value(json_object_get(o, "resource")), "b");
    json_t *all = json_object_get(o, "resources");
    cr_assert_eq(json_array_size(all), 2);
    cr_assert_str_eq(json_string_value(json_array_get(all, 0)), "b");
    cr_assert_str_eq(json_string_value(json_array_get(all, 1)), "a");
    json_t *m0 = json_array_get(json_object_get(o, "masters"), 0);
    cr_assert(json_is_true(json_object_get(m0, "held")));
    cr_assert(json_is_false(json_object_get(m0, "mixed")));
    json_t *m1 = json_array_get(json_object_get(o, "masters"), 1);
    cr_assert(json_is_false(json_object_get(m1, "held")));
    cr_assert(json_is_true(json_object_get(m1, "mixed")));
    expect_null(m1, "value");
    expect_null(m1, "pttl_ms");
    json_decref(o);

    cli_resources bytes = {.names = {"ok", "caf\xff"}, .lens = {2, 4}, .count = 2};
    o = parse(cli_json_release(&bytes, REDLOCK_OK, &r));
    cr_assert_str_eq(json_string_value(json_object_get(o, "resource")), "ok");
    cr_assert_null(json_object_get(o, "resources"));
    all = json_object_get(o, "resources_base64");
    cr_assert_eq(json_array_size(all), 2);
    expect_base64_of(json_string_value(json_array_get(all, 0)), "ok", 2);
    expect_base64_of(json_string_value(json_array_get(all, 1)), "caf\xff", 4);
    json_decref(o);
}
