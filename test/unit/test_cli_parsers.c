/* SPDX-License-Identifier: BSD-3-Clause */
/* The redlock tool's TIME and HOST:PORT parsers. */
#include "cli.h"

#include <criterion/criterion.h>

static int64_t duration(const char *text)
{
    int64_t ms = -1;
    return cli_parse_duration(text, 0, INT32_MAX, &ms) == 0 ? ms : -1;
}

Test(cli_parsers, durations_with_and_without_suffixes)
{
    cr_assert_eq(duration("0"), 0);
    cr_assert_eq(duration("2"), 2000, "a bare number is seconds, as flock -w and timeout(1)");
    cr_assert_eq(duration("1500ms"), 1500);
    cr_assert_eq(duration("1500msec"), 1500);
    cr_assert_eq(duration("2s"), 2000);
    cr_assert_eq(duration("2sec"), 2000);
    cr_assert_eq(duration("1m"), 60000);
    cr_assert_eq(duration("1min"), 60000);
    cr_assert_eq(duration("1h"), 3600000);
    cr_assert_eq(duration("1hr"), 3600000);
    cr_assert_eq(duration("1d"), 86400000);
    cr_assert_eq(duration("2000us"), 2);
    cr_assert_eq(duration("2000usec"), 2);
    cr_assert_eq(duration("007"), 7000);
    cr_assert_eq(duration("0s"), 0);
    cr_assert_eq(duration("5 s"), 5000, "systemd allows a blank before the unit");
}

/* Several parts, each with its unit, summed as systemd sums them. */
Test(cli_parsers, combined_durations)
{
    cr_assert_eq(duration("1m30s"), 90000);
    cr_assert_eq(duration("1h 30min"), 5400000);
    cr_assert_eq(duration("1h30m"), 5400000);
    cr_assert_eq(duration("1s500ms"), 1500);
    cr_assert_eq(duration("1d 1h 1m 1s 1ms"), 90061001);
    cr_assert_eq(duration("1.5s 500ms"), 2000);
    cr_assert_eq(duration("500us 500us"), 1, "summed before the resolution is checked");
}

/* Decimals as timeout(1) and systemd take them, rounded to the nearest
 * millisecond, halves up. */
Test(cli_parsers, durations_with_decimals)
{
    cr_assert_eq(duration("1.5"), 1500, "1.5 seconds");
    cr_assert_eq(duration("1.5s"), 1500);
    cr_assert_eq(duration("0.25s"), 250);
    cr_assert_eq(duration(".5s"), 500);
    cr_assert_eq(duration(".5"), 500);
    cr_assert_eq(duration("1.5m"), 90000);
    cr_assert_eq(duration("0.5h"), 1800000);
    cr_assert_eq(duration("2.000s"), 2000);
    cr_assert_eq(duration("1.0005s"), 1001, "1000.5 ms: halves round up");
    cr_assert_eq(duration("1.0004999s"), 1000, "1000.4999 ms rounds down");
    cr_assert_eq(duration("1.00049999999999999999999999s"), 1000, "every digit counts");
    cr_assert_eq(duration("1.00050000000000000000000001s"), 1001);
    cr_assert_eq(duration("2.5ms"), 3);
    cr_assert_eq(duration("2.4ms"), 2);
    cr_assert_eq(duration("1500us"), 2);
    cr_assert_eq(duration("0.0000003h"), 1, "1.08 ms");
    cr_assert_eq(duration("2147483.647"), 2147483647);
}

Test(cli_parsers, bad_durations)
{
    static const char *const bad[] = {"", "-5", "+5", "5x", " 5", "5s ", "abc", "ms", "s",
                                      "0x10", "1.", ".", "1..5s", "1.5.s", "1,5s", "5S",
                                      "1m30", "30 1m", "1m  ", "5 ", "1w", "5mins", "s5",
                                      "1h,30m", "5\t"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ms = 42;
        cr_assert_eq(cli_parse_duration(bad[i], 0, INT32_MAX, &ms), CLI_TIME_INVALID,
                     "\"%s\" was not refused as garbage", bad[i]);
        cr_assert_eq(ms, 42);
    }
    int64_t ms;
    cr_assert_eq(cli_parse_duration(NULL, 0, 10, &ms), CLI_TIME_INVALID);
}

/* Below the millisecond a TIME is refused, not read as 0. */
Test(cli_parsers, durations_too_fine)
{
    static const char *const fine[] = {"500us", "0.4ms", "0.0001", "1us", "999usec",
                                       "0.0000000000001s"};
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
        int64_t ms = 42;
        cr_assert_eq(cli_parse_duration(fine[i], 0, INT32_MAX, &ms), CLI_TIME_TOO_FINE,
                     "\"%s\" was not refused as too fine", fine[i]);
    }
    cr_assert_eq(duration("0us"), 0, "zero is zero in any unit");
}

Test(cli_parsers, durations_out_of_range)
{
    static const char *const big[] = {"99999999999999999999", "9223372036854775807m",
                                      "2147484",  "2147483.6475s", "596.6h", "25d",
                                      "2147483647", "106751d 106751d"};
    int64_t ms;
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
        cr_assert_eq(cli_parse_duration(big[i], 0, INT32_MAX, &ms), CLI_TIME_RANGE,
                     "\"%s\" was not out of range", big[i]);
    cr_assert_eq(cli_parse_duration("0", 1, 10, &ms), CLI_TIME_RANGE, "below the minimum");
    cr_assert_eq(cli_parse_duration("11ms", 1, 10, &ms), CLI_TIME_RANGE, "above the maximum");
    cr_assert_eq(cli_parse_duration("2147483647ms", 0, INT32_MAX, &ms), 0);
    cr_assert_eq(ms, INT32_MAX);
    cr_assert_eq(cli_parse_duration("2147483.6474s", 0, INT32_MAX, &ms), 0);
    cr_assert_eq(ms, INT32_MAX);
}

Test(cli_parsers, nodes)
{
    cli_node n;
    cr_assert_eq(cli_parse_node("127.0.0.1:7001", &n), 0);
    cr_assert_str_eq(n.host, "127.0.0.1");
    cr_assert_eq(n.port, 7001);
    cr_assert(!n.is_unix);
    cr_assert_eq(cli_parse_node("redis.example", &n), 0);
    cr_assert_str_eq(n.host, "redis.example");
    cr_assert_eq(n.port, 6379);
    cr_assert_eq(cli_parse_node("[::1]:7002", &n), 0);
    cr_assert_str_eq(n.host, "::1");
    cr_assert_eq(n.port, 7002);
    cr_assert_eq(cli_parse_node("[::1]", &n), 0);
    cr_assert_eq(n.port, 6379);
    cr_assert_eq(cli_parse_node("::1", &n), 0, "a bare IPv6 address, default port");
    cr_assert_str_eq(n.host, "::1");
    cr_assert_eq(cli_parse_node("unix:/run/redis.sock", &n), 0);
    cr_assert(n.is_unix);
    cr_assert_str_eq(n.host, "/run/redis.sock");
    cr_assert_not(n.is_url);
    cr_assert_eq(cli_parse_node("unix:/run/a@b.sock", &n), 0, "an '@' in a socket path");
    cr_assert_str_eq(n.host, "/run/a@b.sock");
}

/* URLs are the library's to read, as written: never a host with colons. */
Test(cli_parsers, urls_are_recognized)
{
    static const char *const urls[] = {"redis://127.0.0.1:7401", "redis://u:p@h/2",
                                       "unix:///run/redis.sock?db=1", "rediss://h",
                                       "http://h", "redis://"};
    cli_node n;
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        cr_assert_eq(cli_parse_node(urls[i], &n), 0, "%s", urls[i]);
        cr_assert(n.is_url, "%s", urls[i]);
        cr_assert_not(n.is_unix, "%s", urls[i]);
        cr_assert_str_empty(n.host, "%s", urls[i]);
    }
    cr_assert_eq(cli_parse_node("127.0.0.1:7401", &n), 0);
    cr_assert_not(n.is_url);
}

Test(cli_parsers, bad_nodes)
{
    static const char *const bad[] = {"",          ":7001",          "host:",      "host:0",
                                      "host:65536", "host:99999",    "host:abc",   "host:-1",
                                      "[::1]x",    "[::1]:",         "[]:7001",    "[::1",
                                      "unix:",     "host:7001x",     "host:+7001",
                                      /* credentials without a scheme */
                                      "user:pw@host:7001", "pw@host", "[::1]@h",
                                      "u:p@[::1]:7001"};
    cli_node n;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(cli_parse_node(bad[i], &n), -1, "\"%s\" was accepted", bad[i]);
    char long_host[300];
    memset(long_host, 'h', sizeof(long_host) - 1);
    long_host[sizeof(long_host) - 1] = '\0';
    cr_assert_eq(cli_parse_node(long_host, &n), -1);
}
