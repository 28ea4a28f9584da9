/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the redlock tool's TIME and HOST:PORT parsers
 * (tool/durations.c), on the input as one command-line argument, and the
 * library's check of the node the tool then adds. (A URL goes to the
 * library as written: the node_url target.)
 *
 * Besides what the sanitizers catch: a parsed TIME is within the bounds it
 * was asked for and reads back the same written in milliseconds (decimals
 * and units rounded to whole milliseconds); a TIME out of range is well
 * formed; a parsed
 * node is a URL when it has "://", else has a host that fits (without '@'
 * unless a socket path) and a port in range, and reads back the same
 * written in its canonical form.
 */
#include "cli.h"
#include "fuzz.h"

#include <string.h>

static void check_duration(const char *text, int64_t min, int64_t max)
{
    int64_t ms = 0;
    int rc = cli_parse_duration(text, min, max, &ms);
    FUZZ_CHECK(rc == 0 || rc == CLI_TIME_INVALID || rc == CLI_TIME_RANGE ||
               rc == CLI_TIME_TOO_FINE);
    /* Too fine: above zero but below the millisecond, whatever the range. */
    if (rc == CLI_TIME_TOO_FINE) {
        int64_t any = -1;
        FUZZ_CHECK(cli_parse_duration(text, 0, INT64_MAX, &any) == CLI_TIME_TOO_FINE);
    }
    /* Out of range only for a TIME that is well formed: then it is out of
     * the widest range too, or in it. */
    if (rc == CLI_TIME_RANGE) {
        int64_t any = -1;
        int wide = cli_parse_duration(text, 0, INT64_MAX, &any);
        FUZZ_CHECK(wide == CLI_TIME_RANGE || (wide == 0 && (any < min || any > max)));
    }
    if (rc != 0)
        return;
    FUZZ_CHECK(ms >= min && ms <= max);
    FUZZ_CHECK((text[0] >= '0' && text[0] <= '9') || text[0] == '.');
    char canonical[32];
    snprintf(canonical, sizeof(canonical), "%lldms", (long long)ms);
    int64_t again = -1;
    FUZZ_CHECK(cli_parse_duration(canonical, min, max, &again) == 0 && again == ms);
}

/* The node written back in the form the tool documents: unix:PATH,
 * HOST:PORT, or [HOST]:PORT for a host that HOST:PORT would not give back
 * (one with a ':', beginning with '[', or the host "unix", as HOST:PORT then
 * reads as unix:PATH). False when there is none (such a host holding a
 * ']'). */
static bool canonical_node(const cli_node *node, char *buf, size_t len)
{
    int n;
    if (node->is_unix)
        n = snprintf(buf, len, "unix:%s", node->host);
    else if (strchr(node->host, ':') == NULL && node->host[0] != '[' &&
             strcmp(node->host, "unix") != 0)
        n = snprintf(buf, len, "%s:%d", node->host, node->port);
    else if (strchr(node->host, ']') == NULL)
        n = snprintf(buf, len, "[%s]:%d", node->host, node->port);
    else
        return false;
    return n > 0 && (size_t)n < len;
}

static void check_node(const char *text)
{
    cli_node node;
    int rc = cli_parse_node(text, &node);
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc != 0)
        return;
    FUZZ_CHECK(node.is_url == (strstr(text, "://") != NULL));
    if (node.is_url) {
        FUZZ_CHECK(node.host[0] == '\0' && node.port == 0 && !node.is_unix);
        return;
    }
    FUZZ_CHECK(node.is_unix || strchr(node.host, '@') == NULL);
    size_t host_len = strnlen(node.host, sizeof(node.host));
    FUZZ_CHECK(host_len > 0 && host_len < sizeof(node.host));
    if (node.is_unix)
        FUZZ_CHECK(node.port == 0);
    else
        FUZZ_CHECK(node.port >= 1 && node.port <= 65535);

    char canonical[sizeof(node.host) + 16];
    if (canonical_node(&node, canonical, sizeof(canonical))) {
        cli_node again;
        FUZZ_CHECK(cli_parse_node(canonical, &again) == 0);
        FUZZ_CHECK(strcmp(again.host, node.host) == 0);
        FUZZ_CHECK(again.port == node.port && again.is_unix == node.is_unix);
    }

    /* What the tool does next with --node (config_source.c). */
    redlock_config *cfg = NULL;
    if (redlock_config_new(&cfg) != REDLOCK_OK)
        return;
    size_t index = 0;
    rc = node.is_unix ? redlock_config_add_unix_node(cfg, node.host, &index)
                      : redlock_config_add_tcp_node(cfg, node.host, node.port, &index);
    FUZZ_CHECK(rc == REDLOCK_OK || rc == REDLOCK_EINVAL || rc == REDLOCK_ENOMEM);
    if (rc == REDLOCK_OK) {
        FUZZ_CHECK(index == 0 && redlock_config_node_count(cfg) == 1);
        FUZZ_CHECK(redlock_config_node_name(cfg, 0) != NULL);
    }
    redlock_config_free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An argument is a C string: it ends at the first NUL. */
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    check_duration(text, 0, INT32_MAX); /* --wait */
    check_duration(text, 1, INT32_MAX); /* --ttl */
    check_duration(text, 0, INT64_MAX);
    check_duration(text, 1000, 60000);
    check_node(text);

    free(text);
    return 0;
}
