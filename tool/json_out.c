/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every JSON object the tool prints (--json), built with jansson so that
 * the output is always valid JSON in valid UTF-8, one object on one line.
 *
 * Byte strings (resources, values) are any bytes. Each goes out under one
 * of two keys: NAME, a string, when the bytes are valid UTF-8 without NUL;
 * otherwise NAME_base64, the bytes in standard base64 (RFC 4648, padded).
 * Texts for people (master names, errors) are valid UTF-8 as they are, or
 * shown as the text output shows them (\xNN for control and non-ASCII
 * bytes). Numbers that do not exist are null. docs/cli.md has the keys.
 */
#include "cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Valid UTF-8 without NUL (jansson refuses a string of invalid UTF-8). */
static bool is_text(const char *s, size_t len)
{
    if (memchr(s, '\0', len) != NULL)
        return false;
    json_t *probe = json_stringn(s, len);
    bool valid = probe != NULL;
    json_decref(probe);
    return valid;
}

/* One line of compact JSON, obj consumed; NULL when out of memory. */
static char *finish(json_t *obj)
{
    char *out = obj ? json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(obj);
    return out;
}

char *cli_base64(const unsigned char *bytes, size_t len)
{
    /* The 64 digits, then the padding. */
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
    char *out = malloc((len + 2) / 3 * 4 + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        unsigned long group = (unsigned long)bytes[i] << 16;
        if (i + 1 < len)
            group |= (unsigned long)bytes[i + 1] << 8;
        if (i + 2 < len)
            group |= bytes[i + 2];
        out[o++] = digits[(group >> 18) & 63];
        out[o++] = digits[(group >> 12) & 63];
        out[o++] = digits[i + 1 < len ? (group >> 6) & 63 : 64];
        out[o++] = digits[i + 2 < len ? group & 63 : 64];
    }
    out[o] = '\0';
    return out;
}

/* NAME or NAME_base64 (see the top). */
static void set_bytes(json_t *obj, const char *name, const char *bytes, size_t len)
{
    json_t *text = memchr(bytes, '\0', len) == NULL ? json_stringn(bytes, len) : NULL;
    if (text != NULL) {
        json_object_set_new(obj, name, text);
        return;
    }
    char key[64];
    snprintf(key, sizeof(key), "%s_base64", name);
    char *encoded = cli_base64((const unsigned char *)bytes, len);
    json_object_set_new(obj, key, encoded ? json_string(encoded) : json_null());
    free(encoded);
}

/* A text for people, or null. */
static json_t *text_or_null(const char *s)
{
    if (s == NULL)
        return json_null();
    if (is_text(s, strlen(s)))
        return json_string(s);
    char shown[1024];
    return json_string(cli_shown(shown, sizeof(shown), s));
}

static json_t *number_or_null(bool exists, int64_t n)
{
    return exists ? json_integer((json_int_t)n) : json_null();
}

/* Why a master failed (out of reach, refusing us, an error reply), or null
 * when it answered (ok, held, absent) or had yet to (pending). */
static json_t *master_error(const redlock_master_result *m)
{
    if (m->outcome == REDLOCK_MASTER_OK || m->outcome == REDLOCK_MASTER_HELD ||
        m->outcome == REDLOCK_MASTER_ABSENT || m->outcome == REDLOCK_MASTER_PENDING)
        return json_null();
    return text_or_null(m->detail ? m->detail : redlock_master_outcome_name(m->outcome));
}

/* What the client has proven of a master's clock (docs/safety.md). */
static json_t *master_clock(const redlock_master_result *m)
{
    json_t *rate_max = m->clock_rate_hi >= 0 ? json_real(m->clock_rate_hi) : json_null();
    json_t *rate_min = m->clock_rate_lo > 0 ? json_real(m->clock_rate_lo) : json_null();
    return json_pack("{s:s, s:b, s:o, s:o}", "state", redlock_clock_state_name(m->clock_state),
                     "slow", m->clock_slow, "rate_min", rate_min, "rate_max", rate_max);
}

/* The counts and per-master outcomes of a lock operation's result. */
static void set_outcomes(json_t *obj, const redlock_result *r)
{
    json_object_set_new(obj, "masters_ok_at_decision",
                        number_or_null(r != NULL, r ? r->masters_locked : 0));
    json_object_set_new(obj, "master_count", number_or_null(r != NULL, r ? r->master_count : 0));
    json_object_set_new(obj, "quorum", number_or_null(r != NULL, r ? r->quorum : 0));
    json_t *masters = json_array();
    for (unsigned i = 0; r != NULL && i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        json_array_append_new(masters,
                              json_pack("{s:o, s:s, s:o}", "node", text_or_null(m->name),
                                        "outcome", redlock_master_outcome_name(m->outcome),
                                        "error", master_error(m)));
    }
    json_object_set_new(obj, "masters", masters);
}

/* "resources": every one as a string, when each is text; otherwise
 * "resources_base64", every one in base64 (as set_bytes() does for one). */
static void set_resources(json_t *obj, const cli_resources *set)
{
    bool all_text = true;
    for (size_t i = 0; i < set->count && all_text; i++)
        all_text = is_text(set->names[i], set->lens[i]);
    json_t *list = json_array();
    for (size_t i = 0; i < set->count; i++) {
        if (all_text) {
            json_array_append_new(list, json_stringn(set->names[i], set->lens[i]));
            continue;
        }
        char *encoded = cli_base64((const unsigned char *)set->names[i], set->lens[i]);
        json_array_append_new(list, encoded ? json_string(encoded) : json_null());
        free(encoded);
    }
    json_object_set_new(obj, all_text ? "resources" : "resources_base64", list);
}

/* The first resource as "resource" (as with one), then all of them. */
static json_t *with_status(const cli_resources *set, int status)
{
    json_t *obj = json_object();
    set_bytes(obj, "resource", set->names[0], set->lens[0]);
    set_resources(obj, set);
    json_object_set_new(obj, "status", json_string(redlock_status_name(status)));
    json_object_set_new(obj, "message", json_string(redlock_strerror(status)));
    return obj;
}

char *cli_json_acquire(const cli_resources *set, int status, const redlock_lock *lock,
                       const redlock_result *r)
{
    bool ok = status == REDLOCK_OK && lock != NULL;
    json_t *obj = with_status(set, status);
    json_object_set_new(obj, "acquired", json_boolean(ok));
    if (ok)
        json_object_set_new(obj, "value", json_string(redlock_lock_value(lock, NULL)));
    else
        json_object_set_new(obj, "value", json_null());
    json_object_set_new(obj, "validity_ms", number_or_null(ok, ok ? redlock_lock_validity_ms(lock) : 0));
    json_object_set_new(obj, "ttl_ms", number_or_null(ok, ok ? redlock_lock_ttl_ms(lock) : 0));
    json_object_set_new(obj, "elapsed_ms", number_or_null(r != NULL, r ? r->elapsed_ms : 0));
    json_object_set_new(obj, "attempts", number_or_null(r != NULL, r ? r->attempts : 0));
    uint64_t token = ok ? redlock_lock_fencing_token(lock) : 0;
    json_object_set_new(obj, "fencing_token",
                        token != 0 ? json_integer((json_int_t)token) : json_null());
    set_outcomes(obj, r);
    return finish(obj);
}

char *cli_json_release(const cli_resources *set, int status, const redlock_result *r)
{
    json_t *obj = with_status(set, status);
    json_object_set_new(obj, "released", json_boolean(status == REDLOCK_OK));
    set_outcomes(obj, r);
    return finish(obj);
}

char *cli_json_extend(const cli_resources *set, int status, const redlock_lock *lock,
                      const redlock_result *r)
{
    bool ok = status == REDLOCK_OK;
    json_t *obj = with_status(set, status);
    json_object_set_new(obj, "extended", json_boolean(ok));
    json_object_set_new(obj, "validity_ms", number_or_null(ok, ok ? redlock_lock_validity_ms(lock) : 0));
    int64_t ttl = redlock_lock_ttl_ms(lock); /* 0: the config's, not known here */
    json_object_set_new(obj, "ttl_ms", number_or_null(ttl > 0, ttl));
    set_outcomes(obj, r);
    return finish(obj);
}

static bool reachable(const redlock_master_result *m)
{
    return m->outcome == REDLOCK_MASTER_OK;
}

/* The fencing token a quorum of masters show, or 0. */
static uint64_t token_of_a_quorum(const redlock_result *r)
{
    for (unsigned i = 0; i < r->master_count; i++) {
        uint64_t token = r->masters[i].fencing_token;
        unsigned shown = 0;
        for (unsigned j = 0; token != 0 && j < r->master_count; j++)
            shown += r->masters[j].fencing_token == token;
        if (shown >= r->quorum)
            return token;
    }
    return 0;
}

/* A master's counters (redlock_client_stats()): what this command sent it
 * and got back, its connection, and the time its replies took. */
static json_t *master_stats(const redlock_master_stats *m)
{
    json_t *outcomes = json_object();
    for (int o = 0; o < REDLOCK_STATS_OUTCOMES; o++)
        if (m->outcomes[o] > 0)
            json_object_set_new(outcomes, redlock_master_outcome_name(o),
                                json_integer((json_int_t)m->outcomes[o]));
    json_t *latency = json_array();
    for (int b = 0; b < REDLOCK_STATS_BUCKETS; b++)
        json_array_append_new(latency, json_integer((json_int_t)m->latency_us[b]));
    return json_pack("{s:I, s:o, s:I, s:I, s:s, s:o, s:I, s:I, s:I}", "requests",
                     (json_int_t)m->requests, "outcomes", outcomes, "late", (json_int_t)m->late,
                     "connects", (json_int_t)m->connects, "state",
                     redlock_connection_state_name(m->state), "latency_us_buckets", latency,
                     "latency_sum_us", (json_int_t)m->latency_sum_us, "in_flight",
                     (json_int_t)m->in_flight, "queued", (json_int_t)m->queued);
}

/* A master's restart state (docs/safety.md, "Masters restarted empty"):
 * "counts", "excluded" or "unknown", and the milliseconds left of its
 * exclusion (null when it is not excluded). */
static void set_restart(json_t *o, const redlock_stats *stats, unsigned i)
{
    const redlock_master_restart *r =
        stats != NULL && i < stats->master_count ? &stats->restarts[i] : NULL;
    const char *state = r == NULL                                    ? NULL
                        : r->state == REDLOCK_RESTART_COUNTS   ? "counts"
                        : r->state == REDLOCK_RESTART_EXCLUDED ? "excluded"
                                                               : "unknown";
    bool excluded = r != NULL && r->state == REDLOCK_RESTART_EXCLUDED;
    json_object_set_new(o, "restart", state != NULL ? json_string(state) : json_null());
    json_object_set_new(o, "restart_excluded_ms",
                        number_or_null(excluded, excluded ? r->excluded_ms : 0));
}

static void set_stats(json_t *o, const redlock_stats *stats, unsigned i)
{
    set_restart(o, stats, i);
    json_object_set_new(o, "stats", stats != NULL && i < stats->master_count
                                        ? master_stats(&stats->masters[i])
                                        : json_null());
}

/* The holder its value names: host, pid, since (Unix ms and UTC), label;
 * null when it names none. */
static json_t *master_holder(const redlock_master_result *m)
{
    redlock_holder h;
    if (m->value == NULL || redlock_value_holder(m->value, m->value_len, &h) != REDLOCK_OK)
        return json_null();
    char since[CLI_TIME_SIZE];
    return json_pack("{s:s, s:I, s:I, s:s, s:s}", "host", h.host, "pid", (json_int_t)h.pid,
                     "since_ms", (json_int_t)h.since_ms, "since", cli_utc_time(since, h.since_ms),
                     "label", h.label);
}

char *cli_json_status(const cli_resources *set, int status, const redlock_result *r,
                      const redlock_stats *stats)
{
    json_t *obj = with_status(set, status);
    json_object_set_new(obj, "quorum", json_integer(r->quorum));
    uint64_t token = token_of_a_quorum(r);
    json_object_set_new(obj, "fencing_token", number_or_null(token != 0, (json_int_t)token));
    json_t *masters = json_array();
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        json_t *o = json_object();
        json_object_set_new(o, "node", text_or_null(m->name));
        json_object_set_new(o, "reachable", json_boolean(reachable(m)));
        json_object_set_new(o, "held", json_boolean(m->value != NULL));
        /* Several resources, not all holding one value (value null). */
        json_object_set_new(o, "mixed", json_boolean(m->pttl_ms == CLI_PTTL_MIXED));
        if (m->value != NULL)
            set_bytes(o, "value", m->value, m->value_len);
        else
            json_object_set_new(o, "value", json_null());
        /* -2: no key (or no answer), -1: a key without expiry, -3: mixed. */
        json_object_set_new(o, "pttl_ms", number_or_null(m->pttl_ms >= 0, m->pttl_ms));
        json_object_set_new(o, "fencing_token",
                            number_or_null(m->fencing_token != 0, (json_int_t)m->fencing_token));
        json_object_set_new(o, "error", master_error(m));
        json_object_set_new(o, "server", text_or_null(m->server));
        json_object_set_new(o, "clock", master_clock(m));
        set_stats(o, stats, i);
        json_object_set_new(o, "holder", master_holder(m));
        json_array_append_new(masters, o);
    }
    json_object_set_new(obj, "masters", masters);
    return finish(obj);
}

char *cli_json_ping(int status, const redlock_result *r, const redlock_stats *stats)
{
    json_t *obj = json_object();
    json_object_set_new(obj, "status", json_string(redlock_status_name(status)));
    json_object_set_new(obj, "message", json_string(redlock_strerror(status)));
    json_object_set_new(obj, "quorum", json_integer(r->quorum));
    json_t *masters = json_array();
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        json_t *o = json_pack("{s:o, s:b, s:o, s:o}", "node", text_or_null(m->name), "reachable",
                              reachable(m), "latency_us",
                              number_or_null(m->latency_us >= 0, m->latency_us), "error",
                              master_error(m));
        json_object_set_new(o, "server", text_or_null(m->server));
        json_object_set_new(o, "clock", master_clock(m));
        set_stats(o, stats, i);
        json_array_append_new(masters, o);
    }
    json_object_set_new(obj, "masters", masters);
    return finish(obj);
}

bool cli_fencing_initialized(const redlock_master_result *m)
{
    return m->outcome == REDLOCK_MASTER_OK && m->detail != NULL &&
           strcmp(m->detail, REDLOCK_FENCING_INITIALIZED) == 0;
}

char *cli_json_fencing_init(int status, uint64_t floor, const redlock_result *r)
{
    json_t *obj = json_object();
    json_object_set_new(obj, "status", json_string(redlock_status_name(status)));
    json_object_set_new(obj, "message", json_string(redlock_strerror(status)));
    json_object_set_new(obj, "floor", json_integer((json_int_t)floor));
    json_object_set_new(obj, "quorum", json_integer(r->quorum));
    json_t *masters = json_array();
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        bool in_use = m->outcome == REDLOCK_MASTER_OK;
        json_t *why = in_use ? json_null()
                             : text_or_null(m->detail ? m->detail
                                                      : redlock_master_outcome_name(m->outcome));
        json_array_append_new(masters, json_pack("{s:o, s:b, s:b, s:o}", "node",
                                                 text_or_null(m->name), "in_use", in_use,
                                                 "initialized", cli_fencing_initialized(m),
                                                 "error", why));
    }
    json_object_set_new(obj, "masters", masters);
    return finish(obj);
}

/* -1 (not known): null; else a boolean. */
static json_t *known_bool(int v)
{
    return v < 0 ? json_null() : json_boolean(v);
}

static json_t *known_text(const char *s)
{
    return s[0] == '\0' ? json_null() : text_or_null(s);
}

/* What check read of a master's settings (redlock_health_async()). */
static void set_health(json_t *o, const redlock_master_health *h)
{
    bool known = h != NULL && h->connected;
    json_object_set_new(o, "role", known ? known_text(h->role) : json_null());
    json_object_set_new(o, "cluster_enabled", known ? known_bool(h->cluster_enabled) : json_null());
    json_object_set_new(o, "maxmemory_policy",
                        known ? known_text(h->maxmemory_policy) : json_null());
    json_object_set_new(o, "durable", h != NULL ? json_boolean(h->durable) : json_null());
    json_object_set_new(o, "aof", known ? known_bool(h->aof_enabled) : json_null());
    json_object_set_new(o, "appendfsync", known ? known_text(h->appendfsync) : json_null());
    json_object_set_new(o, "rdb", known ? known_bool(h->rdb) : json_null());
    json_object_set_new(o, "scripting", known ? known_bool(h->scripting) : json_null());
    json_object_set_new(o, "acl_probe_keys", known ? known_bool(h->probe_keys) : json_null());
    json_object_set_new(o, "acl_marker_keys", known ? known_bool(h->marker_keys) : json_null());
}

char *cli_json_check(int status, const redlock_result *r, const redlock_stats *stats,
                     const redlock_health *health, const cli_check_master *masters,
                     unsigned safe)
{
    static const char *const states[] = {"ok", "warning", "unsafe", "unreachable"};
    json_t *obj = json_object();
    json_object_set_new(obj, "status", json_string(redlock_status_name(status)));
    json_object_set_new(obj, "message", json_string(redlock_strerror(status)));
    json_object_set_new(obj, "quorum", json_integer(r->quorum));
    json_object_set_new(obj, "safe", json_integer(safe));
    json_object_set_new(obj, "settings_read", json_boolean(health != NULL));
    json_t *list = json_array();
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        const cli_check_master *cm = &masters[i];
        const redlock_master_health *h =
            health != NULL && i < health->master_count ? &health->masters[i] : NULL;
        json_t *o = json_pack("{s:o, s:s, s:b, s:o, s:o}", "node", text_or_null(m->name),
                              "state", states[cm->state], "reachable", reachable(m),
                              "latency_us", number_or_null(m->latency_us >= 0, m->latency_us),
                              "error", master_error(m));
        json_object_set_new(o, "server", text_or_null(m->server));
        json_t *clock = master_clock(m);
        json_object_set_new(clock, "verdict", json_string(cm->clock));
        json_object_set_new(clock, "why_not_checked", known_text(cm->clock_why));
        json_object_set_new(o, "clock", clock);
        json_object_set_new(o, "persistence", json_string(cm->persistence));
        set_health(o, h);
        set_restart(o, stats, i);
        json_t *findings = json_array();
        for (unsigned f = 0; f < cm->finding_count; f++)
            json_array_append_new(
                findings,
                json_pack("{s:s, s:s, s:o}", "severity",
                          cm->findings[f].severity == CLI_CHECK_UNSAFE ? "unsafe" : "warning",
                          "code", cm->findings[f].code, "message",
                          text_or_null(cm->findings[f].message)));
        json_object_set_new(o, "findings", findings);
        json_array_append_new(list, o);
    }
    json_object_set_new(obj, "masters", list);
    return finish(obj);
}

void cli_print_json(char *text)
{
    if (text == NULL) {
        cli_error("out of memory writing JSON");
        return;
    }
    puts(text);
    free(text);
}
