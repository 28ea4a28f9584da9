/* SPDX-License-Identifier: BSD-3-Clause */
/* Opening a non-blocking hiredis connection to a node on a libev loop, the
 * same way for the master's request connection and its subscriber. */
#ifndef REDLOCK_CONNECT_H
#define REDLOCK_CONNECT_H

#include "config/config_internal.h"

#include <ev.h>
#include <stddef.h>

struct redisAsyncContext;
struct rl_tls_ctx;
typedef void rl_reply_fn(struct redisAsyncContext *ac, void *reply, void *privdata);

/*
 * Start connecting to node: TCP or unix socket, replies bounded
 * (reader_bounds.h), close-on-exec, attached to loop, and with tls (not
 * NULL) the TLS handshake started (tls.h). Returns the context,
 * or NULL with the reason in reason. A host name is resolved here, by
 * hiredis, with getaddrinfo(3), which blocks; configure IP addresses where
 * the loop must never wait.
 */
struct redisAsyncContext *rl_connect_node(struct ev_loop *loop, const rl_node *node,
                                          const struct rl_tls_ctx *tls, char *reason,
                                          size_t reason_size);

/* "STAGE: WHY" for a failed connection: a TLS handshake's or
 * verification's failure (OpenSSL's reason), else hiredis's error, else
 * fallback. */
void rl_connect_error(const struct redisAsyncContext *ac, const char *stage,
                      const char *fallback, char *reason, size_t reason_size);

/* "connection lost: WHY" for ac's disconnect callback with status: a TLS
 * handshake's or verification's failure (OpenSSL's reason), else hiredis's
 * error. */
void rl_connect_lost_reason(const struct redisAsyncContext *ac, int status, char *reason,
                            size_t reason_size);

/* Queue AUTH [username] password on ac when node has a password; returns
 * 1 queued, 0 none needed, -1 out of memory. */
int rl_connect_send_auth(struct redisAsyncContext *ac, const rl_node *node, rl_reply_fn *fn,
                         void *privdata);

#endif
