/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing of the tool's TIME and HOST:PORT arguments. */
#include "cli.h"

#include <stdbool.h>
#include <string.h>

/* Milliseconds in a unit: "" (ms), "ms", "s", "m", "h"; 0 for anything else. */
static int64_t unit_ms(const char *unit)
{
    static const struct {
        const char *name;
        int64_t ms;
    } units[] = {{"", 1}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(unit, units[i].name) == 0)
            return units[i].ms;
    return 0;
}

/*
 * [DIGITS][.DIGITS][UNIT], with a digit somewhere. The integer part is
 * scaled by the unit exactly; the fraction's digits are multiplied by it
 * as a decimal, right to left, so that no digit is lost however many are
 * written: what carries out is whole milliseconds, and the first digit
 * after the point decides the rounding (5 and up: one more).
 */
int cli_parse_duration(const char *text, int64_t min, int64_t max, int64_t *ms)
{
    if (text == NULL)
        return CLI_TIME_INVALID;
    const char *p = text;
    bool too_big = false;
    int64_t whole = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > (INT64_MAX - (*p - '0')) / 10)
            too_big = true;
        else
            whole = whole * 10 + (*p - '0');
    }
    size_t int_digits = (size_t)(p - text);
    const char *fraction = NULL;
    size_t frac_digits = 0;
    if (*p == '.') {
        fraction = ++p;
        for (; *p >= '0' && *p <= '9'; p++)
            frac_digits++;
        if (frac_digits == 0)
            return CLI_TIME_INVALID; /* "1." */
    }
    int64_t unit = unit_ms(p);
    if (unit == 0 || int_digits + frac_digits == 0)
        return CLI_TIME_INVALID;
    if (too_big || whole > INT64_MAX / unit)
        return CLI_TIME_RANGE;
    int64_t carry = 0;
    int first = 0; /* the product's first digit after the point */
    for (size_t i = frac_digits; i-- > 0;) {
        carry += (fraction[i] - '0') * unit; /* < 10 * unit + unit */
        first = (int)(carry % 10);
        carry /= 10;
    }
    int64_t value = whole * unit;
    int64_t extra = carry + (first >= 5 ? 1 : 0);
    if (value > INT64_MAX - extra)
        return CLI_TIME_RANGE;
    value += extra;
    if (value < min || value > max)
        return CLI_TIME_RANGE;
    *ms = value;
    return 0;
}

/* Digits only, 1..65535. */
static int parse_port(const char *text, int *port)
{
    if (*text == '\0' || strlen(text) > 5)
        return -1;
    int value = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        value = value * 10 + (*p - '0');
    }
    if (value < 1 || value > 65535)
        return -1;
    *port = value;
    return 0;
}

static int copy_host(cli_node *node, const char *host, size_t len)
{
    if (len == 0 || len >= sizeof(node->host))
        return -1;
    memcpy(node->host, host, len);
    node->host[len] = '\0';
    return 0;
}

int cli_parse_node(const char *text, cli_node *node)
{
    memset(node, 0, sizeof(*node));
    if (strstr(text, "://") != NULL) {
        node->is_url = true; /* redis://..., unix:///...: the library's to read */
        return 0;
    }
    node->port = 6379;
    if (strncmp(text, "unix:", 5) == 0) {
        node->is_unix = true;
        node->port = 0;
        return copy_host(node, text + 5, strlen(text + 5));
    }
    /* Credentials before a host: a URL without its scheme, not a host name. */
    if (strchr(text, '@') != NULL)
        return -1;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close == NULL || copy_host(node, text + 1, (size_t)(close - text - 1)) != 0)
            return -1;
        if (close[1] == '\0')
            return 0;
        return close[1] == ':' ? parse_port(close + 2, &node->port) : -1;
    }
    const char *colon = strrchr(text, ':');
    if (colon == NULL)
        return copy_host(node, text, strlen(text));
    if (strchr(text, ':') != colon)
        return copy_host(node, text, strlen(text)); /* a bare IPv6 address */
    if (copy_host(node, text, (size_t)(colon - text)) != 0)
        return -1;
    return parse_port(colon + 1, &node->port);
}
