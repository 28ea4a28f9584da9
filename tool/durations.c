/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing of the tool's TIME and HOST:PORT arguments. */
#include "cli.h"
#include "../src/util/duration.h"

#include <stdbool.h>
#include <string.h>

/* TIME: the parser the config's duration keys use (src/util/duration.h),
 * its failures told as the tool's. */
int cli_parse_duration(const char *text, int64_t min, int64_t max, int64_t *ms)
{
    switch (rl_duration_parse(text, min, max, ms)) {
    case 0:
        return 0;
    case RL_DURATION_RANGE:
        return CLI_TIME_RANGE;
    case RL_DURATION_TOO_FINE:
        return CLI_TIME_TOO_FINE;
    default:
        return CLI_TIME_INVALID;
    }
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
