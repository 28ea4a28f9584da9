/* SPDX-License-Identifier: BSD-3-Clause */
/* TLS options in the config: config-wide and per node, and what a node
 * ends up using (docs/tls.md). The OpenSSL side is tls.c. */
#include "config/config_internal.h"

#include <stdlib.h>
#include <string.h>

const char *rl_tls_missing(void)
{
#ifdef REDLOCK_HAVE_TLS
    return NULL;
#else
    return "TLS is not available in this build of libredlock: " REDLOCK_TLS_MISSING
           " (docs/tls.md)";
#endif
}

bool redlock_tls_available(const char **why)
{
    const char *missing = rl_tls_missing();
    if (why != NULL)
        *why = missing;
    return missing == NULL;
}

void rl_tls_clear(rl_tls *tls)
{
    free(tls->ca_file);
    free(tls->ca_dir);
    free(tls->cert_file);
    free(tls->key_file);
    free(tls->server_name);
    tls->ca_file = tls->ca_dir = tls->cert_file = tls->key_file = tls->server_name = NULL;
}

/* *dst = a copy of src, or NULL; false when out of memory. */
static bool copy_string(char **dst, const char *src)
{
    *dst = src != NULL ? strdup(src) : NULL;
    return src == NULL || *dst != NULL;
}

int rl_tls_copy(rl_tls *dst, const rl_tls *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->enabled = src->enabled;
    if (!copy_string(&dst->ca_file, src->ca_file) || !copy_string(&dst->ca_dir, src->ca_dir) ||
        !copy_string(&dst->cert_file, src->cert_file) ||
        !copy_string(&dst->key_file, src->key_file) ||
        !copy_string(&dst->server_name, src->server_name)) {
        rl_tls_clear(dst);
        return REDLOCK_ENOMEM;
    }
    return REDLOCK_OK;
}

/* NULL, or not empty and at most max bytes. */
static bool string_ok(const char *s, size_t max)
{
    return s == NULL || (s[0] != '\0' && strlen(s) <= max);
}

/* The server name goes into the SNI extension and the verification:
 * printable, no spaces. */
static bool server_name_ok(const char *s)
{
    if (!string_ok(s, RL_HOST_MAX))
        return false;
    for (; s != NULL && *s; s++) {
        if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
            return false;
    }
    return true;
}

static bool names_a_file(const redlock_tls_options *o)
{
    return o->ca_file || o->ca_dir || o->cert_file || o->key_file || o->server_name;
}

/* Checks opts and copies them into *out (enabled limited to
 * min_enabled..1). */
static int tls_from_options(const redlock_tls_options *o, int min_enabled, rl_tls *out)
{
    if (o->enabled < min_enabled || o->enabled > 1 || !string_ok(o->ca_file, RL_TLS_PATH_MAX) ||
        !string_ok(o->ca_dir, RL_TLS_PATH_MAX) || !string_ok(o->cert_file, RL_TLS_PATH_MAX) ||
        !string_ok(o->key_file, RL_TLS_PATH_MAX) || !server_name_ok(o->server_name))
        return REDLOCK_EINVAL;
    if (rl_tls_missing() != NULL && (o->enabled == 1 || names_a_file(o)))
        return REDLOCK_ECONFIG;
    rl_tls src = {o->enabled,
                  (char *)o->ca_file,
                  (char *)o->ca_dir,
                  (char *)o->cert_file,
                  (char *)o->key_file,
                  (char *)o->server_name};
    return rl_tls_copy(out, &src);
}

int redlock_config_set_tls(redlock_config *cfg, const redlock_tls_options *opts)
{
    if (cfg == NULL)
        return REDLOCK_EINVAL;
    rl_tls tls = {0};
    if (opts != NULL) {
        int rc = tls_from_options(opts, 0, &tls);
        if (rc != REDLOCK_OK)
            return rc;
    }
    rl_tls_clear(&cfg->tls);
    cfg->tls = tls;
    return REDLOCK_OK;
}

int redlock_config_node_set_tls(redlock_config *cfg, size_t index,
                                const redlock_tls_options *opts)
{
    if (cfg == NULL || index >= cfg->node_count)
        return REDLOCK_EINVAL;
    rl_node *node = &cfg->nodes[index];
    rl_tls tls = {.enabled = RL_TLS_INHERIT};
    if (opts != NULL) {
        if (node->unix_path != NULL && opts->enabled == 1)
            return REDLOCK_EINVAL; /* redis serves TLS on TCP ports only */
        int rc = tls_from_options(opts, RL_TLS_INHERIT, &tls);
        if (rc != REDLOCK_OK)
            return rc;
    }
    rl_tls_clear(&node->tls);
    node->tls = tls;
    return REDLOCK_OK;
}

void rl_node_tls(const redlock_config *cfg, const rl_node *node, redlock_tls_options *out)
{
    const rl_tls *own = &node->tls;
    const rl_tls *all = &cfg->tls;
    out->enabled = own->enabled != RL_TLS_INHERIT ? own->enabled : all->enabled;
    if (node->unix_path != NULL)
        out->enabled = 0;
    out->ca_file = own->ca_file ? own->ca_file : all->ca_file;
    out->ca_dir = own->ca_dir ? own->ca_dir : all->ca_dir;
    out->cert_file = own->cert_file ? own->cert_file : all->cert_file;
    out->key_file = own->key_file ? own->key_file : all->key_file;
    out->server_name = own->server_name ? own->server_name : all->server_name;
}
