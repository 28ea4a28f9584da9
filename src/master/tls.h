/* SPDX-License-Identifier: BSD-3-Clause */
/* TLS to the masters with OpenSSL through hiredis_ssl (docs/tls.md): one
 * verifying context per TLS node, made when the client is created, and the
 * handshake started on each new connection. On a build without TLS every
 * config asking for it is refused earlier (config_tls.c), so the client
 * never has a context and only the no-op paths below run. */
#ifndef REDLOCK_TLS_H
#define REDLOCK_TLS_H

#include "config/config_internal.h"
#include "util/log.h"

#include <stdbool.h>
#include <stddef.h>

struct redisAsyncContext;
typedef struct rl_tls_ctx rl_tls_ctx;

/* A context for each node of cfg that uses TLS (NULL for the others) in
 * *out, an array of cfg->node_count; *out NULL when no node uses TLS.
 * REDLOCK_ECONFIG (logged, naming the node, the file and OpenSSL's reason)
 * when a file cannot be used, REDLOCK_ENOMEM. */
int rl_tls_contexts_new(const redlock_config *cfg, const rl_logger *log, rl_tls_ctx ***out);
void rl_tls_contexts_free(rl_tls_ctx **ctxs, size_t n);

/* Starts the handshake on ac, just connecting: it completes within hiredis's
 * reads and writes, so the connect timeout covers it. 0, or -1 with the
 * reason. */
int rl_tls_start(struct redisAsyncContext *ac, const rl_tls_ctx *ctx, char *reason,
                 size_t reason_size);

/* When ac is a TLS connection whose handshake failed and OpenSSL knows
 * why (a certificate refused by verification, a handshake error): true
 * with OpenSSL's reason in reason. */
bool rl_tls_failure(const struct redisAsyncContext *ac, char *reason, size_t reason_size);
/* Whether ac is a TLS connection whose TLS handshake has not completed. */
bool rl_tls_handshake_pending(const struct redisAsyncContext *ac);

#endif
