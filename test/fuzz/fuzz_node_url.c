/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: masters written as URLs (src/config/node_url.c), on the input as
 * one string (up to its first NUL): the parser, the public call that adds
 * the master, and the redaction and masking of its secret.
 *
 * Besides what the sanitizers catch: a parsed URL has the parts its scheme
 * calls for, in range; what redlock_url_redact() and
 * redlock_url_mask_password() hide is exactly the password (or a user
 * written without ':'): the hidden text parses the same, with "***" or as
 * many '*' in its place; redlock_config_add_node_url_auth() adds one master
 * or nothing, agrees with the parser, refuses rediss:// with
 * REDLOCK_ECONFIG on a build without TLS, and says why in one line when it
 * fails.
 */
#include "config_internal.h"
#include "fuzz.h"
#include "node_url.h"

#include <string.h>

static bool same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The parts a parsed URL must have. */
static void check_parts(const rl_url *url)
{
    FUZZ_CHECK(url->scheme == RL_URL_REDIS || url->scheme == RL_URL_REDISS ||
               url->scheme == RL_URL_UNIX);
    if (url->scheme == RL_URL_UNIX) {
        FUZZ_CHECK(url->host == NULL && url->path != NULL && url->path[0] == '/');
    } else {
        FUZZ_CHECK(url->path == NULL && url->host != NULL && url->host[0] != '\0');
        FUZZ_CHECK(url->port >= 1 && url->port <= RL_PORT_MAX);
    }
    FUZZ_CHECK(url->db >= 0 && url->db <= RL_DB_MAX && (url->has_db || url->db == 0));
    FUZZ_CHECK(url->user == NULL || url->user[0] != '\0');
    FUZZ_CHECK(url->password == NULL || url->password[0] != '\0');
}

/* hidden parses as url does, but for the secret: shown as `secret`
 * (NULL: as many '*' as the original password had bytes written). */
static void check_hidden(const rl_url *url, const char *hidden, size_t span, const char *secret)
{
    rl_url again;
    FUZZ_CHECK(rl_url_parse(hidden, &again) == RL_URL_OK);
    FUZZ_CHECK(again.scheme == url->scheme && again.port == url->port && again.db == url->db &&
               again.has_db == url->has_db);
    FUZZ_CHECK(same_text(again.host, url->host) && same_text(again.path, url->path));
    char stars[4096 + 1];
    if (secret == NULL) {
        if (span >= sizeof(stars)) {
            rl_url_clear(&again);
            return;
        }
        memset(stars, '*', span);
        stars[span] = '\0';
        secret = stars;
    }
    if (url->password != NULL) {
        FUZZ_CHECK(same_text(again.user, url->user) && same_text(again.password, secret));
    } else {
        /* A user alone is hidden as a whole. */
        FUZZ_CHECK(url->user != NULL && same_text(again.user, secret) && again.password == NULL);
    }
    rl_url_clear(&again);
}

static void check_secret(const char *text, const rl_url *url)
{
    size_t start = 0;
    size_t len = 0;
    bool has = rl_url_secret(text, &start, &len);
    FUZZ_CHECK(has || url->password == NULL); /* "USER:@" hides nothing */
    if (!has)
        return;
    FUZZ_CHECK(len > 0 && start + len <= strlen(text));

    size_t size = strlen(text) + 4;
    char *redacted = malloc(size);
    char *masked = strdup(text);
    if (redacted == NULL || masked == NULL) {
        free(redacted);
        free(masked);
        return;
    }
    redlock_url_redact(text, redacted, size);
    FUZZ_CHECK(strncmp(redacted, text, start) == 0 &&
               strncmp(redacted + start, "***", 3) == 0 &&
               strcmp(redacted + start + 3, text + start + len) == 0);
    check_hidden(url, redacted, len, "***");
    FUZZ_CHECK(redlock_url_mask_password(masked));
    FUZZ_CHECK(strlen(masked) == strlen(text));
    check_hidden(url, masked, len, NULL);
    free(redacted);
    free(masked);
}

/* The public call: one master or nothing, as the parse says. */
static void check_add(const char *text, rl_url_status parsed, const rl_url *url,
                      const char *password)
{
    redlock_config *cfg = NULL;
    if (redlock_config_new(&cfg) != REDLOCK_OK)
        return;
    char err[REDLOCK_ERRBUF_SIZE];
    size_t index = 99;
    int rc = redlock_config_add_node_url_auth(cfg, text, NULL, password, &index, err, sizeof(err));
    FUZZ_CHECK(rc == REDLOCK_OK || rc == REDLOCK_EINVAL || rc == REDLOCK_ECONFIG ||
               rc == REDLOCK_ENOMEM);
    FUZZ_CHECK(strchr(err, '\n') == NULL && (rc == REDLOCK_OK) == (err[0] == '\0'));
    if (parsed != RL_URL_OK)
        FUZZ_CHECK(rc == REDLOCK_EINVAL || rc == REDLOCK_ENOMEM);
    else if (url->scheme == RL_URL_REDISS && !redlock_tls_available(NULL))
        FUZZ_CHECK(rc == REDLOCK_ECONFIG);
    FUZZ_CHECK(rc != REDLOCK_ECONFIG || url->scheme == RL_URL_REDISS);
    if (rc == REDLOCK_OK) {
        FUZZ_CHECK(index == 0 && redlock_config_node_count(cfg) == 1);
        const rl_node *n = &cfg->nodes[0];
        FUZZ_CHECK(same_text(n->host, url->host) && same_text(n->unix_path, url->path));
        FUZZ_CHECK(n->db == url->db);
        FUZZ_CHECK(same_text(n->password, url->password ? url->password : password));
        FUZZ_CHECK(same_text(n->username, url->user));
    } else {
        FUZZ_CHECK(index == 99 && redlock_config_node_count(cfg) == 0);
    }
    redlock_config_free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    rl_url url;
    rl_url_status status = rl_url_parse(text, &url);
    FUZZ_CHECK(status >= RL_URL_OK && status <= RL_URL_BAD_QUERY);
    FUZZ_CHECK(strlen(rl_url_problem(status)) > 0);
    if (status == RL_URL_OK) {
        check_parts(&url);
        check_secret(text, &url);
    }
    check_add(text, status, &url, NULL);
    check_add(text, status, &url, "fallback");
    rl_url_clear(&url);

    /* Any text: redacted with or without a secret, never overrun. */
    char small[16];
    redlock_url_redact(text, small, 1 + (size % sizeof(small)));
    FUZZ_CHECK(strlen(small) <= size % sizeof(small));

    free(text);
    return 0;
}
