/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters written as URLs (src/config/node_url.c): every form, percent-decoding,
 * the bounds, what is refused (with nothing added), the credentials given
 * besides the URL, and how a URL is shown without its secret. */
#include <criterion/criterion.h>

#include "config_internal.h"
#include "redlock/redlock.h"

#include <stdio.h>
#include <string.h>

static redlock_config *new_config(void)
{
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_new(&cfg), REDLOCK_OK);
    return cfg;
}

/* Adds url to a new config, expecting success; returns its only node. */
static const rl_node *added(redlock_config **cfg, const char *url)
{
    *cfg = new_config();
    size_t index = 99;
    int rc = redlock_config_add_node_url(*cfg, url, &index);
    cr_assert_eq(rc, REDLOCK_OK, "%s: %s", url, redlock_status_name(rc));
    cr_assert_eq(index, 0, "%s", url);
    cr_assert_eq(redlock_config_node_count(*cfg), 1, "%s", url);
    return &(*cfg)->nodes[0];
}

static bool same_text(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static const char *or_none(const char *s)
{
    return s != NULL ? s : "(none)";
}

/* What a node holds, with NULL for absent strings. */
static void expect_node(const rl_node *n, const char *name, const char *user,
                        const char *password, int db)
{
    cr_assert_str_eq(n->name, name);
    cr_assert(same_text(n->username, user), "%s: user %s, expected %s", name,
              or_none(n->username), or_none(user));
    cr_assert(same_text(n->password, password), "%s: password %s, expected %s", name,
              or_none(n->password), or_none(password));
    cr_assert_eq(n->db, db, "%s: db %d", name, n->db);
}

static void expect_url(const char *url, const char *name, const char *user,
                       const char *password, int db)
{
    redlock_config *cfg = NULL;
    expect_node(added(&cfg, url), name, user, password, db);
    redlock_config_free(cfg);
}

/* url is refused with status, and the config keeps the node it had. */
static void expect_refused(const char *url, int status)
{
    redlock_config *cfg = new_config();
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "10.9.9.9", 9, NULL), REDLOCK_OK);
    size_t index = 99;
    int rc = redlock_config_add_node_url(cfg, url, &index);
    cr_assert_eq(rc, status, "\"%s\": %s", url, redlock_status_name(rc));
    cr_assert_eq(index, 99, "\"%s\": index written on failure", url);
    cr_assert_eq(redlock_config_node_count(cfg), 1, "\"%s\": a node was added", url);
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "10.9.9.9:9");
    redlock_config_free(cfg);
}

/* ------------------------------------------------------------------------ */
/* What is accepted                                                          */

Test(node_url, redis_forms)
{
    expect_url("redis://127.0.0.1", "127.0.0.1:6379", NULL, NULL, 0);
    expect_url("redis://127.0.0.1:7001", "127.0.0.1:7001", NULL, NULL, 0);
    expect_url("redis://redis-a.example.org:7002/3", "redis-a.example.org:7002", NULL, NULL, 3);
    expect_url("redis://localhost/4", "localhost:6379", NULL, NULL, 4);
    expect_url("redis://127.0.0.1:7003/", "127.0.0.1:7003", NULL, NULL, 0);
    expect_url("redis://locker:s3cret@10.0.0.1:7004/2", "10.0.0.1:7004", "locker", "s3cret", 2);
    expect_url("redis://:s3cret@10.0.0.1", "10.0.0.1:6379", NULL, "s3cret", 0);
    expect_url("redis://@10.0.0.1", "10.0.0.1:6379", NULL, NULL, 0);
    expect_url("REDIS://Host_1.example:1", "Host_1.example:1", NULL, NULL, 0);
    expect_url("Redis://h:65535", "h:65535", NULL, NULL, 0);
}

Test(node_url, ipv6_with_and_without_port)
{
    expect_url("redis://[::1]", "[::1]:6379", NULL, NULL, 0);
    expect_url("redis://[::1]:7001", "[::1]:7001", NULL, NULL, 0);
    expect_url("redis://[::1]:7002/5", "[::1]:7002", NULL, NULL, 5);
    expect_url("redis://[::1]/6", "[::1]:6379", NULL, NULL, 6);
    expect_url("redis://u:p@[fe80::1:2]:7003", "[fe80::1:2]:7003", "u", "p", 0);
    expect_url("redis://[::ffff:127.0.0.1]:7004", "[::ffff:127.0.0.1]:7004", NULL, NULL, 0);
    redlock_config *cfg = NULL;
    cr_assert_str_eq(added(&cfg, "redis://[::1]:7005")->host, "::1", "kept without brackets");
    redlock_config_free(cfg);
}

Test(node_url, user_and_password_are_percent_decoded)
{
    expect_url("redis://us%65r:p%40ss%3Aw%2Fo%25rd@h:1", "h:1", "user", "p@ss:w/o%rd", 0);
    expect_url("redis://:%2f%2F%41%c3%a9@h:2", "h:2", NULL, "//A\xc3\xa9", 0);
    expect_url("redis://:with%20space%09tab@h:3", "h:3", NULL, "with space\ttab", 0);
    /* Written raw: '@' up to the last one, ':' after the first one, '/',
     * '?' and '#' all belong to the password. */
    expect_url("redis://:p@ss@h:4/1", "h:4", NULL, "p@ss", 1);
    expect_url("redis://u:a:b@h:5", "h:5", "u", "a:b", 0);
    expect_url("redis://:a/b?c#d@h:6", "h:6", NULL, "a/b?c#d", 0);
    /* An empty password is none: a user alone needs one from elsewhere. */
    expect_url("redis://:@h:7", "h:7", NULL, NULL, 0);
}

Test(node_url, unix_forms)
{
    expect_url("unix:///tmp/r.sock", "unix:/tmp/r.sock", NULL, NULL, 0);
    expect_url("unix:///tmp/r.sock?db=5", "unix:/tmp/r.sock", NULL, NULL, 5);
    expect_url("UNIX:///tmp/r.sock?db=0", "unix:/tmp/r.sock", NULL, NULL, 0);
    expect_url("unix://u:p%40w@/tmp/r.sock?db=1", "unix:/tmp/r.sock", "u", "p@w", 1);
    expect_url("unix://:pw@/tmp/r.sock", "unix:/tmp/r.sock", NULL, "pw", 0);
    expect_url("unix:///tmp/a%2Bb%3f.sock", "unix:/tmp/a+b?.sock", NULL, NULL, 0);
    /* Without credentials, an '@' is part of the path. */
    expect_url("unix:///run/user@1/r.sock", "unix:/run/user@1/r.sock", NULL, NULL, 0);
    expect_url("unix://u:p@/run/user@1/r.sock", "unix:/run/user@1/r.sock", "u", "p", 0);
}

Test(node_url, db_bounds)
{
    expect_url("redis://h/0", "h:6379", NULL, NULL, 0);
    expect_url("redis://h/1000000", "h:6379", NULL, NULL, 1000000);
    expect_url("redis://h/007", "h:6379", NULL, NULL, 7);
    expect_url("unix:///s?db=1000000", "unix:/s", NULL, NULL, 1000000);
    static const char *const bad[] = {
        "redis://h/1000001", "redis://h/-1",    "redis://h/+1",  "redis://h/1x",
        "redis://h/ 1",      "redis://h/1/",    "redis://h/1/2", "redis://h/x",
        "redis://h/99999999999999999999",       "redis://h//",   "unix:///s?db=1000001",
        "unix:///s?db=",     "unix:///s?db=-1", "unix:///s?db=x", "unix:///s?db=99999999999",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_refused(bad[i], REDLOCK_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* What is refused                                                           */

Test(node_url, bad_forms_add_nothing)
{
    static const char *const bad[] = {
        /* not a URL of ours */
        "", "127.0.0.1:6379", "unix:/tmp/r.sock", "redis:/h", "redis:h", "redis//h", "http://h",
        "tcp://h:1", "redis-x://h", "://h", "1redis://h",
        /* no host */
        "redis://", "redis://:7001", "redis:///0", "redis://u:p@", "redis://u:p@:1",
        "redis://[]", "redis://[]:1", "redis://@",
        /* hosts */
        "redis://ho st", "redis://h\tx", "redis://h%41", "redis://h,i", "redis://[::1",
        "redis://[::1]x", "redis://[::1]:", "redis://[zz::1]", "redis://[127.0.0.1]",
        "redis://::1", "redis://h:1:2", "redis://[::1]]:1",
        /* ports */
        "redis://h:0", "redis://h:65536", "redis://h:99999", "redis://h:123456", "redis://h:",
        "redis://h:junk", "redis://h:+1", "redis://h:-1", "redis://h:1x", "redis://h: 1",
        "redis://[::1]:0", "redis://[::1]:65536",
        /* queries and fragments */
        "redis://h?db=1", "redis://h:1?x", "redis://h/1?x", "redis://h#f", "redis://h/1#f",
        "unix:///s?foo=1", "unix:///s?db=1&x=2", "unix:///s#f", "unix:///s?",
        /* unix paths */
        "unix://", "unix://tmp/s", "unix://localhost/tmp/s", "unix://u:p@tmp/s",
        "unix:///tmp/with%20space", "unix:///tmp/%0a",
        /* escapes */
        "redis://:%@h", "redis://:%4@h", "redis://:%zz@h", "redis://:%g0@h", "redis://:%00@h",
        "redis://u%0@h", "redis://a%00b:p@h", "unix:///tmp/%00", "unix:///tmp/%",
        /* raw spaces and controls in the credentials */
        "redis://:p w@h", "redis://:p\tw@h", "redis://u\x7f:p@h", "redis://:p\nw@h",
        /* a user needs a password */
        "redis://alice@h", "redis://alice:@h", "unix://alice@/tmp/s",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_refused(bad[i], REDLOCK_EINVAL);
}

/* rediss:// is TLS: on for the node in a build with TLS, else refused
 * with ECONFIG and nothing added. */
Test(node_url, rediss_means_tls)
{
    static const char *const urls[] = {"rediss://h:6380", "REDISS://u:p@h",
                                       "rediss://[::1]:6380/2"};
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        if (!redlock_tls_available(NULL)) {
            expect_refused(urls[i], REDLOCK_ECONFIG);
            continue;
        }
        redlock_config *cfg = NULL;
        const rl_node *node = added(&cfg, urls[i]);
        redlock_tls_options tls;
        rl_node_tls(cfg, node, &tls);
        cr_assert_eq(tls.enabled, 1, "%s", urls[i]);
        cr_assert_null(tls.ca_file);
        redlock_config_free(cfg);
    }
    /* It parses like redis://: a bad one is as invalid. */
    expect_refused("rediss://h:0", REDLOCK_EINVAL);
    expect_refused("rediss://", REDLOCK_EINVAL);
}

Test(node_url, what_the_config_refuses_adds_nothing)
{
    redlock_config *cfg = new_config();
    cr_assert_eq(redlock_config_add_node_url(cfg, "redis://127.0.0.1:7001", NULL), REDLOCK_OK);
    /* The same address, written otherwise. */
    cr_assert_eq(redlock_config_add_node_url(cfg, "redis://:pw@127.0.0.1:7001/3", NULL),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "127.0.0.1", 7001, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_node_url(cfg, "unix:///tmp/r.sock", NULL), REDLOCK_OK);
    cr_assert_eq(redlock_config_add_unix_node(cfg, "/tmp/r.sock", NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_count(cfg), 2);

    /* A password too long for AUTH: refused after the address was checked,
     * and the node is not left behind. */
    char url[RL_AUTH_MAX + 64];
    int n = snprintf(url, sizeof(url), "redis://:");
    memset(url + n, 'p', RL_AUTH_MAX + 1);
    snprintf(url + n + RL_AUTH_MAX + 1, sizeof(url) - (size_t)n - RL_AUTH_MAX - 1, "@h:1");
    cr_assert_eq(redlock_config_add_node_url(cfg, url, NULL), REDLOCK_EINVAL);
    url[n + RL_AUTH_MAX] = '@';
    url[n + RL_AUTH_MAX + 1] = 'h';
    url[n + RL_AUTH_MAX + 2] = '\0';
    cr_assert_eq(redlock_config_add_node_url(cfg, url, NULL), REDLOCK_OK, "4096 bytes is fine");
    cr_assert_eq(redlock_config_node_count(cfg), 3);

    /* A host too long. */
    char long_host[400];
    n = snprintf(long_host, sizeof(long_host), "redis://");
    memset(long_host + n, 'h', RL_HOST_MAX + 1);
    long_host[n + RL_HOST_MAX + 1] = '\0';
    cr_assert_eq(redlock_config_add_node_url(cfg, long_host, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_count(cfg), 3);

    cr_assert_eq(redlock_config_add_node_url(NULL, "redis://h", NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_node_url(cfg, NULL, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_node_url_auth(cfg, NULL, NULL, "pw", NULL, NULL, 0), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_count(cfg), 3);
    redlock_config_free(cfg);
}

Test(node_url, the_sixty_fifth_node_is_refused)
{
    redlock_config *cfg = new_config();
    char url[64];
    for (int i = 0; i < REDLOCK_MAX_NODES; i++) {
        snprintf(url, sizeof(url), "redis://:pw@127.0.0.1:%d/1", 10000 + i);
        cr_assert_eq(redlock_config_add_node_url(cfg, url, NULL), REDLOCK_OK);
    }
    cr_assert_eq(redlock_config_add_node_url(cfg, "redis://:pw@127.0.0.1:20000", NULL),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_count(cfg), REDLOCK_MAX_NODES);
    redlock_config_free(cfg);
}

/* ------------------------------------------------------------------------ */
/* Credentials besides the URL                                               */

static void expect_auth(const char *url, const char *username, const char *password,
                        const char *want_user, const char *want_password)
{
    redlock_config *cfg = new_config();
    size_t index = 99;
    int rc = redlock_config_add_node_url_auth(cfg, url, username, password, &index, NULL, 0);
    cr_assert_eq(rc, REDLOCK_OK, "%s: %s", url, redlock_status_name(rc));
    cr_assert_eq(index, 0);
    const rl_node *n = &cfg->nodes[0];
    expect_node(n, n->name, want_user, want_password, n->db);
    redlock_config_free(cfg);
}

Test(node_url, the_url_credentials_win_over_the_given_ones)
{
    expect_auth("redis://h", NULL, NULL, NULL, NULL);
    expect_auth("redis://h", NULL, "given", NULL, "given");
    expect_auth("redis://h", "bob", "given", "bob", "given");
    expect_auth("redis://alice@h", NULL, "given", "alice", "given");
    expect_auth("redis://alice@h", "bob", "given", "alice", "given");
    expect_auth("redis://:own@h", NULL, "given", NULL, "own");
    expect_auth("redis://:own@h", "bob", "given", "bob", "own");
    expect_auth("redis://alice:own@h", "bob", "given", "alice", "own");
    expect_auth("unix://alice@/tmp/s", NULL, "given", "alice", "given");

    /* A user, from either side, with no password at all. */
    redlock_config *cfg = new_config();
    cr_assert_eq(redlock_config_add_node_url_auth(cfg, "redis://h", "bob", NULL, NULL, NULL, 0),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_node_url_auth(cfg, "redis://alice@h", NULL, NULL, NULL, NULL, 0),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_node_url_auth(cfg, "redis://h", NULL, "", NULL, NULL, 0),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_count(cfg), 0);
    redlock_config_free(cfg);
}

/* ------------------------------------------------------------------------ */
/* Showing a URL                                                             */

static void expect_redacted(const char *url, const char *shown)
{
    char buf[256];
    memset(buf, 'x', sizeof(buf));
    cr_assert_eq(redlock_url_redact(url, buf, sizeof(buf)), buf);
    cr_assert_str_eq(buf, shown, "from \"%s\"", url);
}

Test(node_url, redact_hides_the_password_of_any_text)
{
    expect_redacted("redis://user:secret@host:6379/2", "redis://user:***@host:6379/2");
    expect_redacted("redis://:secret@host", "redis://:***@host");
    expect_redacted("unix://u:secret@/tmp/s?db=1", "unix://u:***@/tmp/s?db=1");
    expect_redacted("redis://:p@ss@h", "redis://:***@h");
    expect_redacted("redis://:pa/ss@h/1", "redis://:***@h/1");
    expect_redacted("redis://u:a:b@h", "redis://u:***@h");
    /* A user without ':' is what redis-cli reads as a password. */
    expect_redacted("redis://alice@host", "redis://***@host");
    /* Nothing to hide. */
    expect_redacted("redis://host:1/2", "redis://host:1/2");
    expect_redacted("redis://:@host", "redis://:@host");
    expect_redacted("redis://@host", "redis://@host");
    expect_redacted("127.0.0.1:6379", "127.0.0.1:6379");
    expect_redacted("[::1]:6379", "[::1]:6379");
    expect_redacted("unix:///run/a@b.sock", "unix:///run/a@b.sock");
    expect_redacted("unix:/run/a@b.sock", "unix:/run/a@b.sock");
    expect_redacted("", "");
    /* Text that does not parse is hidden the same way. */
    expect_redacted("redis://u:secret@h:99999", "redis://u:***@h:99999");
    expect_redacted("rediss://u:secret@h", "rediss://u:***@h");
    expect_redacted("http://u:secret@h", "http://u:***@h");
    expect_redacted("REDIS://u:secret@h", "REDIS://u:***@h");
    expect_redacted("u:secret@h:1", "u:***@h:1");
    expect_redacted("secret@h:1", "***@h:1");
    expect_redacted("unix://u:secret@tmp/s", "unix://u:***@tmp/s");
    expect_redacted("redis:/u:secret@h", "redis:***@h");
}

Test(node_url, redact_cuts_to_fit)
{
    char buf[14];
    memset(buf, 'x', sizeof(buf));
    redlock_url_redact("redis://u:secret@host", buf, sizeof(buf));
    cr_assert_str_eq(buf, "redis://u:***");
    redlock_url_redact("redis://u:secret@host", buf, 1);
    cr_assert_str_eq(buf, "");
    buf[0] = 'x';
    cr_assert_eq(redlock_url_redact("redis://h", buf, 0), buf);
    cr_assert_eq(buf[0], 'x', "nothing written in no room");
    cr_assert_null(redlock_url_redact("redis://h", NULL, 10));
    redlock_url_redact(NULL, buf, sizeof(buf));
    cr_assert_str_eq(buf, "");
}

Test(node_url, mask_overwrites_the_password_in_place)
{
    char url[] = "redis://u:s3cr%40t@h:1/2";
    cr_assert(redlock_url_mask_password(url));
    cr_assert_str_eq(url, "redis://u:********@h:1/2");
    char alone[] = "redis://alice@h";
    cr_assert(redlock_url_mask_password(alone));
    cr_assert_str_eq(alone, "redis://*****@h");
    char none[] = "redis://h:1";
    cr_assert_not(redlock_url_mask_password(none));
    cr_assert_str_eq(none, "redis://h:1");
    char bad[] = "x://u:pw@h:0";
    cr_assert(redlock_url_mask_password(bad));
    cr_assert_str_eq(bad, "x://u:**@h:0");
    cr_assert_not(redlock_url_mask_password(NULL));
}

/* Why an add failed: one line, without the URL or its password. */
static void expect_why(redlock_config *cfg, const char *url, const char *password, int status,
                       const char *why)
{
    char err[REDLOCK_ERRBUF_SIZE];
    memset(err, 'x', sizeof(err));
    size_t count = redlock_config_node_count(cfg);
    int rc = redlock_config_add_node_url_auth(cfg, url, NULL, password, NULL, err, sizeof(err));
    cr_assert_eq(rc, status, "%s: %s", url, redlock_status_name(rc));
    cr_assert_str_eq(err, why, "%s", url);
    cr_assert_null(strstr(err, "Secret"), "%s", err);
    cr_assert_eq(redlock_config_node_count(cfg), count + (status == REDLOCK_OK));
}

Test(node_url, errbuf_says_why_without_the_url)
{
    redlock_config *cfg = new_config();
    expect_why(cfg, "redis://u:uSecret@h:7001", NULL, REDLOCK_OK, "");
    expect_why(cfg, "redis://u:uSecret@h:0", NULL, REDLOCK_EINVAL,
               "expected a port from 1 to 65535");
    expect_why(cfg, "ftp://u:uSecret@h", NULL, REDLOCK_EINVAL,
               "expected redis://, rediss:// or unix://");
    expect_why(cfg, "redis://u:uSecret@", NULL, REDLOCK_EINVAL,
               "expected a host: a name, an IPv4 address or [IPV6]");
    expect_why(cfg, "redis://u:uSecret@h/x", NULL, REDLOCK_EINVAL,
               "expected a db from 0 to 1000000");
    expect_why(cfg, "redis://u:uSecret%@h", NULL, REDLOCK_EINVAL,
               "a bad %-escape (expected % and two hex digits, not %00)");
    expect_why(cfg, "redis://u:u Secret@h", NULL, REDLOCK_EINVAL,
               "a space or control character in the user or password (write it %-escaped)");
    expect_why(cfg, "redis://u:uSecret@h#x", NULL, REDLOCK_EINVAL,
               "a query or fragment (only unix:// takes one: ?db=N)");
    expect_why(cfg, "unix://u:uSecret@s", NULL, REDLOCK_EINVAL,
               "expected an absolute socket path: unix:///PATH");
    expect_why(cfg, "unix:///with%20space", NULL, REDLOCK_EINVAL,
               "invalid socket path (no spaces or control characters, and not too long)");
    const char *why = NULL;
    if (!redlock_tls_available(&why)) {
        char message[REDLOCK_ERRBUF_SIZE];
        snprintf(message, sizeof(message), "rediss://: %s", why);
        cr_assert_not_null(strstr(why, "TLS is not available in this build"));
        expect_why(cfg, "rediss://u:uSecret@h", NULL, REDLOCK_ECONFIG, message);
    }
    expect_why(cfg, "redis://uSecret@h", NULL, REDLOCK_EINVAL, "a user needs a password");
    expect_why(cfg, "redis://uSecret@h", "pw", REDLOCK_OK, "");
    expect_why(cfg, "redis://:uSecret@H:7001/1", NULL, REDLOCK_EINVAL,
               "a second entry for the master h:7001");
    expect_why(cfg, "unix:///tmp/s", NULL, REDLOCK_OK, "");
    expect_why(cfg, "unix://:uSecret@/tmp/s", NULL, REDLOCK_EINVAL,
               "a second entry for the master unix:/tmp/s");

    char url[RL_AUTH_MAX + 64];
    int n = snprintf(url, sizeof(url), "redis://:uSecret");
    memset(url + n, 'p', RL_AUTH_MAX);
    snprintf(url + n + RL_AUTH_MAX, 16, "@h:2");
    expect_why(cfg, url, NULL, REDLOCK_EINVAL, "the password is too long (at most 4096 bytes)");
    n = snprintf(url, sizeof(url), "redis://uSecret");
    memset(url + n, 'u', RL_AUTH_MAX);
    snprintf(url + n + RL_AUTH_MAX, 16, ":pw@h:3");
    expect_why(cfg, url, NULL, REDLOCK_EINVAL, "the user is too long (at most 4096 bytes)");
    n = snprintf(url, sizeof(url), "redis://");
    memset(url + n, 'h', RL_HOST_MAX + 1);
    url[n + RL_HOST_MAX + 1] = '\0';
    expect_why(cfg, url, NULL, REDLOCK_EINVAL, "the host is too long (at most 255 bytes)");

    for (int port = 1; redlock_config_node_count(cfg) < REDLOCK_MAX_NODES; port++) {
        snprintf(url, sizeof(url), "redis://10.0.0.1:%d", port);
        cr_assert_eq(redlock_config_add_node_url(cfg, url, NULL), REDLOCK_OK);
    }
    expect_why(cfg, "redis://:uSecret@10.0.0.2", NULL, REDLOCK_EINVAL,
               "too many masters (at most 64)");

    char err[REDLOCK_ERRBUF_SIZE];
    cr_assert_eq(redlock_config_add_node_url_auth(NULL, "redis://h", NULL, NULL, NULL, err,
                                                  sizeof(err)),
                 REDLOCK_EINVAL);
    cr_assert_str_eq(err, "invalid argument: cfg is NULL");
    cr_assert_eq(redlock_config_add_node_url_auth(cfg, NULL, NULL, NULL, NULL, err, sizeof(err)),
                 REDLOCK_EINVAL);
    cr_assert_str_eq(err, "invalid argument: url is NULL");
    /* A short buffer gets a cut message; none at all is fine. */
    cr_assert_eq(redlock_config_add_node_url_auth(cfg, "redis://h:0", NULL, NULL, NULL, err, 9),
                 REDLOCK_EINVAL);
    cr_assert_str_eq(err, "expected");
    cr_assert_eq(redlock_config_add_node_url_auth(cfg, "redis://h:0", NULL, NULL, NULL, NULL, 99),
                 REDLOCK_EINVAL);
    redlock_config_free(cfg);
}
