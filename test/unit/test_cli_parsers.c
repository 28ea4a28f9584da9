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
    cr_assert_eq(duration("1500"), 1500);
    cr_assert_eq(duration("1500ms"), 1500);
    cr_assert_eq(duration("2s"), 2000);
    cr_assert_eq(duration("1m"), 60000);
    cr_assert_eq(duration("007"), 7);
}

Test(cli_parsers, bad_durations)
{
    static const char *const bad[] = {"", "-5", "+5", "1.5s", "5h", "5 s", " 5", "5s ", "abc",
                                      "ms", "s", "0x10", "99999999999999999999",
                                      "9223372036854775807m", "2147483648"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(duration(bad[i]), -1, "\"%s\" was accepted", bad[i]);
    int64_t ms;
    cr_assert_eq(cli_parse_duration(NULL, 0, 10, &ms), -1);
    cr_assert_eq(cli_parse_duration("0", 1, 10, &ms), -1, "below the minimum");
    cr_assert_eq(cli_parse_duration("11", 1, 10, &ms), -1, "above the maximum");
    cr_assert_eq(cli_parse_duration("2147483647", 0, INT32_MAX, &ms), 0);
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
}

Test(cli_parsers, bad_nodes)
{
    static const char *const bad[] = {"",          ":7001",          "host:",      "host:0",
                                      "host:65536", "host:99999",    "host:abc",   "host:-1",
                                      "[::1]x",    "[::1]:",         "[]:7001",    "[::1",
                                      "unix:",     "host:7001x",     "host:+7001"};
    cli_node n;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(cli_parse_node(bad[i], &n), -1, "\"%s\" was accepted", bad[i]);
    char long_host[300];
    memset(long_host, 'h', sizeof(long_host) - 1);
    long_host[sizeof(long_host) - 1] = '\0';
    cr_assert_eq(cli_parse_node(long_host, &n), -1);
}
