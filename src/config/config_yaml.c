/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading a config from YAML: parse with libyaml, check every key, and build
 * the config through the setters of config.c (docs/config.md). Messages are
 * built with message_buffer.h; files are read by secret_file.h; a node's
 * url is parsed by node_url.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strtod_l, explicit_bzero */
#endif

#include "config/config_internal.h"
#include "config/node_url.h"
#include "redlock/redlock.h"
#include "util/duration.h"
#include "util/message_buffer.h"
#include "util/secret_file.h"
#include "util/util.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#define RL_YAML_MAX_BYTES ((size_t)16 << 20) /* larger inputs are refused unparsed */
#define RL_YAML_ECHO_MAX 40                  /* bytes of a value or key shown in messages */
#define RL_YAML_ECHO_BUF 200                 /* enough for 40 bytes escaped, quotes, "..." */
#define RL_YAML_PATH_BUF 256                 /* "nodes[N]." plus an escaped key */
#define RL_YAML_DEFAULT_PORT 6379
#define RL_PASSWORD_FILE_MAX ((size_t)1 << 20) /* larger files are refused unread */
/* The format needs 3 levels (top mapping, nodes, a node). The limit exists
 * because libyaml's scanner takes time quadratic in the nesting depth. */
#define RL_YAML_MAX_DEPTH 32

/* Top-level keys: the integer settings (indexed like redlock_setting), then: */
enum { TOP_DRIFT_FACTOR = RL_SETTING_COUNT, TOP_NODES, TOP_PASSWORD_FILE, TOP_TLS, TOP_TLS_CA_FILE, TOP_TLS_CA_DIR, TOP_TLS_CERT_FILE, TOP_TLS_KEY_FILE, TOP_TLS_SERVER_NAME, TOP_KEY_COUNT };
/* then, at TOP_DURATION + setting, the duration form of each `_ms` setting
 * (`ttl: 30s` for `ttl_ms: 30000`); no key for the other settings. */
#define TOP_DURATION TOP_KEY_COUNT
#define TOP_ALL_KEYS (TOP_KEY_COUNT + RL_SETTING_COUNT)

/* The TLS keys (docs/tls.md), config-wide and per node in the same order:
 * TK_* is a TLS key's offset from TOP_TLS and from NK_TLS. */
enum tls_key { TK_TLS, TK_CA_FILE, TK_CA_DIR, TK_CERT_FILE, TK_KEY_FILE, TK_SERVER_NAME, TK_COUNT };
_Static_assert(TOP_KEY_COUNT - TOP_TLS == TK_COUNT && TOP_TLS_SERVER_NAME - TOP_TLS == TK_SERVER_NAME,
               "the config-wide TLS keys are in tls_key order");
_Static_assert((int)TOP_DRIFT_FACTOR == (int)RL_KEY_DRIFT_FACTOR, "problems name drift_factor so");

/* Keys of one node mapping. */
enum node_key {
    NK_HOST,
    NK_PORT,
    NK_SOCKET,
    NK_URL,
    NK_PASSWORD,
    NK_PASSWORD_ENV,
    NK_PASSWORD_FILE,
    NK_USERNAME,
    NK_DB,
    NK_CONNECT_TIMEOUT,
    NK_COMMAND_TIMEOUT,
    NK_DURABLE,
    NK_TLS,
    NK_TLS_CA_FILE,
    NK_TLS_CA_DIR,
    NK_TLS_CERT_FILE,
    NK_TLS_KEY_FILE,
    NK_TLS_SERVER_NAME,
    NK_COUNT
};
_Static_assert(NK_COUNT - NK_TLS == TK_COUNT && NK_TLS_SERVER_NAME - NK_TLS == TK_SERVER_NAME,
               "the node's TLS keys are in tls_key order");

static const char *const node_key_names[NK_COUNT] = {
    [NK_HOST] = "host",
    [NK_PORT] = "port",
    [NK_SOCKET] = "socket",
    [NK_URL] = "url",
    [NK_PASSWORD] = "password",
    [NK_PASSWORD_ENV] = "password_env",
    [NK_PASSWORD_FILE] = "password_file",
    [NK_USERNAME] = "username",
    [NK_DB] = "db",
    [NK_CONNECT_TIMEOUT] = "connect_timeout_ms",
    [NK_COMMAND_TIMEOUT] = "command_timeout_ms",
    [NK_DURABLE] = "durable",
    [NK_TLS] = "tls",
    [NK_TLS_CA_FILE] = "tls_ca_file",
    [NK_TLS_CA_DIR] = "tls_ca_dir",
    [NK_TLS_CERT_FILE] = "tls_cert_file",
    [NK_TLS_KEY_FILE] = "tls_key_file",
    [NK_TLS_SERVER_NAME] = "tls_server_name",
};

typedef struct rl_yaml_loader {
    const char *name; /* file name or load_string's name, for messages */
    char *errbuf;
    size_t errlen;
    locale_t c_locale; /* numbers are parsed the same whatever the process locale */
    yaml_document_t doc;
    redlock_config *cfg;
    const yaml_node_t *top_keys[TOP_ALL_KEYS]; /* key node of each top-level key seen */
    size_t node_lines[REDLOCK_MAX_NODES];       /* 1-based line of each node added */
    /* key nodes of each added node's own connect and command timeouts */
    const yaml_node_t *node_timeout_keys[REDLOCK_MAX_NODES][2];
    redlock_tls_options tls; /* the config-wide TLS keys; strings point into the document */
    bool inline_password; /* a node's password is in the text (`password`, a url's) */
    /* The config-wide password_file's password (global_len bytes as read,
     * for rl_secret_file_free()): of every node that gives none. */
    char *global_password;
    size_t global_len;
} rl_yaml_loader;

/* What one node mapping says, before anything is added to the config. */
typedef struct node_spec {
    const yaml_node_t *keys[NK_COUNT];   /* NULL: key absent */
    const yaml_node_t *values[NK_COUNT];
    bool set[NK_COUNT];                  /* present with a non-null value */
    const char *strings[NK_COUNT];       /* for string keys; point into the document */
    int64_t ints[NK_COUNT];              /* for integer keys */
    rl_url url;                          /* the url, parsed; zeroed without one */
    bool rediss;                         /* the url was rediss:// */
} node_spec;

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */

/* text, escaped and truncated, into buf: for names echoed in messages. */
static const char *echo_text(const char *text, char *buf, size_t len)
{
    return rl_msg_echo(text, RL_YAML_ECHO_MAX, buf, len);
}

static bool is_null_scalar(const yaml_node_t *node)
{
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *v = (const char *)node->data.scalar.value;
    return v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
           strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

/* What a value is, for "got ...": a quoted, escaped, truncated scalar, or
 * its kind. Never called on a password's value. */
static const char *describe_value(const yaml_node_t *node, char *buf, size_t len)
{
    rl_msg_buf msg;
    rl_msg_init(&msg, buf, len);
    if (node->type == YAML_MAPPING_NODE)
        rl_msg_printf(&msg, "a mapping");
    else if (node->type == YAML_SEQUENCE_NODE)
        rl_msg_printf(&msg, "a sequence");
    else if (is_null_scalar(node))
        rl_msg_printf(&msg, "null");
    else {
        rl_msg_printf(&msg, "\"");
        rl_msg_escaped(&msg, (const char *)node->data.scalar.value, node->data.scalar.length,
                     RL_YAML_ECHO_MAX);
        rl_msg_printf(&msg, "\"");
    }
    return buf;
}

/*
 * Writes "NAME:LINE:COLUMN: PATH: problem" into the caller's errbuf, leaving
 * out ":LINE:COLUMN" without a mark and "PATH: " without a path. Returns
 * status, so that callers can `return report(...)`.
 */
RL_PRINTF(5, 6)
static int report(const rl_yaml_loader *ld, int status, const yaml_mark_t *mark,
                  const char *path, const char *fmt, ...)
{
    rl_msg_buf msg;
    rl_msg_init(&msg, ld->errbuf, ld->errlen);
    rl_msg_escaped(&msg, ld->name, strlen(ld->name), SIZE_MAX);
    if (mark != NULL)
        rl_msg_printf(&msg, ":%zu:%zu", mark->line + 1, mark->column + 1);
    rl_msg_printf(&msg, ": ");
    if (path != NULL)
        rl_msg_printf(&msg, "%s: ", path);
    va_list ap;
    va_start(ap, fmt);
    rl_msg_vprintf(&msg, fmt, ap);
    va_end(ap);
    return status;
}

static int report_nomem(const rl_yaml_loader *ld)
{
    return report(ld, REDLOCK_ENOMEM, NULL, NULL, "out of memory");
}

/* Line and column (0-based, in characters) of a byte offset, for libyaml's
 * reader errors, which give an offset instead of a mark. */
static yaml_mark_t mark_of_offset(const unsigned char *text, size_t len, size_t offset)
{
    yaml_mark_t mark = {.index = offset};
    for (size_t i = 0; i < offset && i < len; i++) {
        if (text[i] == '\n') {
            mark.line++;
            mark.column = 0;
        } else if ((text[i] & 0xc0) != 0x80) { /* not a UTF-8 continuation byte */
            mark.column++;
        }
    }
    return mark;
}

/* Reports a libyaml failure: its own problem text at its own position. */
static int report_parser_error(const rl_yaml_loader *ld, const yaml_parser_t *parser,
                               const unsigned char *text, size_t len)
{
    /* libyaml leaves error unset on some failed allocations. */
    if (parser->error == YAML_MEMORY_ERROR || parser->error == YAML_NO_ERROR)
        return report_nomem(ld);
    const char *problem = parser->problem ? parser->problem : "invalid YAML";
    if (parser->error == YAML_READER_ERROR) {
        yaml_mark_t mark = mark_of_offset(text, len, parser->problem_offset);
        if (parser->problem_value != -1)
            return report(ld, REDLOCK_ECONFIG, &mark, NULL, "%s (#%X)", problem,
                          (unsigned)parser->problem_value);
        return report(ld, REDLOCK_ECONFIG, &mark, NULL, "%s", problem);
    }
    if (parser->context != NULL)
        return report(ld, REDLOCK_ECONFIG, &parser->problem_mark, NULL,
                      "%s (%s at line %zu, column %zu)", problem, parser->context,
                      parser->context_mark.line + 1, parser->context_mark.column + 1);
    return report(ld, REDLOCK_ECONFIG, &parser->problem_mark, NULL, "%s", problem);
}

/* ------------------------------------------------------------------------ */
/* Key paths and scalar values                                               */

/* "nodes[3]" */
static void node_path(char *buf, size_t len, size_t index)
{
    snprintf(buf, len, "nodes[%zu]", index);
}

/* prefix + "." + key (or just key without prefix) for a scalar key, escaped
 * and truncated since it may be any text the file holds. */
static void key_path(char *buf, size_t len, const char *prefix, const yaml_node_t *key)
{
    rl_msg_buf msg;
    rl_msg_init(&msg, buf, len);
    if (prefix != NULL)
        rl_msg_printf(&msg, "%s.", prefix);
    if (key->data.scalar.length == 0)
        rl_msg_printf(&msg, "\"\"");
    else
        rl_msg_escaped(&msg, (const char *)key->data.scalar.value, key->data.scalar.length,
                     RL_YAML_ECHO_MAX);
}

static bool scalar_equals(const yaml_node_t *node, const char *text)
{
    size_t len = strlen(text);
    return node->type == YAML_SCALAR_NODE && node->data.scalar.length == len &&
           memcmp(node->data.scalar.value, text, len) == 0;
}

/* True when the scalar holds a NUL byte (a "\0" escape), which C strings
 * would silently cut. */
static bool scalar_has_nul(const yaml_node_t *node)
{
    return strlen((const char *)node->data.scalar.value) != node->data.scalar.length;
}

/* Exactly an optional sign and decimal digits; values beyond int64 saturate
 * so that the caller's range check rejects them. */
static bool parse_integer(const yaml_node_t *node, int64_t *out)
{
    if (node->type != YAML_SCALAR_NODE)
        return false;
    const char *s = (const char *)node->data.scalar.value;
    size_t len = node->data.scalar.length;
    size_t i = 0;
    bool negative = false;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        negative = (s[i++] == '-');
    if (i == len)
        return false;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t value = 0;
    bool saturated = false;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned digit = (unsigned)(s[i] - '0');
        if (value > (limit - digit) / 10)
            saturated = true;
        else
            value = value * 10 + digit;
    }
    if (saturated)
        value = limit;
    *out = negative ? (value == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)value)
                    : (int64_t)value;
    return true;
}

/* A finite decimal number, the whole scalar, in the C locale. */
static bool parse_number(const rl_yaml_loader *ld, const yaml_node_t *node, double *out)
{
    if (node->type != YAML_SCALAR_NODE || scalar_has_nul(node))
        return false;
    const char *s = (const char *)node->data.scalar.value;
    size_t len = node->data.scalar.length;
    /* strtod would also take leading spaces and hexadecimal. */
    if (len == 0 || strchr("+-.0123456789", s[0]) == NULL || strpbrk(s, "xX") != NULL)
        return false;
    char *end = NULL;
    double value = strtod_l(s, &end, ld->c_locale);
    if (end != s + len || !isfinite(value))
        return false;
    *out = value;
    return true;
}

/* The value of an integer key within [min, max], or an error naming the
 * range and what was found. */
static int read_integer_value(const rl_yaml_loader *ld, const yaml_node_t *node,
                              const char *path, int64_t min, int64_t max, int64_t *out)
{
    int64_t value = 0;
    /* A switch (0 or 1) also takes YAML's true and false. */
    if (min == 0 && max == 1 && (scalar_equals(node, "true") || scalar_equals(node, "false"))) {
        *out = scalar_equals(node, "true");
        return REDLOCK_OK;
    }
    if (!parse_integer(node, &value) || value < min || value > max) {
        char got[RL_YAML_ECHO_BUF];
        return report(ld, REDLOCK_ECONFIG, &node->start_mark, path,
                      "expected an integer from %" PRId64 " to %" PRId64 ", got %s", min, max,
                      describe_value(node, got, sizeof(got)));
    }
    *out = value;
    return REDLOCK_OK;
}

/* The value of a string key: a scalar, not empty, without NUL bytes. The
 * value itself is never shown: it may be a password. */
static int read_string_value(const rl_yaml_loader *ld, const yaml_node_t *node,
                             const char *path, const char **out)
{
    if (node->type != YAML_SCALAR_NODE) {
        char got[RL_YAML_ECHO_BUF];
        return report(ld, REDLOCK_ECONFIG, &node->start_mark, path, "expected a string, got %s",
                      describe_value(node, got, sizeof(got)));
    }
    if (node->data.scalar.length == 0)
        return report(ld, REDLOCK_ECONFIG, &node->start_mark, path,
                      "expected a non-empty string");
    if (scalar_has_nul(node))
        return report(ld, REDLOCK_ECONFIG, &node->start_mark, path, "contains a NUL byte");
    *out = (const char *)node->data.scalar.value;
    return REDLOCK_OK;
}

/* ------------------------------------------------------------------------ */
/* Mapping keys                                                              */

/* "a, b, c" */
static void join_names(char *buf, size_t len, const char *const *names, size_t count)
{
    rl_msg_buf msg;
    rl_msg_init(&msg, buf, len);
    const char *sep = "";
    for (size_t i = 0; i < count; i++) {
        if (names[i] == NULL)
            continue;
        rl_msg_printf(&msg, "%s%s", sep, names[i]);
        sep = ", ";
    }
}

/*
 * Checks one key of a mapping against names[0..count) (NULL ones are no
 * key): an unknown key, a
 * key that is not a scalar, or a key seen before are errors. On success
 * *index is the key's position in names and seen[*index] is set to it.
 * prefix is the mapping's key path (NULL at the top level).
 */
static int check_key(const rl_yaml_loader *ld, const yaml_node_t *key, const char *prefix,
                     const char *const *names, size_t count, const yaml_node_t **seen,
                     size_t *index)
{
    if (key->type != YAML_SCALAR_NODE) {
        char got[RL_YAML_ECHO_BUF];
        return report(ld, REDLOCK_ECONFIG, &key->start_mark, prefix,
                      "expected a key name, got %s", describe_value(key, got, sizeof(got)));
    }
    char path[RL_YAML_PATH_BUF];
    key_path(path, sizeof(path), prefix, key);
    for (size_t i = 0; i < count; i++) {
        if (names[i] == NULL || !scalar_equals(key, names[i]))
            continue;
        if (seen[i] != NULL)
            return report(ld, REDLOCK_ECONFIG, &key->start_mark, path,
                          "duplicate key (first at line %zu)", seen[i]->start_mark.line + 1);
        seen[i] = key;
        *index = i;
        return REDLOCK_OK;
    }
    char expected[512];
    /* The top level lists its keys, and says the durations in one go. */
    bool top = prefix == NULL && count == TOP_ALL_KEYS;
    join_names(expected, sizeof(expected), names, top ? TOP_KEY_COUNT : count);
    return report(ld, REDLOCK_ECONFIG, &key->start_mark, path, "unknown key (expected %s%s)",
                  expected, top ? "; or a `_ms` key without `_ms`, as a duration" : "");
}

/* ------------------------------------------------------------------------ */
/* Nodes                                                                     */

/* The range of an integer node key; false for the string keys. */
static bool node_int_range(enum node_key key, int64_t *min, int64_t *max)
{
    const rl_setting_info *timeout = NULL;
    switch (key) {
    case NK_PORT:
        *min = 1;
        *max = RL_PORT_MAX;
        return true;
    case NK_DB:
        *min = 0;
        *max = RL_DB_MAX;
        return true;
    case NK_TLS:
    case NK_DURABLE:
        *min = 0;
        *max = 1;
        return true;
    case NK_CONNECT_TIMEOUT:
        timeout = &rl_setting_table[REDLOCK_CONNECT_TIMEOUT_MS];
        break;
    case NK_COMMAND_TIMEOUT:
        timeout = &rl_setting_table[REDLOCK_COMMAND_TIMEOUT_MS];
        break;
    default:
        return false;
    }
    *min = timeout->min;
    *max = timeout->max;
    return true;
}

/* "nodes[i].key" for a key known to be valid. */
static void node_key_path(char *buf, size_t len, size_t index, enum node_key key)
{
    snprintf(buf, len, "nodes[%zu].%s", index, node_key_names[key]);
}

/* Reads every key of a node mapping into spec, in document order. */
static int read_node_spec(const rl_yaml_loader *ld, yaml_document_t *doc, const yaml_node_t *node,
                          size_t index, node_spec *spec)
{
    char prefix[RL_YAML_PATH_BUF];
    char path[RL_YAML_PATH_BUF];
    node_path(prefix, sizeof(prefix), index);
    memset(spec, 0, sizeof(*spec));
    for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
         pair < node->data.mapping.pairs.top; pair++) {
        const yaml_node_t *key = yaml_document_get_node(doc, pair->key);
        const yaml_node_t *value = yaml_document_get_node(doc, pair->value);
        size_t k = 0;
        int rc = check_key(ld, key, prefix, node_key_names, NK_COUNT, spec->keys, &k);
        if (rc != REDLOCK_OK)
            return rc;
        spec->values[k] = value;
        if (is_null_scalar(value))
            continue; /* null: not set */
        node_key_path(path, sizeof(path), index, (enum node_key)k);
        int64_t min = 0;
        int64_t max = 0;
        if (node_int_range((enum node_key)k, &min, &max)) {
            rc = read_integer_value(ld, value, path, min, max, &spec->ints[k]);
        } else {
            rc = read_string_value(ld, value, path, &spec->strings[k]);
        }
        if (rc != REDLOCK_OK)
            return rc;
        spec->set[k] = true;
    }
    return REDLOCK_OK;
}

/* When both of two exclusive keys are set, reports at the later one. */
static int check_exclusive(const rl_yaml_loader *ld, const node_spec *spec, size_t index,
                           enum node_key a, enum node_key b)
{
    if (!spec->set[a] || !spec->set[b])
        return REDLOCK_OK;
    bool a_later = spec->keys[a]->start_mark.index > spec->keys[b]->start_mark.index;
    enum node_key later = a_later ? a : b;
    char path[RL_YAML_PATH_BUF];
    node_key_path(path, sizeof(path), index, later);
    return report(ld, REDLOCK_ECONFIG, &spec->keys[later]->start_mark, path,
                  "%s and %s are mutually exclusive", node_key_names[a], node_key_names[b]);
}

/* Names that can be environment variables: what a shell can export. Other
 * text there is likely a misplaced password, so it is never echoed. */
static bool is_env_name(const char *s)
{
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    for (; *s; s++) {
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    }
    return true;
}

/* The password a password_file holds (docs/config.md): its bytes, less one
 * trailing newline, into *text (*len bytes as read, for
 * rl_secret_file_free()). A relative path is taken in
 * $CREDENTIALS_DIRECTORY when that is set (systemd's LoadCredential=).
 * Errors name the path, never what the file holds. */
static int read_password_file(const rl_yaml_loader *ld, const char *path, const yaml_mark_t *mark,
                              const char *name, char **text, size_t *len)
{
    if (name == NULL) /* read_string_value() gave one: never */
        return report(ld, REDLOCK_ECONFIG, mark, path, "expected a non-empty string");
    const char *dir = getenv("CREDENTIALS_DIRECTORY");
    char *joined = NULL;
    if (name[0] != '/' && dir != NULL && dir[0] != '\0') {
        size_t dir_len = strlen(dir);
        size_t size = dir_len + strlen(name) + 2;
        joined = malloc(size);
        if (joined == NULL)
            return report_nomem(ld);
        snprintf(joined, size, "%s%s%s", dir, dir[dir_len - 1] == '/' ? "" : "/", name);
    }
    const char *file = joined != NULL ? joined : name;
    char problem[REDLOCK_ERRBUF_SIZE];
    char shown[RL_YAML_PATH_BUF];
    rl_msg_buf msg;
    rl_msg_init(&msg, shown, sizeof(shown));
    rl_msg_escaped(&msg, file, strlen(file), (size_t)RL_YAML_ECHO_MAX * 4);
    int rc = rl_secret_file_read(file, RL_PASSWORD_FILE_MAX, text, len, problem, sizeof(problem));
    free(joined);
    if (rc == REDLOCK_ENOMEM)
        return report_nomem(ld);
    if (rc != REDLOCK_OK)
        return report(ld, rc, mark, path, "%s: %s", shown, problem);
    size_t used = *len;
    if (used > 0 && (*text)[used - 1] == '\n')
        used--;
    if (used > 0 && (*text)[used - 1] == '\r')
        used--;
    const char *why = NULL;
    if (used == 0)
        why = "holds no password (it is empty)";
    else if (memchr(*text, '\0', used) != NULL)
        why = "holds a NUL byte";
    else if (used > RL_AUTH_MAX)
        why = "holds a password too long (at most 4096 bytes)";
    if (why != NULL) {
        rl_secret_file_free(*text, *len);
        *text = NULL;
        return report(ld, REDLOCK_ECONFIG, mark, path, "%s %s", shown, why);
    }
    (*text)[used] = '\0'; /* over the newline, or the reader's own NUL */
    return REDLOCK_OK;
}

/* The node's password: the literal one, the environment variable's value,
 * the file's (*file, to free with rl_secret_file_free(*file, *file_len)),
 * or NULL. Errors name the variable or the file, never a value. */
static int node_password(const rl_yaml_loader *ld, const node_spec *spec, size_t index,
                         const char **password, char **file, size_t *file_len)
{
    *password = NULL;
    if (spec->set[NK_PASSWORD]) {
        *password = spec->strings[NK_PASSWORD];
        return REDLOCK_OK;
    }
    if (spec->set[NK_PASSWORD_FILE]) {
        char path[RL_YAML_PATH_BUF];
        node_key_path(path, sizeof(path), index, NK_PASSWORD_FILE);
        int rc = read_password_file(ld, path, &spec->values[NK_PASSWORD_FILE]->start_mark,
                                    spec->strings[NK_PASSWORD_FILE], file, file_len);
        *password = *file;
        return rc;
    }
    if (!spec->set[NK_PASSWORD_ENV])
        return REDLOCK_OK;
    char path[RL_YAML_PATH_BUF];
    node_key_path(path, sizeof(path), index, NK_PASSWORD_ENV);
    const yaml_mark_t *mark = &spec->values[NK_PASSWORD_ENV]->start_mark;
    const char *var = spec->strings[NK_PASSWORD_ENV];
    if (!is_env_name(var))
        return report(ld, REDLOCK_ECONFIG, mark, path,
                      "expected the name of an environment variable (letters, digits, _)");
    const char *value = getenv(var);
    if (value == NULL || value[0] == '\0') {
        char shown[RL_YAML_ECHO_BUF];
        return report(ld, REDLOCK_ECONFIG, mark, path, "environment variable %s is %s",
                      echo_text(var, shown, sizeof(shown)), value ? "empty" : "not set");
    }
    *password = value;
    return REDLOCK_OK;
}

/* Reports a key that gives what the url gives already, at that key. */
static int report_given_by_url(const rl_yaml_loader *ld, const node_spec *spec, size_t index,
                               enum node_key key, const char *what)
{
    char path[RL_YAML_PATH_BUF];
    node_key_path(path, sizeof(path), index, key);
    return report(ld, REDLOCK_ECONFIG, &spec->keys[key]->start_mark, path,
                  "the url gives %s already", what);
}

/* Parses the node's url into spec->url, and checks it against the node's
 * other keys, which may give what it does not. Messages never show the url:
 * it may hold a password. */
static int read_node_url(const rl_yaml_loader *ld, node_spec *spec, size_t index)
{
    char path[RL_YAML_PATH_BUF];
    node_key_path(path, sizeof(path), index, NK_URL);
    const yaml_mark_t *mark = &spec->values[NK_URL]->start_mark;
    rl_url_status status = rl_url_parse(spec->strings[NK_URL], &spec->url);
    if (status == RL_URL_NOMEM)
        return report_nomem(ld);
    if (status != RL_URL_OK)
        return report(ld, REDLOCK_ECONFIG, mark, path, "%s", rl_url_problem(status));
    const rl_url *url = &spec->url;
    if (url->scheme == RL_URL_REDISS && spec->set[NK_TLS] &&
        spec->ints[NK_TLS] == 0)
        return report_given_by_url(ld, spec, index, NK_TLS, "TLS (rediss://)");
    if (url->password != NULL && spec->set[NK_PASSWORD])
        return report_given_by_url(ld, spec, index, NK_PASSWORD, "a password");
    if (url->password != NULL && spec->set[NK_PASSWORD_ENV])
        return report_given_by_url(ld, spec, index, NK_PASSWORD_ENV, "a password");
    if (url->password != NULL && spec->set[NK_PASSWORD_FILE])
        return report_given_by_url(ld, spec, index, NK_PASSWORD_FILE, "a password");
    if (url->has_db && spec->set[NK_DB])
        return report_given_by_url(ld, spec, index, NK_DB, "a db");
    if (url->user != NULL && spec->set[NK_USERNAME])
        return report_given_by_url(ld, spec, index, NK_USERNAME, "a user");
    if (url->user != NULL && url->password == NULL && !spec->set[NK_PASSWORD] &&
        !spec->set[NK_PASSWORD_ENV] && !spec->set[NK_PASSWORD_FILE] &&
        ld->global_password == NULL)
        return report(ld, REDLOCK_ECONFIG, mark, path,
                      "its user needs a password (in the url, password, password_env or "
                      "password_file)");
    return REDLOCK_OK;
}

/* Checks that the node's keys go together, before anything is added. */
static int check_node_spec(const rl_yaml_loader *ld, const yaml_node_t *node, node_spec *spec,
                           size_t index)
{
    char path[RL_YAML_PATH_BUF];
    static const enum node_key exclusive[][2] = {{NK_HOST, NK_SOCKET},
                                                 {NK_URL, NK_HOST},
                                                 {NK_URL, NK_SOCKET},
                                                 {NK_URL, NK_PORT},
                                                 {NK_PASSWORD, NK_PASSWORD_ENV},
                                                 {NK_PASSWORD, NK_PASSWORD_FILE},
                                                 {NK_PASSWORD_ENV, NK_PASSWORD_FILE}};
    int rc = REDLOCK_OK;
    for (size_t i = 0; rc == REDLOCK_OK && i < sizeof(exclusive) / sizeof(exclusive[0]); i++)
        rc = check_exclusive(ld, spec, index, exclusive[i][0], exclusive[i][1]);
    if (rc != REDLOCK_OK)
        return rc;
    if (!spec->set[NK_URL] && !spec->set[NK_HOST] && !spec->set[NK_SOCKET]) {
        node_path(path, sizeof(path), index);
        return report(ld, REDLOCK_ECONFIG, &node->start_mark, path,
                      "url, host or socket is required");
    }
    if (spec->set[NK_SOCKET] && spec->set[NK_PORT]) {
        node_key_path(path, sizeof(path), index, NK_PORT);
        return report(ld, REDLOCK_ECONFIG, &spec->keys[NK_PORT]->start_mark, path,
                      "only allowed with host, not with socket");
    }
    if (spec->set[NK_URL] && (rc = read_node_url(ld, spec, index)) != REDLOCK_OK)
        return rc;
    if (spec->set[NK_USERNAME] && !spec->set[NK_PASSWORD] && !spec->set[NK_PASSWORD_ENV] &&
        !spec->set[NK_PASSWORD_FILE] && spec->url.password == NULL &&
        ld->global_password == NULL) {
        node_key_path(path, sizeof(path), index, NK_USERNAME);
        return report(ld, REDLOCK_ECONFIG, &spec->keys[NK_USERNAME]->start_mark, path,
                      "needs password, password_env or password_file");
    }
    return REDLOCK_OK;
}

/* Adds the node's address; a duplicate names the first node's line. */
static int add_node_address(rl_yaml_loader *ld, const yaml_node_t *node, const node_spec *spec,
                            size_t index, size_t *added)
{
    const rl_url *url = spec->set[NK_URL] ? &spec->url : NULL;
    const char *host = url ? url->host : spec->set[NK_HOST] ? spec->strings[NK_HOST] : NULL;
    const char *socket = url ? url->path : spec->set[NK_SOCKET] ? spec->strings[NK_SOCKET] : NULL;
    int port = url                  ? url->port
               : spec->set[NK_PORT] ? (int)spec->ints[NK_PORT]
                                    : RL_YAML_DEFAULT_PORT;
    char path[RL_YAML_PATH_BUF];
    char shown[RL_YAML_ECHO_BUF];

    long first = rl_config_find_node(ld->cfg, host, port, socket);
    if (first >= 0) {
        const char *name = redlock_config_node_name(ld->cfg, (size_t)first);
        node_path(path, sizeof(path), index);
        return report(ld, REDLOCK_ECONFIG, &node->start_mark, path,
                      "duplicate node %s (first at line %zu)",
                      echo_text(name, shown, sizeof(shown)), ld->node_lines[first]);
    }
    int rc = host ? redlock_config_add_tcp_node(ld->cfg, host, port, added)
                  : redlock_config_add_unix_node(ld->cfg, socket, added);
    if (rc == REDLOCK_ENOMEM)
        return report_nomem(ld);
    if (rc != REDLOCK_OK && url != NULL) {
        node_key_path(path, sizeof(path), index, NK_URL);
        return report(ld, REDLOCK_ECONFIG, &spec->values[NK_URL]->start_mark, path,
                      "invalid %s (no spaces or control characters, and not too long)",
                      host ? "host" : "socket path");
    }
    if (rc != REDLOCK_OK) {
        /* Duplicates and the node count are ruled out above: the text is bad. */
        enum node_key key = host ? NK_HOST : NK_SOCKET;
        const yaml_node_t *value = spec->values[key] ? spec->values[key] : node;
        node_key_path(path, sizeof(path), index, key);
        return report(ld, REDLOCK_ECONFIG, &value->start_mark, path,
                      "invalid %s %s (no spaces or control characters, and not too long)",
                      host ? "host" : "socket path", describe_value(value, shown, sizeof(shown)));
    }
    ld->node_lines[*added] = node->start_mark.line + 1;
    return REDLOCK_OK;
}

static int set_node_credentials(const rl_yaml_loader *ld, const node_spec *spec, size_t index,
                                size_t added, const char *password, enum node_key source);

/* Sets the node's AUTH credentials, from its url or its keys. The password
 * is tried alone first so that a refusal can be blamed on the right key. */
static int set_node_auth(rl_yaml_loader *ld, const node_spec *spec, size_t index,
                         size_t added)
{
    const char *password = spec->url.password;
    enum node_key source = NK_URL;
    char *file = NULL;
    size_t file_len = 0;
    int rc = REDLOCK_OK;
    if (password == NULL) {
        rc = node_password(ld, spec, index, &password, &file, &file_len);
        source = spec->set[NK_PASSWORD]        ? NK_PASSWORD
                 : spec->set[NK_PASSWORD_FILE] ? NK_PASSWORD_FILE
                                               : NK_PASSWORD_ENV;
        if (rc == REDLOCK_OK && password == NULL && ld->global_password != NULL) {
            password = ld->global_password; /* checked when read: set_auth takes it */
            source = NK_COUNT;                  /* the config-wide password_file */
        }
    }
    if (rc == REDLOCK_OK && password != NULL)
        rc = set_node_credentials(ld, spec, index, added, password, source);
    if (source == NK_URL || source == NK_PASSWORD)
        ld->inline_password = ld->inline_password || password != NULL;
    rl_secret_file_free(file, file_len);
    return rc;
}

/* Sets the node's password, then its user with it, blaming a refusal on
 * the key that gave it. */
static int set_node_credentials(const rl_yaml_loader *ld, const node_spec *spec, size_t index,
                                size_t added, const char *password, enum node_key source)
{
    char path[RL_YAML_PATH_BUF];
    int rc = redlock_config_node_set_auth(ld->cfg, added, NULL, password);
    if (rc == REDLOCK_ENOMEM)
        return report_nomem(ld);
    if (rc != REDLOCK_OK && source == NK_COUNT) /* read and checked: not expected */
        return report(ld, REDLOCK_ECONFIG, &ld->top_keys[TOP_PASSWORD_FILE]->start_mark,
                      "password_file", "the password is too long");
    if (rc != REDLOCK_OK) {
        node_key_path(path, sizeof(path), index, source);
        return report(ld, REDLOCK_ECONFIG, &spec->values[source]->start_mark, path,
                      "the password is too long");
    }
    const char *user = spec->url.user;
    enum node_key user_source = NK_URL;
    if (user == NULL && spec->set[NK_USERNAME]) {
        user = spec->strings[NK_USERNAME];
        user_source = NK_USERNAME;
    }
    if (user == NULL)
        return REDLOCK_OK;
    rc = redlock_config_node_set_auth(ld->cfg, added, user, password);
    if (rc == REDLOCK_ENOMEM)
        return report_nomem(ld);
    if (rc != REDLOCK_OK) {
        node_key_path(path, sizeof(path), index, user_source);
        return report(ld, REDLOCK_ECONFIG, &spec->values[user_source]->start_mark, path,
                      "the username is too long");
    }
    return REDLOCK_OK;
}

/* Reports what redlock_config_set_tls() or redlock_config_node_set_tls()
 * refused (rc), at mark and path. */
static int report_tls(const rl_yaml_loader *ld, int rc, const yaml_mark_t *mark, const char *path)
{
    if (rc == REDLOCK_ENOMEM)
        return report_nomem(ld);
    if (rc == REDLOCK_ECONFIG)
        return report(ld, REDLOCK_ECONFIG, mark, path, "%s", rl_tls_missing());
    return report(ld, REDLOCK_ECONFIG, mark, path,
                  "a TLS path longer than %d bytes, or a server name longer than %d bytes or "
                  "with spaces",
                  RL_TLS_PATH_MAX, RL_HOST_MAX);
}

/* The TLS options of the TLS keys read: strings[k] and the switch. */
static redlock_tls_options tls_options(const bool *set, const char *const *strings,
                                       const int64_t *tls_switch, int unset)
{
    redlock_tls_options o = {.enabled = set[TK_TLS] ? (int)*tls_switch : unset};
    o.ca_file = set[TK_CA_FILE] ? strings[TK_CA_FILE] : NULL;
    o.ca_dir = set[TK_CA_DIR] ? strings[TK_CA_DIR] : NULL;
    o.cert_file = set[TK_CERT_FILE] ? strings[TK_CERT_FILE] : NULL;
    o.key_file = set[TK_KEY_FILE] ? strings[TK_KEY_FILE] : NULL;
    o.server_name = set[TK_SERVER_NAME] ? strings[TK_SERVER_NAME] : NULL;
    return o;
}

/* Sets the node's own TLS options, from its TLS keys and a rediss:// url. */
static int set_node_tls(const rl_yaml_loader *ld, const node_spec *spec, size_t index,
                        size_t added)
{
    const yaml_node_t *first = spec->rediss ? spec->values[NK_URL] : NULL;
    enum node_key first_key = NK_URL;
    for (int k = NK_TLS; k < NK_COUNT; k++) {
        if (spec->set[k] && (first == NULL || spec->keys[k]->start_mark.index <
                                                  first->start_mark.index)) {
            first = spec->keys[k];
            first_key = (enum node_key)k;
        }
    }
    if (first == NULL)
        return REDLOCK_OK;
    redlock_tls_options o = tls_options(&spec->set[NK_TLS], &spec->strings[NK_TLS],
                                        &spec->ints[NK_TLS], RL_TLS_INHERIT);
    if (spec->rediss)
        o.enabled = 1;
    char path[RL_YAML_PATH_BUF];
    node_key_path(path, sizeof(path), index, first_key);
    if (o.enabled == 1 && spec->set[NK_SOCKET])
        return report(ld, REDLOCK_ECONFIG, &first->start_mark, path,
                      "TLS is for TCP masters (host or url), not socket");
    int rc = redlock_config_node_set_tls(ld->cfg, added, &o);
    return rc == REDLOCK_OK ? rc : report_tls(ld, rc, &first->start_mark, path);
}

/* Loads nodes[index] and adds it to the config. */
static int load_node(rl_yaml_loader *ld, const yaml_node_t *node, size_t index)
{
    char path[RL_YAML_PATH_BUF];
    node_path(path, sizeof(path), index);
    if (node->type != YAML_MAPPING_NODE) {
        char got[RL_YAML_ECHO_BUF];
        return report(ld, REDLOCK_ECONFIG, &node->start_mark, path,
                      "expected a mapping, got %s", describe_value(node, got, sizeof(got)));
    }
    if (index >= REDLOCK_MAX_NODES)
        return report(ld, REDLOCK_ECONFIG, &node->start_mark, path,
                      "too many nodes (at most %d)", REDLOCK_MAX_NODES);
    node_spec spec;
    int rc = read_node_spec(ld, &ld->doc, node, index, &spec);
    if (rc == REDLOCK_OK)
        rc = check_node_spec(ld, node, &spec, index);
    size_t added = 0;
    if (rc == REDLOCK_OK)
        rc = add_node_address(ld, node, &spec, index, &added);
    if (rc == REDLOCK_OK)
        rc = set_node_auth(ld, &spec, index, added);
    bool has_db = spec.url.has_db || spec.set[NK_DB];
    int db = spec.url.has_db ? spec.url.db : (int)spec.ints[NK_DB];
    spec.rediss = spec.url.scheme == RL_URL_REDISS && spec.set[NK_URL];
    rl_url_clear(&spec.url);
    if (rc != REDLOCK_OK)
        return rc;
    /* Ranges were checked when reading: these cannot fail. */
    if (has_db)
        redlock_config_node_set_db(ld->cfg, added, db);
    int64_t connect_ms = spec.set[NK_CONNECT_TIMEOUT] ? spec.ints[NK_CONNECT_TIMEOUT] : 0;
    int64_t command_ms = spec.set[NK_COMMAND_TIMEOUT] ? spec.ints[NK_COMMAND_TIMEOUT] : 0;
    redlock_config_node_set_timeouts(ld->cfg, added, connect_ms, command_ms); /* 0: unset */
    if (spec.set[NK_DURABLE])
        redlock_config_node_set_durable(ld->cfg, added, (int)spec.ints[NK_DURABLE]);
    rc = set_node_tls(ld, &spec, index, added);
    if (rc != REDLOCK_OK)
        return rc;
    ld->node_timeout_keys[added][0] = spec.keys[NK_CONNECT_TIMEOUT];
    ld->node_timeout_keys[added][1] = spec.keys[NK_COMMAND_TIMEOUT];
    return REDLOCK_OK;
}

/* The value of `nodes`: a non-empty sequence of node mappings. */
static int load_nodes(rl_yaml_loader *ld, const yaml_node_t *value)
{
    const char *path = "nodes";
    if (is_null_scalar(value))
        return report(ld, REDLOCK_ECONFIG, &value->start_mark, path,
                      "at least one node is required");
    if (value->type != YAML_SEQUENCE_NODE) {
        char got[RL_YAML_ECHO_BUF];
        return report(ld, REDLOCK_ECONFIG, &value->start_mark, path,
                      "expected a sequence of nodes, got %s",
                      describe_value(value, got, sizeof(got)));
    }
    if (value->data.sequence.items.start == value->data.sequence.items.top)
        return report(ld, REDLOCK_ECONFIG, &value->start_mark, path,
                      "at least one node is required");
    size_t index = 0;
    for (yaml_node_item_t *item = value->data.sequence.items.start;
         item < value->data.sequence.items.top; item++, index++) {
        int rc = load_node(ld, yaml_document_get_node(&ld->doc, *item), index);
        if (rc != REDLOCK_OK)
            return rc;
    }
    return REDLOCK_OK;
}

/* ------------------------------------------------------------------------ */
/* The top level                                                             */

/* One config-wide TLS key's value into ld->tls, set on the config once
 * every top-level key is read. */
static int load_top_tls(rl_yaml_loader *ld, size_t k, const yaml_node_t *value)
{
    const char *name = node_key_names[NK_TLS + k];
    if (k == TK_TLS) {
        int64_t on = 0;
        int rc = read_integer_value(ld, value, name, 0, 1, &on);
        ld->tls.enabled = (int)on;
        return rc;
    }
    const char *text = NULL;
    int rc = read_string_value(ld, value, name, &text);
    const char **fields[TK_COUNT] = {NULL,           &ld->tls.ca_file,  &ld->tls.ca_dir,
                                     &ld->tls.cert_file, &ld->tls.key_file, &ld->tls.server_name};
    *fields[k] = text;
    return rc;
}

/* Sets the config-wide TLS options of the file, if it has any. */
static int set_top_tls(const rl_yaml_loader *ld)
{
    const yaml_node_t *first = NULL;
    size_t first_key = 0;
    for (size_t k = 0; k < TK_COUNT; k++) {
        const yaml_node_t *key = ld->top_keys[TOP_TLS + k];
        if (key != NULL && (first == NULL || key->start_mark.index < first->start_mark.index)) {
            first = key;
            first_key = k;
        }
    }
    if (first == NULL)
        return REDLOCK_OK;
    int rc = redlock_config_set_tls(ld->cfg, &ld->tls);
    return rc == REDLOCK_OK ? rc
                            : report_tls(ld, rc, &first->start_mark, node_key_names[NK_TLS + first_key]);
}

/* clock_check: off, warn or enforce (or the number of one). */
static int load_clock_check(const rl_yaml_loader *ld, const yaml_node_t *value)
{
    static const char *const names[] = {"off", "warn", "enforce"};
    for (int64_t i = 0; i < 3; i++)
        if (scalar_equals(value, names[i]))
            return redlock_config_set(ld->cfg, REDLOCK_CLOCK_CHECK, i);
    int64_t number = 0;
    if (parse_integer(value, &number) && number >= 0 && number <= 2)
        return redlock_config_set(ld->cfg, REDLOCK_CLOCK_CHECK, number);
    char got[RL_YAML_ECHO_BUF];
    return report(ld, REDLOCK_ECONFIG, &value->start_mark, "clock_check",
                  "expected off, warn or enforce, got %s", describe_value(value, got, sizeof(got)));
}

/* A setting given both as `NAME_ms` and as its duration `NAME`: an error at
 * the second, naming both lines. */
static int check_one_form(const rl_yaml_loader *ld, size_t setting)
{
    const yaml_node_t *ms_key = ld->top_keys[setting];
    const yaml_node_t *duration_key = ld->top_keys[TOP_DURATION + setting];
    if (ms_key == NULL || duration_key == NULL)
        return REDLOCK_OK;
    const yaml_node_t *second =
        ms_key->start_mark.index > duration_key->start_mark.index ? ms_key : duration_key;
    const char *name = rl_setting_table[setting].name;
    return report(ld, REDLOCK_ECONFIG, &second->start_mark, NULL,
                  "%.*s (line %zu) and %s (line %zu) set the same setting: give one",
                  (int)(strlen(name) - 3), name, duration_key->start_mark.line + 1, name,
                  ms_key->start_mark.line + 1);
}

/* A duration key's value (`ttl: 30s`): the setting in milliseconds. */
static int load_duration(const rl_yaml_loader *ld, size_t setting, const yaml_node_t *value)
{
    const rl_setting_info *info = &rl_setting_table[setting];
    char path[RL_YAML_PATH_BUF];
    snprintf(path, sizeof(path), "%.*s", (int)(strlen(info->name) - 3), info->name);
    int64_t ms = 0;
    int rc = value->type == YAML_SCALAR_NODE && !scalar_has_nul(value)
                 ? rl_duration_parse((const char *)value->data.scalar.value, info->min,
                                     info->max, &ms)
                 : RL_DURATION_INVALID;
    if (rc == 0) {
        redlock_config_set(ld->cfg, (redlock_setting)setting, ms); /* in range */
        return REDLOCK_OK;
    }
    char got[RL_YAML_ECHO_BUF];
    describe_value(value, got, sizeof(got));
    if (rc == RL_DURATION_TOO_FINE)
        return report(ld, REDLOCK_ECONFIG, &value->start_mark, path,
                      "below 1 ms, the finest duration it takes, got %s", got);
    return report(ld, REDLOCK_ECONFIG, &value->start_mark, path,
                  "expected a duration (30s, 1m30s, 250ms; a bare number is seconds) from "
                  "%" PRId64 " ms to %" PRId64 " ms, got %s",
                  info->min, info->max, got);
}

/* One top-level key's value: a setting, drift_factor, nodes, a TLS key or
 * a setting's duration form. */
static int load_top_value(rl_yaml_loader *ld, size_t key, const yaml_node_t *value)
{
    if (key >= TOP_DURATION || (key < RL_SETTING_COUNT && ld->top_keys[TOP_DURATION + key])) {
        size_t setting = key >= TOP_DURATION ? key - TOP_DURATION : key;
        int rc = check_one_form(ld, setting);
        if (rc != REDLOCK_OK)
            return rc;
        if (key >= TOP_DURATION)
            return is_null_scalar(value) ? REDLOCK_OK : load_duration(ld, setting, value);
    }
    if (key == TOP_NODES)
        return load_nodes(ld, value);
    if (key == TOP_PASSWORD_FILE)
        return REDLOCK_OK; /* read before the nodes (read_global_password()) */
    if (is_null_scalar(value))
        return REDLOCK_OK; /* not set: keep the default */
    if (key >= TOP_TLS)
        return load_top_tls(ld, key - TOP_TLS, value);
    if (key >= RL_SETTING_COUNT) { /* drift_factor */
        double factor = 0;
        if (!parse_number(ld, value, &factor) ||
            redlock_config_set_drift_factor(ld->cfg, factor) != REDLOCK_OK) {
            char got[RL_YAML_ECHO_BUF];
            return report(ld, REDLOCK_ECONFIG, &value->start_mark, "drift_factor",
                          "expected a number from 0 to less than 1, got %s",
                          describe_value(value, got, sizeof(got)));
        }
        return REDLOCK_OK;
    }
    const rl_setting_info *info = &rl_setting_table[key]; /* a setting */
    int64_t number = 0;
    if (key == REDLOCK_CLOCK_CHECK)
        return load_clock_check(ld, value);
    int rc = read_integer_value(ld, value, info->name, info->min, info->max, &number);
    if (rc == REDLOCK_OK)
        redlock_config_set(ld->cfg, (redlock_setting)key, number); /* in range: cannot fail */
    return rc;
}

/* Reports a config that can never work (config_check.c) at what is to
 * blame: the node's own timeout, else the first key at fault that the file
 * sets, else the top-level mapping. */
static int report_problem(const rl_yaml_loader *ld, const yaml_node_t *root,
                          const rl_config_problem *problem)
{
    const yaml_mark_t *mark = &root->start_mark;
    const yaml_node_t *key = NULL;
    if (problem->node >= 0)
        key = ld->node_timeout_keys[problem->node]
                                   [problem->node_key == REDLOCK_CONNECT_TIMEOUT_MS ? 0 : 1];
    for (size_t i = 0; key == NULL && i < problem->key_count; i++) {
        key = ld->top_keys[problem->keys[i]];
        if (key == NULL && problem->keys[i] < RL_SETTING_COUNT)
            key = ld->top_keys[TOP_DURATION + problem->keys[i]]; /* `ttl: 30s` */
    }
    if (key != NULL)
        mark = &key->start_mark;
    return report(ld, REDLOCK_ECONFIG, mark, NULL, "%s", problem->text);
}

/* The config-wide password_file, read before any node, wherever it is in
 * the mapping: the password of the nodes that give none of their own. */
static int read_global_password(rl_yaml_loader *ld, const yaml_node_t *root)
{
    for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
         pair < root->data.mapping.pairs.top; pair++) {
        const yaml_node_t *key = yaml_document_get_node(&ld->doc, pair->key);
        const yaml_node_t *value = yaml_document_get_node(&ld->doc, pair->value);
        if (!scalar_equals(key, "password_file") || is_null_scalar(value))
            continue;
        const char *name = NULL;
        int rc = read_string_value(ld, value, "password_file", &name);
        if (rc == REDLOCK_OK)
            rc = read_password_file(ld, "password_file", &value->start_mark, name,
                                    &ld->global_password, &ld->global_len);
        return rc; /* the first: a second is a duplicate key, reported in order */
    }
    return REDLOCK_OK;
}

/* The top-level key names, indexed by TOP_*: the settings', the others,
 * then at TOP_DURATION + setting each `_ms` setting's duration form (NULL
 * for the other settings). */
#define RL_YAML_DURATION_NAME 64
typedef struct top_key_names {
    const char *names[TOP_ALL_KEYS];
    char durations[RL_SETTING_COUNT][RL_YAML_DURATION_NAME];
} top_key_names;

static void top_key_names_fill(top_key_names *top)
{
    const char **names = top->names;
    char (*duration_names)[RL_YAML_DURATION_NAME] = top->durations;
    memset(top, 0, sizeof(*top));
    for (size_t i = 0; i < RL_SETTING_COUNT; i++) {
        names[i] = rl_setting_table[i].name;
        size_t len = strlen(names[i]);
        if (len > 3 && len < RL_YAML_DURATION_NAME + 3 &&
            strcmp(names[i] + len - 3, "_ms") == 0) {
            memcpy(duration_names[i], names[i], len - 3);
            duration_names[i][len - 3] = '\0';
            names[TOP_DURATION + i] = duration_names[i];
        }
    }
    names[TOP_DRIFT_FACTOR] = "drift_factor";
    names[TOP_NODES] = "nodes";
    names[TOP_PASSWORD_FILE] = "password_file";
    names[TOP_TLS] = "tls";
    names[TOP_TLS_CA_FILE] = "tls_ca_file";
    names[TOP_TLS_CA_DIR] = "tls_ca_dir";
    names[TOP_TLS_CERT_FILE] = "tls_cert_file";
    names[TOP_TLS_KEY_FILE] = "tls_key_file";
    names[TOP_TLS_SERVER_NAME] = "tls_server_name";
}

const char *rl_yaml_key_name(bool node, size_t i, char *buf, size_t size)
{
    const char *name = NULL;
    top_key_names top; /* a duration form's name lives in it: in scope to the copy */
    if (node) {
        name = i < NK_COUNT ? node_key_names[i] : NULL;
    } else if (i < TOP_ALL_KEYS) {
        top_key_names_fill(&top);
        name = top.names[i];
    }
    if (name == NULL || size == 0)
        return NULL;
    snprintf(buf, size, "%s", name);
    return buf;
}

size_t rl_yaml_key_count(bool node)
{
    return node ? NK_COUNT : TOP_ALL_KEYS;
}

/* Builds ld->cfg from the document's root. */
static int load_root(rl_yaml_loader *ld)
{
    const yaml_node_t *root = yaml_document_get_root_node(&ld->doc);
    static const yaml_mark_t file_start = {0, 0, 0};
    if (root == NULL || is_null_scalar(root)) /* empty: there can be no node */
        return report(ld, REDLOCK_ECONFIG, root ? &root->start_mark : &file_start, "nodes",
                      "at least one node is required");
    if (root->type != YAML_MAPPING_NODE) {
        char got[RL_YAML_ECHO_BUF];
        return report(ld, REDLOCK_ECONFIG, &root->start_mark, NULL,
                      "expected a mapping at the top level, got %s",
                      describe_value(root, got, sizeof(got)));
    }
    top_key_names top;
    top_key_names_fill(&top);
    const char *const *names = top.names;

    int rc = read_global_password(ld, root);
    if (rc != REDLOCK_OK)
        return rc;
    for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
         pair < root->data.mapping.pairs.top; pair++) {
        const yaml_node_t *key = yaml_document_get_node(&ld->doc, pair->key);
        size_t index = 0;
        rc = check_key(ld, key, NULL, names, TOP_ALL_KEYS, ld->top_keys, &index);
        if (rc == REDLOCK_OK)
            rc = load_top_value(ld, index, yaml_document_get_node(&ld->doc, pair->value));
        if (rc != REDLOCK_OK)
            return rc;
    }
    if (ld->top_keys[TOP_NODES] == NULL)
        return report(ld, REDLOCK_ECONFIG, &root->start_mark, "nodes",
                      "at least one node is required");
    rc = set_top_tls(ld);
    if (rc != REDLOCK_OK)
        return rc;
    rl_config_problem problem;
    if (rl_config_find_problem(ld->cfg, &problem))
        return report_problem(ld, root, &problem);
    return REDLOCK_OK;
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */

/*
 * A first pass over the events: rejects anchors and aliases (they would turn
 * the tree into a graph, and expansion attacks are best not entertained),
 * more than one document and deep nesting, each at its exact position, and
 * any syntax error. Events come with bounded lookahead, so this stops early
 * on hostile input, before the document is built.
 */
static int check_events(const rl_yaml_loader *ld, const unsigned char *text, size_t len)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return report_nomem(ld);
    yaml_parser_set_input_string(&parser, text, len);
    int rc = REDLOCK_OK;
    int documents = 0;
    int depth = 0;
    bool done = false;
    while (rc == REDLOCK_OK && !done) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            rc = report_parser_error(ld, &parser, text, len);
            break;
        }
        const yaml_char_t *anchor = NULL;
        if (event.type == YAML_SCALAR_EVENT)
            anchor = event.data.scalar.anchor;
        else if (event.type == YAML_SEQUENCE_START_EVENT)
            anchor = event.data.sequence_start.anchor;
        else if (event.type == YAML_MAPPING_START_EVENT)
            anchor = event.data.mapping_start.anchor;
        if (event.type == YAML_ALIAS_EVENT || anchor != NULL)
            rc = report(ld, REDLOCK_ECONFIG, &event.start_mark, NULL,
                        "anchors and aliases are not supported");
        else if (event.type == YAML_DOCUMENT_START_EVENT && ++documents > 1)
            rc = report(ld, REDLOCK_ECONFIG, &event.start_mark, NULL,
                        "only one YAML document is allowed");
        else if ((event.type == YAML_SEQUENCE_START_EVENT ||
                  event.type == YAML_MAPPING_START_EVENT) &&
                 ++depth > RL_YAML_MAX_DEPTH)
            rc = report(ld, REDLOCK_ECONFIG, &event.start_mark, NULL,
                        "nested too deeply (more than %d levels)", RL_YAML_MAX_DEPTH);
        else if (event.type == YAML_SEQUENCE_END_EVENT || event.type == YAML_MAPPING_END_EVENT)
            depth--;
        done = (event.type == YAML_STREAM_END_EVENT);
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return rc;
}

/* Overwrites the document's scalars: passwords among them. libyaml's own
 * intermediate buffers are out of reach; this is best effort. */
static void wipe_document(yaml_document_t *doc)
{
    for (yaml_node_t *node = doc->nodes.start; node < doc->nodes.top; node++) {
        if (node->type == YAML_SCALAR_NODE)
            explicit_bzero(node->data.scalar.value, node->data.scalar.length);
    }
}

/* Parses text (the whole input) and builds *out from it. */
static int load_text(redlock_config **out, const unsigned char *text, size_t len,
                     const char *name, char *errbuf, size_t errlen, bool *inline_password)
{
    rl_yaml_loader ld = {.name = name, .errbuf = errbuf, .errlen = errlen};
    if (len > RL_YAML_MAX_BYTES)
        return report(&ld, REDLOCK_ECONFIG, NULL, NULL,
                      "too large: %zu bytes (the limit is 16 MiB)", len);
    ld.c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (ld.c_locale == (locale_t)0)
        return report_nomem(&ld);

    int rc = check_events(&ld, text, len);
    bool parsed = false;
    yaml_parser_t parser;
    if (rc == REDLOCK_OK) {
        if (!yaml_parser_initialize(&parser)) {
            rc = report_nomem(&ld);
        } else {
            yaml_parser_set_input_string(&parser, text, len);
            parsed = yaml_parser_load(&parser, &ld.doc);
            if (!parsed)
                rc = report_parser_error(&ld, &parser, text, len);
            yaml_parser_delete(&parser);
        }
    }
    if (rc == REDLOCK_OK) {
        rc = redlock_config_new(&ld.cfg);
        if (rc != REDLOCK_OK)
            rc = report_nomem(&ld);
    }
    if (rc == REDLOCK_OK)
        rc = load_root(&ld);
    rl_secret_file_free(ld.global_password, ld.global_len);

    if (parsed) {
        wipe_document(&ld.doc);
        yaml_document_delete(&ld.doc);
    }
    freelocale(ld.c_locale);
    if (rc != REDLOCK_OK) {
        redlock_config_free(ld.cfg);
        return rc;
    }
    *out = ld.cfg;
    if (inline_password != NULL)
        *inline_password = ld.inline_password;
    if (errbuf != NULL && errlen > 0)
        errbuf[0] = '\0';
    return REDLOCK_OK;
}

/* ------------------------------------------------------------------------ */
/* Public entry points                                                       */

int redlock_config_load_file(redlock_config **out, const char *path, char *errbuf,
                             size_t errlen)
{
    rl_yaml_loader ld = {.name = path ? path : "<null>", .errbuf = errbuf, .errlen = errlen};
    if (out != NULL)
        *out = NULL;
    if (out == NULL || path == NULL)
        return report(&ld, REDLOCK_EINVAL, NULL, NULL, "invalid argument: %s is NULL",
                      out == NULL ? "out" : "path");
    char *text = NULL;
    size_t len = 0;
    char problem[REDLOCK_ERRBUF_SIZE];
    int rc = rl_secret_file_read(path, RL_YAML_MAX_BYTES, &text, &len, problem, sizeof(problem));
    if (rc != REDLOCK_OK)
        return report(&ld, rc, NULL, NULL, "%s", problem);
    bool inline_password = false;
    rc = load_text(out, (const unsigned char *)text, len, path, errbuf, errlen, &inline_password);
    rl_secret_file_free(text, len);
    /* Others may read the password it holds: warned about when a client
     * starts, and told to a caller who asks (redlock_config_password_exposed()). */
    struct stat st;
    if (rc == REDLOCK_OK && inline_password && stat(path, &st) == 0 && (st.st_mode & S_IROTH))
        (*out)->exposed_path = strdup(path); /* NULL if out of memory: a warning lost */
    return rc;
}

int redlock_config_load_string(redlock_config **out, const char *text, size_t len,
                               const char *name, char *errbuf, size_t errlen)
{
    rl_yaml_loader ld = {.name = name ? name : "<string>", .errbuf = errbuf, .errlen = errlen};
    if (out != NULL)
        *out = NULL;
    if (out == NULL || text == NULL)
        return report(&ld, REDLOCK_EINVAL, NULL, NULL, "invalid argument: %s is NULL",
                      out == NULL ? "out" : "text");
    return load_text(out, (const unsigned char *)text, len, ld.name, errbuf, errlen, NULL);
}
