/* SPDX-License-Identifier: BSD-3-Clause */
/* Holder metadata: written after a value's random part by an acquire
 * given a label, read back by redlock_value_holder(). */
#include "lock/holder.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool printable(char c)
{
    return c >= 0x20 && c <= 0x7e;
}

/* A host name's characters; anything else (and ';', the separator) is
 * shown as '_'. */
static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '-' || c == '_';
}

bool rl_holder_label_valid(const char *label)
{
    size_t len = strnlen(label, REDLOCK_MAX_LABEL_LEN + 1);
    if (len == 0 || len > REDLOCK_MAX_LABEL_LEN)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!printable(label[i]))
            return false;
    return true;
}

static int64_t unix_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || ts.tv_sec < 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A label's characters written as they are; the others as %XX. */
static bool label_plain(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("-._~/:,+@", c) != NULL;
}

static size_t escape_label(char *out, const char *label)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const char *p = label; *p != '\0'; p++) {
        if (label_plain(*p)) {
            out[n++] = *p;
        } else {
            out[n++] = '%';
            out[n++] = hex[(unsigned char)*p >> 4];
            out[n++] = hex[(unsigned char)*p & 15];
        }
    }
    out[n] = '\0';
    return n;
}

size_t rl_holder_suffix(char *out, const char *label)
{
    char host[REDLOCK_MAX_HOST_LEN + 2] = {0};
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0')
        strcpy(host, "unknown");
    host[REDLOCK_MAX_HOST_LEN] = '\0'; /* cut: the value's length stays bounded */
    for (char *p = host; *p != '\0'; p++)
        if (!host_char(*p))
            *p = '_';
    int n = snprintf(out, RL_HOLDER_SUFFIX_MAX + 1, ";h=%s;p=%lld;t=%lld;l=", host,
                     (long long)getpid(), (long long)unix_ms());
    if (n < 0)
        return 0;
    return (size_t)n + escape_label(out + n, label);
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* The digits at *p (up to the next ';' or end), as a number; advances *p.
 * false when there are none, or too many. */
static bool read_number(const char **p, const char *end, int64_t *out)
{
    int64_t n = 0;
    const char *s = *p;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        if (s - *p >= 18)
            return false;
        n = n * 10 + (*s - '0');
    }
    if (s == *p)
        return false;
    *p = s;
    *out = n;
    return true;
}

/* The tag at *p ("h=", ...), preceded by ';'; advances *p past it. */
static bool read_tag(const char **p, const char *end, char tag)
{
    if (end - *p < 3 || (*p)[0] != ';' || (*p)[1] != tag || (*p)[2] != '=')
        return false;
    *p += 3;
    return true;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The label from p to end, %XX decoded, into out (REDLOCK_MAX_LABEL_LEN
 * + 1 bytes): false unless it is one an acquire writes. */
static bool unescape_label(const char *p, const char *end, char *out)
{
    size_t n = 0;
    while (p < end) {
        char c = *p++;
        if (c == '%') {
            int hi = end - p >= 2 ? hex_digit(p[0]) : -1;
            int lo = end - p >= 2 ? hex_digit(p[1]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            c = (char)(hi * 16 + lo);
            p += 2;
        } else if (!label_plain(c)) {
            return false;
        }
        if (n == REDLOCK_MAX_LABEL_LEN || !printable(c))
            return false;
        out[n++] = c;
    }
    out[n] = '\0';
    return n > 0;
}

static bool parse_holder(const char *value, size_t value_len, redlock_holder *out)
{
    const char *end = value + value_len;
    if (value_len <= REDLOCK_VALUE_LEN)
        return false;
    for (size_t i = 0; i < REDLOCK_VALUE_LEN; i++)
        if (!is_hex(value[i]))
            return false;
    const char *p = value + REDLOCK_VALUE_LEN;
    if (!read_tag(&p, end, 'h'))
        return false;
    size_t host_len = 0;
    while (p + host_len < end && host_char(p[host_len]))
        host_len++;
    if (host_len == 0 || host_len > REDLOCK_MAX_HOST_LEN)
        return false;
    memcpy(out->host, p, host_len);
    p += host_len;
    if (!read_tag(&p, end, 'p') || !read_number(&p, end, &out->pid) || !read_tag(&p, end, 't') ||
        !read_number(&p, end, &out->since_ms) || !read_tag(&p, end, 'l'))
        return false;
    return unescape_label(p, end, out->label);
}

int redlock_value_holder(const char *value, size_t value_len, redlock_holder *out)
{
    if (out == NULL)
        return REDLOCK_EINVAL;
    memset(out, 0, sizeof(*out));
    if (value == NULL || !parse_holder(value, value_len, out)) {
        memset(out, 0, sizeof(*out));
        return REDLOCK_EINVAL;
    }
    return REDLOCK_OK;
}
