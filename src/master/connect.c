/* SPDX-License-Identifier: BSD-3-Clause */
/* Opening a connection to a node. See connect.h. */
#include "master/connect.h"
#include "config/config_internal.h"
#include "master/tls.h"
#include "wire/reader_bounds.h"

#include <fcntl.h>
#include <hiredis/adapters/libev.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>

redisAsyncContext *rl_connect_node(struct ev_loop *loop, const rl_node *node,
                                   const rl_tls_ctx *tls, char *reason, size_t reason_size)
{
    redisAsyncContext *ac = node->unix_path ? redisAsyncConnectUnix(node->unix_path)
                                            : redisAsyncConnect(node->host, node->port);
    if (ac == NULL) {
        snprintf(reason, reason_size, "connect: out of memory");
        return NULL;
    }
    if (ac->err) {
        snprintf(reason, reason_size, "connect: %s", ac->c.errstr);
        redisAsyncFree(ac);
        return NULL;
    }
    if (rl_reader_bound(ac->c.reader) != 0) {
        snprintf(reason, reason_size, "connect: out of memory");
        redisAsyncFree(ac);
        return NULL;
    }
    /* Our sockets are ours: a program that forks and execs must not hand
     * them to its children. */
    int flags = fcntl(ac->c.fd, F_GETFD);
    if (flags >= 0)
        fcntl(ac->c.fd, F_SETFD, flags | FD_CLOEXEC);
    if (tls != NULL && rl_tls_start(ac, tls, reason, reason_size) != 0) {
        redisAsyncFree(ac);
        return NULL;
    }
    if (redisLibevAttach(loop, ac) != REDIS_OK) {
        snprintf(reason, reason_size, "connect: cannot attach to the loop");
        redisAsyncFree(ac);
        return NULL;
    }
    return ac;
}

int rl_connect_send_auth(redisAsyncContext *ac, const rl_node *node, rl_reply_fn *fn,
                         void *privdata)
{
    if (node->password == NULL)
        return 0;
    int rc = node->username != NULL
                 ? redisAsyncCommand(ac, fn, privdata, "AUTH %s %s", node->username,
                                     node->password)
                 : redisAsyncCommand(ac, fn, privdata, "AUTH %s", node->password);
    return rc == REDIS_OK ? 1 : -1;
}

void rl_connect_error(const redisAsyncContext *ac, const char *stage, const char *fallback,
                      char *reason, size_t reason_size)
{
    char tls[160];
    if (rl_tls_failure(ac, tls, sizeof(tls)))
        snprintf(reason, reason_size, "%s: %s", stage, tls);
    else
        snprintf(reason, reason_size, "%s: %s", stage, ac->c.errstr[0] ? ac->c.errstr : fallback);
}

void rl_connect_lost_reason(const redisAsyncContext *ac, int status, char *reason,
                            size_t reason_size)
{
    if (status == REDIS_OK) /* closed by us or the server, without an error */
        snprintf(reason, reason_size, "connection lost: closed");
    else
        rl_connect_error(ac, "connection lost", "closed", reason, reason_size);
}
