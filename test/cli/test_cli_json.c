/* SPDX-License-Identifier: BSD-3-Clause */
/* The tool's --json output (docs/cli.md), read with jansson's strict
 * parser: one object on one line, valid UTF-8 whatever bytes the resource
 * and the values hold, null for numbers that do not exist, an object on
 * failure too. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_json, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

#define RUN(...) cli_run(CLI_ARGS("--config", cli.config, __VA_ARGS__), NULL, T)

/* stdout as one JSON object on one line, parsed strictly (json_loads
 * refuses invalid UTF-8); the test fails otherwise. */
static json_t *parse(const cli_result *r, int code)
{
    cli_expect_exit(r, code);
    size_t len = strlen(r->out);
    cr_assert(len > 1 && r->out[len - 1] == '\n' && strchr(r->out, '\n') == r->out + len - 1,
              "%s: not one line:\n%s", r->cmdline, r->out);
    json_error_t err;
    json_t *o = json_loads(r->out, JSON_REJECT_DUPLICATES, &err);
    cr_assert_not_null(o, "%s: invalid JSON (%s at %d):\n%s", r->cmdline, err.text,
                       err.position, r->out);
    cr_assert(json_is_object(o), "%s: not an object: %s", r->cmdline, r->out);
    return o;
}

static json_t *member(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL) {
        char *text = json_dumps(o, JSON_COMPACT);
        cr_assert_fail("no \"%s\" in %s", key, text ? text : "(out of memory)");
    }
    return v;
}

static long long integer(json_t *o, const char *key)
{
    json_t *v = member(o, key);
    cr_assert(json_is_integer(v), "\"%s\" is not an integer", key);
    return (long long)json_integer_value(v);
}

static const char *string(json_t *o, const char *key)
{
    json_t *v = member(o, key);
    cr_assert(json_is_string(v), "\"%s\" is not a string", key);
    return json_string_value(v);
}

static void expect_null(json_t *o, const char *key)
{
    cr_assert(json_is_null(member(o, key)), "\"%s\" is not null", key);
}

/* Standard base64 (padded) into out; its length, or -1 when malformed. */
static long decode_base64(const char *text, unsigned char *out, size_t room)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t len = strlen(text);
    if (len % 4 != 0)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i += 4) {
        unsigned long group = 0;
        int pad = 0;
        for (size_t k = 0; k < 4; k++) {
            const char *d = text[i + k] == '=' ? NULL : strchr(digits, text[i + k]);
            if (text[i + k] == '=' && i + 4 == len && k >= 2)
                pad++;
            else if (d == NULL || text[i + k] == '\0' || pad > 0)
                return -1;
            group = group << 6 | (d ? (unsigned long)(d - digits) : 0);
        }
        for (int k = 0; k < 3 - pad; k++) {
            if (n == room)
                return -1;
            out[n++] = (unsigned char)(group >> (16 - 8 * k));
        }
    }
    return (long)n;
}

static void expect_base64(json_t *o, const char *key, const void *bytes, size_t len)
{
    unsigned char decoded[512];
    long n = decode_base64(string(o, key), decoded, sizeof(decoded));
    cr_assert(n == (long)len && memcmp(decoded, bytes, len) == 0,
              "\"%s\" does not decode to the %zu bytes expected", key, len);
}

Test(cli_json, acquire_describes_the_lock)
{
    const cli_result *r = RUN("acquire", "--json", "--ttl", "10s", "job");
    json_t *o = parse(r, 0);
    cr_assert_str_eq(string(o, "resource"), "job");
    cr_assert_str_eq(string(o, "status"), "REDLOCK_OK");
    cr_assert(json_is_true(member(o, "acquired")));
    const char *value = string(o, "value");
    cr_assert(cli_is_value(value), "value \"%s\" is not 32 hex digits", value);
    long long validity = integer(o, "validity_ms");
    cr_assert(validity > 0 && validity <= 10000, "validity_ms %lld", validity);
    cr_assert_eq(integer(o, "ttl_ms"), 10000);
    long long elapsed = integer(o, "elapsed_ms");
    cr_assert(elapsed >= 0 && elapsed < 10000, "elapsed_ms %lld", elapsed);
    cr_assert_eq(integer(o, "attempts"), 1);
    cr_assert_eq(integer(o, "quorum"), 3);
    cr_assert_eq(integer(o, "master_count"), 5);
    /* Masters that said OK by the time the outcome was decided: a quorum
     * at least; the others may still take it after, so `status` can show
     * more holding it. */
    long long ok = integer(o, "masters_ok_at_decision");
    cr_assert(ok >= 3 && ok <= 5, "masters_ok_at_decision %lld", ok);
    json_t *masters = member(o, "masters");
    cr_assert_eq(json_array_size(masters), 5);
    size_t said_ok = 0;
    for (size_t i = 0; i < 5; i++) {
        json_t *m = json_array_get(masters, i);
        cr_assert_str_eq(string(m, "node"), cli_node(i));
        const char *outcome = string(m, "outcome");
        cr_assert(strcmp(outcome, "ok") == 0 || strcmp(outcome, "pending") == 0, "%s", outcome);
        said_ok += strcmp(outcome, "ok") == 0;
        expect_null(m, "error");
    }
    cr_assert_eq(said_ok, (size_t)ok);
    cr_assert_geq(cli_masters_holding("job", value), (size_t)ok);
    json_decref(o);
}

/* Failing acquires print an object too, with the status and why. */
Test(cli_json, acquire_prints_an_object_on_failure)
{
    cli_acquire("job", "30s");
    const cli_result *r = RUN("acquire", "--json", "--wait", "0", "job");
    json_t *o = parse(r, 75);
    cli_expect_one_error_line(r);
    cr_assert(json_is_false(member(o, "acquired")));
    cr_assert_str_eq(string(o, "status"), "REDLOCK_ECONFLICT");
    cr_assert_str_eq(string(o, "message"), "the resource is held by another holder");
    expect_null(o, "value");
    expect_null(o, "validity_ms");
    expect_null(o, "ttl_ms");
    cr_assert_eq(integer(o, "masters_ok_at_decision"), 0);
    json_t *masters = member(o, "masters");
    size_t held = 0;
    for (size_t i = 0; i < json_array_size(masters); i++)
        held += strcmp(string(json_array_get(masters, i), "outcome"), "held") == 0;
    cr_assert_geq(held, 3);
    json_decref(o);

    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_kill(cli.fleet, i), 0);
    r = RUN("acquire", "--json", "--wait", "0", "other");
    o = parse(r, 69);
    cr_assert_str_eq(string(o, "status"), "REDLOCK_ENOQUORUM");
    masters = member(o, "masters");
    for (size_t i = 0; i < 3; i++) {
        json_t *m = json_array_get(masters, i);
        cr_assert_str_eq(string(m, "outcome"), "not-connected");
        cr_assert_not_null(strstr(string(m, "error"), "Connection refused"));
    }
    json_decref(o);
}

Test(cli_json, absent_numbers_are_null)
{
    /* status: a free resource, and a key without expiry. */
    const cli_result *r = RUN("status", "--json", "free");
    json_t *o = parse(r, 0);
    json_t *masters = member(o, "masters");
    cr_assert_eq(json_array_size(masters), 5);
    for (size_t i = 0; i < 5; i++) {
        json_t *m = json_array_get(masters, i);
        cr_assert(json_is_false(member(m, "held")));
        expect_null(m, "value");
        expect_null(m, "pttl_ms");
        expect_null(m, "error");
    }
    json_decref(o);
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_eq(fleet_set(cli.fleet, i, "forever", 7, "v", 1, 0), 0);
    o = parse(RUN("status", "--json", "forever"), 0);
    json_t *m = json_array_get(member(o, "masters"), 0);
    cr_assert(json_is_true(member(m, "held")));
    cr_assert_str_eq(string(m, "value"), "v");
    expect_null(m, "pttl_ms");
    json_decref(o);

    /* extend of a lock that is not ours: no validity. */
    r = RUN("extend", "--json", "job", "0123456789abcdef0123456789abcdef");
    o = parse(r, 1);
    cr_assert(json_is_false(member(o, "extended")));
    expect_null(o, "validity_ms");
    json_decref(o);

    /* ping: no latency without a reply. */
    cr_assert_eq(fleet_kill(cli.fleet, 4), 0);
    o = parse(RUN("ping", "--json"), 0);
    masters = member(o, "masters");
    cr_assert_geq(integer(json_array_get(masters, 0), "latency_us"), 0);
    m = json_array_get(masters, 4);
    cr_assert(json_is_false(member(m, "reachable")));
    expect_null(m, "latency_us");
    cr_assert(json_is_string(member(m, "error")));
    /* The client's counters: the one ping each master was sent, or not. */
    json_t *up = member(json_array_get(masters, 0), "stats");
    cr_assert_eq(integer(up, "requests"), 1);
    cr_assert_eq(integer(member(up, "outcomes"), "ok"), 1);
    cr_assert_str_eq(string(up, "state"), "ready");
    json_t *down = member(m, "stats");
    cr_assert_eq(integer(down, "requests"), 0);
    cr_assert_eq(integer(member(down, "outcomes"), "not-connected"), 1);
    cr_assert_str_neq(string(down, "state"), "ready");
    json_decref(o);

}

/* Any bytes in the resource (all but NUL: an argument) and in the value on
 * the masters (all 256) give valid UTF-8 JSON, and read back exactly. */
Test(cli_json, any_bytes_give_valid_utf8_json)
{
    char resource[256];
    for (int b = 1; b < 256; b++)
        resource[b - 1] = (char)b;
    resource[255] = '\0';
    unsigned char value[256];
    for (int b = 0; b < 256; b++)
        value[b] = (unsigned char)b;
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_eq(fleet_set(cli.fleet, i, resource, 255, value, 256, 30000), 0);

    json_t *o = parse(RUN("status", "--json", resource), 0);
    cr_assert_null(json_object_get(o, "resource"), "both resource and resource_base64");
    expect_base64(o, "resource_base64", resource, 255);
    json_t *masters = member(o, "masters");
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        json_t *m = json_array_get(masters, i);
        cr_assert(json_is_true(member(m, "held")));
        cr_assert_null(json_object_get(m, "value"), "both value and value_base64");
        expect_base64(m, "value_base64", value, 256);
    }
    json_decref(o);

    /* The other commands name the resource the same way. */
    o = parse(RUN("acquire", "--json", "--wait", "0", resource), 75);
    expect_base64(o, "resource_base64", resource, 255);
    json_decref(o);
    o = parse(RUN("release", "--json", resource, "0123456789abcdef0123456789abcdef"), 1);
    expect_base64(o, "resource_base64", resource, 255);
    json_decref(o);

    /* Valid UTF-8 stays text, as do control bytes (escaped by JSON). */
    const char *text = "caf\xc3\xa9 \xe2\x82\xac\x01\n\"\\";
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_eq(fleet_set(cli.fleet, i, text, strlen(text), text, strlen(text), 30000), 0);
    o = parse(RUN("status", "--json", text), 0);
    cr_assert_str_eq(string(o, "resource"), text);
    cr_assert_str_eq(string(json_array_get(member(o, "masters"), 0), "value"), text);
    json_decref(o);
}

Test(cli_json, every_command_prints_one_object)
{
    const char *value = cli_acquire("job", "30s");
    json_t *o = parse(RUN("extend", "--json", "--ttl", "20s", "job", value), 0);
    cr_assert(json_is_true(member(o, "extended")));
    cr_assert(integer(o, "validity_ms") > 0);
    cr_assert_eq(integer(o, "ttl_ms"), 20000);
    cr_assert_geq(integer(o, "masters_ok_at_decision"), 3);
    json_decref(o);

    o = parse(RUN("status", "--json", "job"), 0);
    cr_assert_str_eq(string(o, "resource"), "job");
    cr_assert_eq(integer(o, "quorum"), 3);
    json_t *masters = member(o, "masters");
    /* The extension is decided on a majority: a master whose connection
     * was still being made may keep the first TTL (30 s). */
    size_t holding = 0;
    size_t extended = 0;
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        json_t *m = json_array_get(masters, i);
        cr_assert_str_eq(string(m, "node"), cli_node(i));
        if (json_is_true(member(m, "held"))) {
            holding++;
            cr_assert_str_eq(string(m, "value"), value);
            long long pttl = integer(m, "pttl_ms");
            cr_assert(pttl > 0 && pttl <= 30000, "pttl_ms %lld", pttl);
            extended += pttl <= 20000;
        }
    }
    cr_assert_geq(holding, 3);
    cr_assert_geq(extended, 3);
    json_decref(o);

    o = parse(RUN("ping", "--json"), 0);
    cr_assert_str_eq(string(o, "status"), "REDLOCK_OK");
    cr_assert_eq(json_array_size(member(o, "masters")), 5);
    json_decref(o);

    o = parse(RUN("release", "--json", "job", value), 0);
    cr_assert(json_is_true(member(o, "released")));
    cr_assert_geq(integer(o, "masters_ok_at_decision"), 3);
    json_decref(o);
    cli_expect_key_gone("job", "release --json");
}
