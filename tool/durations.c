/* Parsing of the tool's TIME and HOST:PORT arguments. */
#include "cli.h"

#include <string.h>

int cli_parse_duration(const char *text, int64_t min, int64_t max, int64_t *ms)
{
    if (text == NULL || *text < '0' || *text > '9')
        return -1;
    int64_t value = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (value > (INT64_MAX - (*p - '0')) / 10)
            return -1;
        value = value * 10 + (*p - '0');
    }
    int64_t unit = 1;
    if (strcmp(p, "s") == 0)
        unit = 1000;
    else if (strcmp(p, "m") == 0)
        unit = 60000;
    else if (*p != '\0' && strcmp(p, "ms") != 0)
        return -1;
    if (value > INT64_MAX / unit)
        return -1;
    value *= unit;
    if (value < min || value > max)
        return -1;
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
    node->port = 6379;
    if (strncmp(text, "unix:", 5) == 0) {
        node->is_unix = true;
        node->port = 0;
        return copy_host(node, text + 5, strlen(text + 5));
    }
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
