/* SPDX-License-Identifier: BSD-3-Clause */
/* TLS contexts and handshakes. See tls.h. */
#include "master/tls.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef REDLOCK_HAVE_TLS

#include <arpa/inet.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <hiredis/hiredis_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <string.h>

struct rl_tls_ctx {
    SSL_CTX *ssl_ctx;
    char *name;   /* verified: the server name, else the node's host */
    bool name_ip; /* name is an IP address: no SNI, the IP SAN is checked */
};

/* OpenSSL's reason for the last error of this thread, and clears them. */
static const char *last_error(char *buf, size_t len)
{
    unsigned long e = ERR_peek_last_error();
    const char *reason = e != 0 ? ERR_reason_error_string(e) : NULL;
    if (reason != NULL)
        snprintf(buf, len, "%s", reason);
    else if (e != 0)
        ERR_error_string_n(e, buf, len);
    else
        snprintf(buf, len, "unknown error");
    ERR_clear_error();
    return buf;
}

/* Why the handshake on ssl failed, when OpenSSL knows: a certificate
 * refused by verification, or an error of the handshake (OpenSSL's
 * reason). False when neither. Clears the thread's OpenSSL errors. */
static bool handshake_failure(const SSL *ssl, char *reason, size_t reason_size)
{
    long verify = SSL_get_verify_result(ssl);
    bool known = true;
    char err[256];
    if (verify != X509_V_OK)
        snprintf(reason, reason_size, "TLS: certificate verify failed: %s",
                 X509_verify_cert_error_string(verify));
    else if (!SSL_is_init_finished(ssl) && ERR_peek_last_error() != 0)
        snprintf(reason, reason_size, "TLS handshake failed: %s", last_error(err, sizeof(err)));
    else
        known = false;
    ERR_clear_error();
    return known;
}

/* An encrypted key would make OpenSSL ask for its passphrase on the
 * terminal: the library never prompts, so such a key fails to load. */
static int no_passphrase(char *buf, int size, int rwflag, void *userdata)
{
    if (size > 0)
        buf[0] = '\0';
    (void)rwflag;
    (void)userdata;
    return 0;
}

static bool is_ip(const char *s)
{
    unsigned char addr[16];
    return inet_pton(AF_INET, s, addr) == 1 || inet_pton(AF_INET6, s, addr) == 1;
}

static void ctx_free(rl_tls_ctx *ctx)
{
    if (ctx == NULL)
        return;
    SSL_CTX_free(ctx->ssl_ctx);
    free(ctx->name);
    free(ctx);
}

/* Loads what o names into a verifying SSL_CTX; the problem into why. */
static SSL_CTX *ssl_ctx_new(const redlock_tls_options *o, char *why, size_t len)
{
    char err[256];
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    if (c == NULL) {
        snprintf(why, len, "cannot create an OpenSSL context: %s", last_error(err, sizeof(err)));
        return NULL;
    }
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_default_passwd_cb(c, no_passphrase);
    bool ok = true;
    if (o->ca_file != NULL || o->ca_dir != NULL) {
        ok = SSL_CTX_load_verify_locations(c, o->ca_file, o->ca_dir) == 1;
        if (!ok)
            snprintf(why, len, "cannot load %s %s: %s", o->ca_file ? "tls_ca_file" : "tls_ca_dir",
                     o->ca_file ? o->ca_file : o->ca_dir, last_error(err, sizeof(err)));
    } else if (SSL_CTX_set_default_verify_paths(c) != 1) {
        ok = false;
        snprintf(why, len, "cannot load the system's CA certificates: %s",
                 last_error(err, sizeof(err)));
    }
    if (ok && (o->cert_file != NULL) != (o->key_file != NULL)) {
        ok = false;
        snprintf(why, len, "%s needs %s too", o->cert_file ? "tls_cert_file" : "tls_key_file",
                 o->cert_file ? "tls_key_file" : "tls_cert_file");
    }
    if (ok && o->cert_file != NULL &&
        SSL_CTX_use_certificate_chain_file(c, o->cert_file) != 1) {
        ok = false;
        snprintf(why, len, "cannot load tls_cert_file %s: %s", o->cert_file,
                 last_error(err, sizeof(err)));
    }
    /* The key's contents never reach a message: OpenSSL's reasons name no
     * key material. */
    if (ok && o->key_file != NULL &&
        (SSL_CTX_use_PrivateKey_file(c, o->key_file, SSL_FILETYPE_PEM) != 1 ||
         SSL_CTX_check_private_key(c) != 1)) {
        ok = false;
        snprintf(why, len, "cannot use tls_key_file %s: %s", o->key_file,
                 last_error(err, sizeof(err)));
    }
    if (!ok) {
        SSL_CTX_free(c);
        return NULL;
    }
    return c;
}

static rl_tls_ctx *ctx_new(const rl_node *node, const redlock_tls_options *o, char *why,
                           size_t len)
{
    rl_tls_ctx *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL || (ctx->name = strdup(o->server_name ? o->server_name : node->host)) == NULL) {
        free(ctx);
        snprintf(why, len, "out of memory");
        return NULL;
    }
    ctx->name_ip = is_ip(ctx->name);
    ctx->ssl_ctx = ssl_ctx_new(o, why, len);
    if (ctx->ssl_ctx == NULL) {
        ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

int rl_tls_contexts_new(const redlock_config *cfg, const rl_logger *log, rl_tls_ctx ***out)
{
    *out = NULL;
    rl_tls_ctx **ctxs = NULL;
    for (size_t i = 0; i < cfg->node_count; i++) {
        redlock_tls_options o;
        rl_node_tls(cfg, &cfg->nodes[i], &o);
        if (o.enabled != 1)
            continue;
        if (ctxs == NULL && (ctxs = calloc(cfg->node_count, sizeof(rl_tls_ctx *))) == NULL)
            return REDLOCK_ENOMEM;
        char why[REDLOCK_ERRBUF_SIZE];
        if ((ctxs[i] = ctx_new(&cfg->nodes[i], &o, why, sizeof(why))) == NULL) {
            rl_log(log, REDLOCK_LOG_ERROR, "invalid configuration: master %s: TLS: %s",
                   cfg->nodes[i].name, why);
            rl_tls_contexts_free(ctxs, cfg->node_count);
            return strcmp(why, "out of memory") == 0 ? REDLOCK_ENOMEM : REDLOCK_ECONFIG;
        }
    }
    *out = ctxs;
    return REDLOCK_OK;
}

void rl_tls_contexts_free(rl_tls_ctx **ctxs, size_t n)
{
    if (ctxs == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        ctx_free(ctxs[i]);
    free(ctxs);
}

int rl_tls_start(redisAsyncContext *ac, const rl_tls_ctx *ctx, char *reason, size_t reason_size)
{
    char err[256];
    SSL *ssl = SSL_new(ctx->ssl_ctx);
    if (ssl == NULL) {
        snprintf(reason, reason_size, "TLS: %s", last_error(err, sizeof(err)));
        return -1;
    }
    /* hiredis_ssl sets SNI but checks no name: the name is checked here,
     * by OpenSSL, during the handshake. */
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    bool ok = ctx->name_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, ctx->name) == 1
                           : SSL_set_tlsext_host_name(ssl, ctx->name) == 1 &&
                                 X509_VERIFY_PARAM_set1_host(param, ctx->name, 0) == 1;
    if (!ok) {
        snprintf(reason, reason_size, "TLS: cannot use the server name: %s",
                 last_error(err, sizeof(err)));
        SSL_free(ssl);
        return -1;
    }
    /* On success hiredis owns ssl; it is kept in the context's user data
     * too, for rl_tls_failure(). */
    if (redisInitiateSSL(&ac->c, ssl) != REDIS_OK) {
        /* On loopback the whole handshake may run within this call. */
        if (!handshake_failure(ssl, reason, reason_size))
            snprintf(reason, reason_size, "TLS handshake failed: %s",
                     ac->c.errstr[0] ? ac->c.errstr : "unknown error");
        SSL_free(ssl);
        return -1;
    }
    ac->c.privdata = ssl;
    return 0;
}

bool rl_tls_failure(const redisAsyncContext *ac, char *reason, size_t reason_size)
{
    const SSL *ssl = ac->c.privdata;
    if (ssl == NULL || ac->c.privctx == NULL)
        return false;
    return handshake_failure(ssl, reason, reason_size);
}

bool rl_tls_handshake_pending(const redisAsyncContext *ac)
{
    const SSL *ssl = ac->c.privdata;
    return ssl != NULL && ac->c.privctx != NULL && !SSL_is_init_finished(ssl);
}

#else /* no TLS: config_tls.c refuses every config that would need it */

int rl_tls_contexts_new(const redlock_config *cfg, const rl_logger *log, rl_tls_ctx ***out)
{
    (void)cfg;
    (void)log;
    *out = NULL;
    return REDLOCK_OK;
}

void rl_tls_contexts_free(rl_tls_ctx **ctxs, size_t n)
{
    (void)n;
    free(ctxs);
}

int rl_tls_start(struct redisAsyncContext *ac, const rl_tls_ctx *ctx, char *reason,
                 size_t reason_size)
{
    (void)ac;
    (void)ctx;
    snprintf(reason, reason_size, "%s", rl_tls_missing());
    return -1;
}

bool rl_tls_failure(const struct redisAsyncContext *ac, char *reason, size_t reason_size)
{
    (void)ac;
    if (reason_size > 0)
        reason[0] = '\0';
    return false;
}

bool rl_tls_handshake_pending(const struct redisAsyncContext *ac)
{
    (void)ac;
    return false;
}

#endif
