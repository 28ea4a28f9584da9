/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Masters written as URLs: the parser (node_url.h), the public calls that
 * add such a master to a config, and those that show a URL without its
 * secret.
 *
 * One rule says where the credentials end, for the parser and for the
 * redaction alike, so that what is hidden is exactly what is read as a
 * password: after "SCHEME://", the userinfo runs to the last '@' (host,
 * port and db never hold one, so a password may hold a raw '@', '/', '?' or
 * '#'); for unix:// to the last "@/", and there is none when the path
 * follows at once. USER runs to the first ':' of it, PASSWORD is the rest.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strndup */
#endif

#include "config/node_url.h"
#include "config/config_internal.h"
#include "redlock/redlock.h"
#include "util/message_buffer.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

_Static_assert(RL_PORT_MAX == 65535 && RL_DB_MAX == 1000000 && RL_AUTH_MAX == 4096 &&
                   RL_HOST_MAX == 255,
               "the messages below quote these limits");

/* ------------------------------------------------------------------------ */
/* Characters                                                                */

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A host name or an IPv4 address: letters, digits, '.', '-', '_', '~'. */
static bool is_host_name(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!is_alpha(s[i]) && !is_digit(s[i]) && strchr(".-_~", s[i]) == NULL)
            return false;
    return true;
}

/* What may stand between [ and ]: hex digits, ':' (at least one) and '.'. */
static bool is_ipv6(const char *s, size_t len)
{
    bool colon = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ':')
            colon = true;
        else if (hex_value(s[i]) < 0 && s[i] != '.')
            return false;
    }
    return colon;
}

/* Decimal digits only, within [min, max]. */
static bool parse_number(const char *s, size_t len, int min, int max, int *out)
{
    if (len == 0 || len > 10)
        return false;
    long long value = 0;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return false;
        value = value * 10 + (s[i] - '0');
    }
    if (value < min || value > max)
        return false;
    *out = (int)value;
    return true;
}

/* ------------------------------------------------------------------------ */
/* The shape of a URL                                                        */

/* The length of "SCHEME://" at the start of text (RFC 3986's scheme
 * syntax), with SCHEME's in *name_len; 0 when there is none. */
static size_t scheme_prefix(const char *text, size_t *name_len)
{
    if (!is_alpha(text[0]))
        return 0;
    size_t i = 1;
    while (is_alpha(text[i]) || is_digit(text[i]) || text[i] == '+' || text[i] == '-' ||
           text[i] == '.')
        i++;
    if (strncmp(text + i, "://", 3) != 0)
        return 0;
    *name_len = i;
    return i + 3;
}

static bool scheme_is(const char *text, size_t len, const char *name)
{
    return len == strlen(name) && strncasecmp(text, name, len) == 0;
}

/* Where the userinfo of text is: text[*start, *at), *at being its '@'.
 * Text without "SCHEME://" is looked at whole (HOST:PORT written with
 * credentials before it), but for the tool's "unix:PATH". */
static bool find_userinfo(const char *text, size_t *start, size_t *at)
{
    size_t name_len = 0;
    size_t from = scheme_prefix(text, &name_len);
    bool is_unix = from > 0 && scheme_is(text, name_len, "unix");
    const char *rest = text + from;
    if ((is_unix && rest[0] == '/') || (from == 0 && strncasecmp(text, "unix:", 5) == 0))
        return false;
    const char *found = NULL;
    if (is_unix)
        for (const char *p = strstr(rest, "@/"); p != NULL; p = strstr(p + 1, "@/"))
            found = p;
    if (found == NULL)
        found = strrchr(rest, '@');
    if (found == NULL)
        return false;
    *start = from;
    *at = (size_t)(found - text);
    return true;
}

bool rl_url_secret(const char *text, size_t *start, size_t *len)
{
    size_t from = 0;
    size_t at = 0;
    if (text == NULL || !find_userinfo(text, &from, &at))
        return false;
    const char *colon = memchr(text + from, ':', at - from);
    size_t begin = colon != NULL ? (size_t)(colon - text) + 1 : from;
    if (begin == at)
        return false;
    *start = begin;
    *len = at - begin;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */

/* s[0, len) percent-decoded, into a new string (NULL when empty). */
static rl_url_status decode(const char *s, size_t len, char **out)
{
    *out = NULL;
    if (len == 0)
        return RL_URL_OK;
    if (len == SIZE_MAX) /* never: s is part of a C string */
        return RL_URL_NOMEM;
    char *buf = malloc(len + 1);
    if (buf == NULL)
        return RL_URL_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') {
            buf[n++] = s[i];
            continue;
        }
        int high = i + 1 < len ? hex_value(s[i + 1]) : -1;
        int low = i + 2 < len ? hex_value(s[i + 2]) : -1;
        if (high < 0 || low < 0 || high + low == 0) { /* %00 would cut the string */
            buf[n] = '\0';
            rl_free_secret(buf);
            return RL_URL_BAD_ESCAPE;
        }
        buf[n++] = (char)(high * 16 + low);
        i += 2;
    }
    buf[n] = '\0';
    *out = buf;
    return RL_URL_OK;
}

/* USER[:PASSWORD], s[0, len). */
static rl_url_status parse_userinfo(const char *s, size_t len, rl_url *url)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == 0x7f)
            return RL_URL_BAD_USERINFO;
    }
    const char *colon = memchr(s, ':', len);
    size_t user_len = colon != NULL ? (size_t)(colon - s) : len;
    rl_url_status status = decode(s, user_len, &url->user);
    if (status == RL_URL_OK && colon != NULL)
        status = decode(colon + 1, len - user_len - 1, &url->password);
    return status;
}

/* HOST[:PORT] in s[0, len), HOST being a name, an IPv4 address or [IPV6]. */
static rl_url_status parse_authority(const char *s, size_t len, rl_url *url)
{
    const char *end = s + len;
    const char *host = s;
    size_t host_len = len;
    const char *port = NULL;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (close == NULL || !is_ipv6(s + 1, (size_t)(close - s - 1)) ||
            (close + 1 < end && close[1] != ':'))
            return RL_URL_BAD_HOST;
        host = s + 1;
        host_len = (size_t)(close - host);
        port = close + 1 < end ? close + 2 : NULL;
    } else {
        const char *colon = memchr(s, ':', len);
        if (colon != NULL) {
            host_len = (size_t)(colon - s);
            port = colon + 1;
        }
        if (!is_host_name(host, host_len))
            return RL_URL_BAD_HOST;
    }
    if (port != NULL && !parse_number(port, (size_t)(end - port), 1, RL_PORT_MAX, &url->port))
        return RL_URL_BAD_PORT;
    url->host = strndup(host, host_len);
    return url->host != NULL ? RL_URL_OK : RL_URL_NOMEM;
}

/* [/[DB]], what follows the authority. */
static rl_url_status parse_db_path(const char *tail, rl_url *url)
{
    if (*tail == '\0')
        return RL_URL_OK;
    const char *db = tail + 1; /* after the '/' */
    size_t db_len = strcspn(db, "?#");
    if (db[db_len] != '\0')
        return RL_URL_BAD_QUERY;
    if (db_len > 0 && !parse_number(db, db_len, 0, RL_DB_MAX, &url->db))
        return RL_URL_BAD_DB;
    url->has_db = db_len > 0;
    return RL_URL_OK;
}

/* HOST[:PORT][/DB] */
static rl_url_status parse_tcp(const char *s, rl_url *url)
{
    url->port = RL_URL_DEFAULT_PORT;
    size_t len = strcspn(s, "/?#");
    if (s[len] == '?' || s[len] == '#')
        return RL_URL_BAD_QUERY;
    rl_url_status status = parse_authority(s, len, url);
    return status == RL_URL_OK ? parse_db_path(s + len, url) : status;
}

/* /PATH[?db=N] */
static rl_url_status parse_unix(const char *s, rl_url *url)
{
    if (s[0] != '/')
        return RL_URL_BAD_PATH;
    size_t len = strcspn(s, "?#");
    const char *tail = s + len;
    if (*tail == '#')
        return RL_URL_BAD_QUERY;
    if (*tail == '?') {
        const char *value = tail + 1 + 3;
        if (strncmp(tail + 1, "db=", 3) != 0 || strpbrk(value, "&;?#=") != NULL)
            return RL_URL_BAD_QUERY;
        if (!parse_number(value, strlen(value), 0, RL_DB_MAX, &url->db))
            return RL_URL_BAD_DB;
        url->has_db = true;
    }
    return decode(s, len, &url->path);
}

rl_url_status rl_url_parse(const char *text, rl_url *url)
{
    memset(url, 0, sizeof(*url));
    size_t name_len = 0;
    size_t from = scheme_prefix(text, &name_len);
    if (from > 0 && scheme_is(text, name_len, "redis"))
        url->scheme = RL_URL_REDIS;
    else if (from > 0 && scheme_is(text, name_len, "rediss"))
        url->scheme = RL_URL_REDISS;
    else if (from > 0 && scheme_is(text, name_len, "unix"))
        url->scheme = RL_URL_UNIX;
    else
        return RL_URL_BAD_SCHEME;

    const char *rest = text + from;
    size_t start = 0;
    size_t at = 0;
    rl_url_status status = RL_URL_OK;
    if (find_userinfo(text, &start, &at)) {
        status = parse_userinfo(text + start, at - start, url);
        rest = text + at + 1;
    }
    if (status == RL_URL_OK)
        status = url->scheme == RL_URL_UNIX ? parse_unix(rest, url) : parse_tcp(rest, url);
    if (status != RL_URL_OK)
        rl_url_clear(url);
    return status;
}

void rl_url_clear(rl_url *url)
{
    rl_free_secret(url->host);
    rl_free_secret(url->path);
    rl_free_secret(url->user);
    rl_free_secret(url->password);
    memset(url, 0, sizeof(*url));
}

const char *rl_url_problem(rl_url_status status)
{
    switch (status) {
    case RL_URL_OK:
        return "no problem";
    case RL_URL_NOMEM:
        return "out of memory";
    case RL_URL_BAD_SCHEME:
        return "expected redis://, rediss:// or unix://";
    case RL_URL_BAD_ESCAPE:
        return "a bad %-escape (expected % and two hex digits, not %00)";
    case RL_URL_BAD_USERINFO:
        return "a space or control character in the user or password (write it %-escaped)";
    case RL_URL_BAD_HOST:
        return "expected a host: a name, an IPv4 address or [IPV6]";
    case RL_URL_BAD_PORT:
        return "expected a port from 1 to 65535";
    case RL_URL_BAD_DB:
        return "expected a db from 0 to 1000000";
    case RL_URL_BAD_PATH:
        return "expected an absolute socket path: unix:///PATH";
    case RL_URL_BAD_QUERY:
        return "a query or fragment (only unix:// takes one: ?db=N)";
    }
    return "invalid URL";
}

/* ------------------------------------------------------------------------ */
/* Adding a master                                                           */

/* The reason into errbuf; returns status, for `return fail(...)`. */
RL_PRINTF(4, 5)
static int fail(char *errbuf, size_t errlen, int status, const char *fmt, ...)
{
    rl_msg_buf msg;
    rl_msg_init(&msg, errbuf, errlen);
    va_list ap;
    va_start(ap, fmt);
    rl_msg_vprintf(&msg, fmt, ap);
    va_end(ap);
    return status;
}

/* What the setters would refuse, said first so that nothing is added. */
static int check_node(const redlock_config *cfg, const rl_url *url, const char *user,
                      const char *password, char *errbuf, size_t errlen)
{
    if (url->scheme == RL_URL_REDISS && rl_tls_missing() != NULL)
        return fail(errbuf, errlen, REDLOCK_ECONFIG, "rediss://: %s", rl_tls_missing());
    if (user != NULL && password == NULL)
        return fail(errbuf, errlen, REDLOCK_EINVAL, "a user needs a password");
    if (user != NULL && (user[0] == '\0' || strlen(user) > RL_AUTH_MAX))
        return fail(errbuf, errlen, REDLOCK_EINVAL, "the user is %s",
                    user[0] == '\0' ? "empty" : "too long (at most 4096 bytes)");
    if (password != NULL && (password[0] == '\0' || strlen(password) > RL_AUTH_MAX))
        return fail(errbuf, errlen, REDLOCK_EINVAL, "the password is %s",
                    password[0] == '\0' ? "empty" : "too long (at most 4096 bytes)");
    if (url->host != NULL && strlen(url->host) > RL_HOST_MAX)
        return fail(errbuf, errlen, REDLOCK_EINVAL, "the host is too long (at most 255 bytes)");
    if (cfg->node_count >= REDLOCK_MAX_NODES)
        return fail(errbuf, errlen, REDLOCK_EINVAL, "too many masters (at most %d)",
                    REDLOCK_MAX_NODES);
    long first = rl_config_find_node(cfg, url->host, url->port, url->path);
    if (first >= 0)
        return fail(errbuf, errlen, REDLOCK_EINVAL, "a second entry for the master %s",
                    cfg->nodes[first].name);
    return REDLOCK_OK;
}

/* Adds the master url names, with user and password from it, else the
 * given ones. Nothing is added on failure. */
static int add_parsed(redlock_config *cfg, const rl_url *url, const char *username,
                      const char *password, size_t *index, char *errbuf, size_t errlen)
{
    const char *user = url->user != NULL ? url->user : username;
    const char *pass = url->password != NULL ? url->password : password;
    int rc = check_node(cfg, url, user, pass, errbuf, errlen);
    if (rc != REDLOCK_OK)
        return rc;
    size_t added = 0;
    rc = url->path != NULL ? redlock_config_add_unix_node(cfg, url->path, &added)
                           : redlock_config_add_tcp_node(cfg, url->host, url->port, &added);
    if (rc != REDLOCK_OK)
        return rc == REDLOCK_ENOMEM
                   ? fail(errbuf, errlen, rc, "out of memory")
                   : fail(errbuf, errlen, rc, "invalid socket path (no spaces or control "
                                              "characters, and not too long)");
    if (pass != NULL)
        rc = redlock_config_node_set_auth(cfg, added, user, pass);
    if (rc == REDLOCK_OK && url->has_db)
        rc = redlock_config_node_set_db(cfg, added, url->db);
    if (rc == REDLOCK_OK && url->scheme == RL_URL_REDISS) {
        const redlock_tls_options tls = {.enabled = 1};
        rc = redlock_config_node_set_tls(cfg, added, &tls);
    }
    if (rc != REDLOCK_OK) { /* checked above: only out of memory */
        rl_config_drop_last_node(cfg);
        return fail(errbuf, errlen, rc, "%s", rc == REDLOCK_ENOMEM ? "out of memory"
                                                                   : redlock_strerror(rc));
    }
    if (index != NULL)
        *index = added;
    return REDLOCK_OK;
}

int redlock_config_add_node_url_auth(redlock_config *cfg, const char *url, const char *username,
                                     const char *password, size_t *index, char *errbuf,
                                     size_t errlen)
{
    if (errbuf != NULL && errlen > 0)
        errbuf[0] = '\0';
    if (cfg == NULL || url == NULL)
        return fail(errbuf, errlen, REDLOCK_EINVAL, "invalid argument: %s is NULL",
                    cfg == NULL ? "cfg" : "url");
    rl_url parsed;
    rl_url_status status = rl_url_parse(url, &parsed);
    if (status != RL_URL_OK)
        return fail(errbuf, errlen, status == RL_URL_NOMEM ? REDLOCK_ENOMEM : REDLOCK_EINVAL,
                    "%s", rl_url_problem(status));
    int rc = add_parsed(cfg, &parsed, username, password, index, errbuf, errlen);
    rl_url_clear(&parsed);
    return rc;
}

int redlock_config_add_node_url(redlock_config *cfg, const char *url, size_t *index)
{
    return redlock_config_add_node_url_auth(cfg, url, NULL, NULL, index, NULL, 0);
}

/* ------------------------------------------------------------------------ */
/* Showing a URL                                                             */

/* Appends s[0, n) to buf[0, len), keeping room for the NUL. */
static size_t append(char *buf, size_t len, size_t used, const char *s, size_t n)
{
    size_t room = len - 1 - used;
    if (n > room)
        n = room;
    memcpy(buf + used, s, n);
    return used + n;
}

const char *redlock_url_redact(const char *url, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return buf;
    size_t used = 0;
    if (url != NULL) {
        size_t start = 0;
        size_t n = 0;
        if (rl_url_secret(url, &start, &n)) {
            used = append(buf, len, used, url, start);
            used = append(buf, len, used, "***", 3);
            url += start + n;
        }
        used = append(buf, len, used, url, strlen(url));
    }
    buf[used] = '\0';
    return buf;
}

bool redlock_url_mask_password(char *url)
{
    size_t start = 0;
    size_t n = 0;
    if (!rl_url_secret(url, &start, &n))
        return false;
    memset(url + start, '*', n);
    return true;
}
