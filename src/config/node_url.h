/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Masters written as URLs (docs/config.md, "Masters as URLs"):
 *
 *   redis://[USER[:PASSWORD]@]HOST[:PORT][/DB]   HOST: name, IPv4 or [IPV6]
 *   rediss://...                                 the same, for TLS
 *   unix://[USER[:PASSWORD]@]/PATH[?db=N]
 *
 * Parsing into parts (used by the public calls of node_url.c and by the
 * YAML loader), and where a URL's secret is written, so that any text can
 * be shown or kept without it.
 */
#ifndef REDLOCK_NODE_URL_H
#define REDLOCK_NODE_URL_H

#include "redlock/redlock.h"

#include <stdbool.h>
#include <stddef.h>

#define RL_URL_DEFAULT_PORT 6379

/* What a URL names. rediss:// parses like redis:// and means TLS; adding
 * such a node is refused (REDLOCK_ECONFIG) by a build without TLS. */
typedef enum rl_url_scheme { RL_URL_REDIS, RL_URL_REDISS, RL_URL_UNIX } rl_url_scheme;

/* Why a URL does not parse; rl_url_problem() says it in words. */
typedef enum rl_url_status {
    RL_URL_OK = 0,
    RL_URL_NOMEM,
    RL_URL_BAD_SCHEME,   /* not redis://, rediss:// or unix:// */
    RL_URL_BAD_ESCAPE,   /* % without two hex digits, or %00 */
    RL_URL_BAD_USERINFO, /* a raw space or control byte in USER:PASSWORD */
    RL_URL_BAD_HOST,
    RL_URL_BAD_PORT,
    RL_URL_BAD_DB,
    RL_URL_BAD_PATH,     /* unix:// without an absolute path */
    RL_URL_BAD_QUERY     /* ?... or #..., but unix:// with ?db=N */
} rl_url_status;

/* A parsed URL. Strings are decoded, NUL-terminated and owned. */
typedef struct rl_url {
    rl_url_scheme scheme;
    char *host;     /* redis, rediss: without brackets; unix: NULL */
    int port;       /* redis, rediss: RL_URL_DEFAULT_PORT unless given */
    char *path;     /* unix: the socket path; otherwise NULL */
    char *user;     /* NULL when none */
    char *password; /* NULL when none (an empty one is none) */
    int db;         /* 0 unless given */
    bool has_db;    /* given: /DB or ?db=N */
} rl_url;

/* Parses text into *url. On failure *url holds nothing to clear. */
rl_url_status rl_url_parse(const char *text, rl_url *url);
/* Wipes and frees what url holds. */
void rl_url_clear(rl_url *url);
/* A sentence for a status, e.g. "expected a port from 1 to 65535"; it
 * never quotes the URL. */
const char *rl_url_problem(rl_url_status status);

/* The secret of any text, as redlock_url_redact() hides it: the bytes
 * [*start, *start + *len) of text (the PASSWORD as written, or a USER
 * written without ':'). False when there is none. */
bool rl_url_secret(const char *text, size_t *start, size_t *len);

#endif
