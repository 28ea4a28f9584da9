/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libredlock: a distributed lock held on a majority of N independent Redis
 * masters (the Redlock algorithm).
 *
 * This is the whole public API. Types are opaque unless their fields are
 * documented here; no hiredis, libev or libyaml type appears except
 * `struct ev_loop`, which the asynchronous client runs on.
 *
 * Conventions
 * - Every function that can fail returns an int status: REDLOCK_OK (0) or a
 *   negative REDLOCK_E* code; redlock_strerror() explains it.
 * - Strings the caller passes are copied; the caller keeps ownership.
 * - Resources and values are byte strings (pointer + length): any bytes,
 *   including NUL and newlines.
 * - The library never prints, exits or aborts. Messages go to the log
 *   callback set with redlock_config_set_log(), if any.
 * - All durations are milliseconds; all timing uses CLOCK_MONOTONIC.
 *
 * Callback rules (asynchronous API)
 * - When a function that takes a callback returns an error, the callback is
 *   never called. Otherwise it is called exactly once, from the client's loop.
 * - The result passed to a callback lives until the callback returns; keep it
 *   with redlock_result_copy().
 * - Freeing the client completes every operation still in flight with
 *   REDLOCK_ECANCELED before redlock_client_free() returns.
 * - Callbacks of an asynchronous client may call any function of this API,
 *   including redlock_client_free() on their own client. Callbacks of a
 *   blocking client (its on_lost and log callbacks) run on its I/O thread and
 *   must not call the blocking functions of that same redlock_sync, nor
 *   redlock_sync_free() on it: those wait for the I/O thread.
 *
 * Threading
 * - A redlock_client (asynchronous) belongs to the thread that runs its loop:
 *   call it only from that thread.
 * - A redlock_sync (blocking) may be shared by any number of threads. It runs
 *   an asynchronous client on its own loop. A calling thread that finds
 *   nobody running the loop runs it itself until its operation completes;
 *   otherwise it hands its operation over and sleeps on its own semaphore.
 *   Operations of different threads are in flight at the same time and no
 *   lock is held across a network round trip. A private I/O thread runs the
 *   loop whenever no call does and anything is outstanding (auto-extension,
 *   other threads' operations, the library's timers). The log callback of a
 *   redlock_sync is called from its I/O thread, except during
 *   redlock_sync_new(), which makes the first connection attempts on the
 *   calling thread.
 * - A redlock_lock handle may be used by one thread at a time. Different
 *   handles may be used from different threads freely. Its state, validity
 *   and lost fd may be read from any thread, also while the blocking
 *   client's I/O thread auto-extends it.
 * - redlock_config objects are not synchronised; build one, then share it
 *   read-only (clients copy what they need at creation).
 * - Cancellation (pthread_cancel(), deferred): in a redlock_sync_* call, the
 *   wait for the outcome is the only cancellation point. A thread canceled
 *   there ends promptly and safely: its operation is withdrawn first
 *   (dropped if not started, else canceled by the loop's runner as
 *   redlock_sync_free() would; a lock acquired just as the cancel came is
 *   released). redlock_sync_free() and redlock_lock_free() are not
 *   cancellation points. Asynchronous cancellation is not supported. To end
 *   one acquire's wait without canceling its thread, give it a cancel fd
 *   (redlock_acquire_options.cancel_fd).
 *
 * Signals
 * - hiredis writes to sockets with write(2): a write to a master that has
 *   gone away raises SIGPIPE. The blocking client's I/O thread blocks SIGPIPE,
 *   and so does a calling thread while it runs the loop;
 *   programs using the asynchronous client should ignore SIGPIPE, as most
 *   network servers do.
 */
#ifndef REDLOCK_REDLOCK_H
#define REDLOCK_REDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REDLOCK_VERSION_MAJOR 0
#define REDLOCK_VERSION_MINOR 3
#define REDLOCK_VERSION_PATCH 0
#define REDLOCK_VERSION_STRING "0.3.0"

#if defined(REDLOCK_BUILDING) && defined(__GNUC__)
#define REDLOCK_API __attribute__((visibility("default")))
#else
#define REDLOCK_API
#endif

/* ------------------------------------------------------------------------ */
/* Statuses                                                                  */

/* X(name, value, message). Values are never reused or renumbered. */
#define REDLOCK_STATUS_MAP(X)                                                  \
    X(OK, 0, "success")                                                        \
    X(ECONFLICT, -1, "the resource is held by another holder")                 \
    X(ENOQUORUM, -2, "too few masters reachable to form a quorum")             \
    X(EEXPIRED, -3, "the lock's validity ran out before the quorum was known") \
    X(ENOTOWNER, -4, "the lock's value is no longer held on a quorum of masters") \
    X(EINVAL, -5, "invalid argument")                                          \
    X(ENOMEM, -6, "out of memory")                                             \
    X(EAUTH, -7, "the masters refused our credentials")                        \
    X(EREPLY, -8, "the masters replied with errors")                           \
    X(ECONFIG, -9, "invalid configuration")                                    \
    X(ECANCELED, -10, "operation canceled: by its cancel fd, or the client is being freed") \
    X(EBUSY, -11, "another operation is in progress on this lock")             \
    X(ESYS, -12, "a system call failed")                                       \
    X(ENOTSUP, -13, "not supported by this build of the library")                \
    X(EMAXHOLD, -14, "held for max_hold_ms: auto-extension stopped")            \
    X(ENOFENCE, -15, "too few masters have a fencing counter in use")       \
    X(EOVERLOAD, -16, "the masters are behind: the requests waited too long to be sent") \
    X(ECLOCK, -17, "too few masters with trustworthy clocks")                  \
    X(EMAXTTL, -18, "the TTL asked is over max_ttl_ms, the longest TTL the deployment's clients share") \
    X(ERESTARTED, -19, "too few masters count: masters restarted less than max_ttl_ms ago are not counted yet") \
    X(EPERM, -20, "the masters refused the command: the ACL user lacks a permission (NOPERM)") \
    X(ENOSPC, -21, "the buffer is too small: the size needed is given back") \
    X(ELOST, -22, "the lock was lost while the function ran: another holder may have overlapped it") \
    X(ENOENT, -23, "no such operation in progress: it completed already, or was canceled")

typedef enum redlock_status {
#define REDLOCK_STATUS_ENUM_(name, value, msg) REDLOCK_##name = (value),
    REDLOCK_STATUS_MAP(REDLOCK_STATUS_ENUM_)
#undef REDLOCK_STATUS_ENUM_
} redlock_status;

/* A sentence explaining a status; "unknown status" for anything else. */
REDLOCK_API const char *redlock_strerror(int status);
/* The status's name, e.g. "REDLOCK_ECONFLICT"; "REDLOCK_UNKNOWN" otherwise. */
REDLOCK_API const char *redlock_status_name(int status);
/* "0.3.0": the version of the library actually linked. */
REDLOCK_API const char *redlock_version(void);

/* ------------------------------------------------------------------------ */
/* Limits                                                                    */

#define REDLOCK_MAX_NODES 64              /* masters per client */
#define REDLOCK_MAX_RESOURCE_LEN (1U << 20) /* bytes in a resource name, and in
                                               all of a lock's together */
#define REDLOCK_MAX_RESOURCES 64          /* resources one lock takes together */
#define REDLOCK_MAX_VALUE_LEN 1024        /* bytes in a lock value */
#define REDLOCK_VALUE_LEN 32              /* generated values: 128 bits, hex */
#define REDLOCK_MAX_LABEL_LEN 128         /* bytes in an acquire's holder label */
#define REDLOCK_MAX_HOST_LEN 64           /* bytes of the host name a value carries */
#define REDLOCK_ERRBUF_SIZE 512           /* config error messages (cut short beyond) */

/* ------------------------------------------------------------------------ */
/* Logging                                                                   */

typedef enum redlock_log_level {
    REDLOCK_LOG_ERROR = 0,
    REDLOCK_LOG_WARN = 1,
    REDLOCK_LOG_INFO = 2,
    REDLOCK_LOG_DEBUG = 3
} redlock_log_level;

/* One line, no trailing newline, never containing a password. */
typedef void (*redlock_log_fn)(int level, const char *message, void *arg);

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */

typedef struct redlock_config redlock_config;

/*
 * The settings with integer values: X(NAME, key, min, max, default). NAME
 * gives REDLOCK_NAME of enum redlock_setting (numbered from 0 in this
 * order), key is the YAML key and redlock_setting_name(), and min..max is
 * the range redlock_config_set() accepts; the acquire options share the
 * ranges of TTL_MS and the RETRY_* settings. See docs/config.md.
 */
#define REDLOCK_SETTING_MAP(X)                                                          \
    X(CONNECT_TIMEOUT_MS, "connect_timeout_ms", 1, 600000, 500) /* TCP connect + handshake */ \
    X(COMMAND_TIMEOUT_MS, "command_timeout_ms", 1, 600000, 50)  /* one request, one master */ \
    X(TTL_MS, "ttl_ms", 1, 2147483647, 10000)                   /* default time-to-live */    \
    X(RETRY_COUNT, "retry_count", 0, 2147483647, 3)       /* retries after the first attempt */ \
    X(RETRY_DELAY_MS, "retry_delay_ms", 0, 3600000, 200)  /* pause before a retry ... */        \
    X(RETRY_JITTER_MS, "retry_jitter_ms", 0, 3600000, 100) /* ... plus a random 0..jitter */    \
    X(RECONNECT_MIN_MS, "reconnect_min_ms", 1, 3600000, 100)  /* first reconnect delay */        \
    X(RECONNECT_MAX_MS, "reconnect_max_ms", 1, 3600000, 5000) /* cap of the doubling delay */ \
    X(WAIT_BY_NOTIFICATION, "wait_by_notification", 0, 1, 1)  /* retry when a release is \
                                                                 announced: docs/design.md */ \
    X(MAX_HOLD_MS, "max_hold_ms", 0, 2147483647, 0) /* auto-extension stops once held this \
                                                       long; 0: no cap */                 \
    X(LOCK_DELAY_MS, "lock_delay_ms", 0, 2147483647, 0) /* keys outlive the validity by \
                                                           this: a dead holder's lock stays \
                                                           taken; released at once */ \
    X(FENCING, "fencing", 0, 1, 0) /* acquires hand out fencing tokens: docs/fencing.md */ \
    X(MAX_IN_FLIGHT, "max_in_flight", 1, 65536, 256) /* requests sent and unanswered per \
                                                        master; the rest wait their turn */ \
    X(CLOCK_CHECK, "clock_check", 0, 2, 2) /* masters' expiry clocks: REDLOCK_CLOCK_CHECK_* \
                                              (docs/safety.md) */                          \
    X(CLOCK_WARMUP_MS, "clock_warmup_ms", 0, 60000, 20) /* the first acquire waits until \
                                                           every master was checked this long */ \
    X(CLOCK_PROBE_MS, "clock_probe_ms", 0, 3600000, 0) /* a master's clock is sampled at least \
                                                          this often while locks are held; \
                                                          0: ttl_ms / 10 */                 \
    X(CLOCK_QUARANTINE_MS, "clock_quarantine_ms", 1, 86400000, 60000) /* a master proven \
                                                        fast is left out this long */  \
    X(MAX_TTL_MS, "max_ttl_ms", 0, 2147483647, 0) /* the longest TTL any client of the \
                                                     deployment asks; 0: ttl_ms. A master \
                                                     restarted counts this long after */ \
    X(DURABLE, "durable", 0, 1, 0) /* every master keeps its keys across a restart (AOF, \
                                      appendfsync always): no restart excludes one */ \
    X(SCRIPT_FREE, "script_free", 0, 1, 1) /* masters whose server has the commands \
                                              (Valkey 8.1, Redis 8.4) extend plain locks \
                                              without a script: docs/servers.md */

/* The values of REDLOCK_CLOCK_CHECK (YAML: off, warn, enforce). */
#define REDLOCK_CLOCK_CHECK_OFF 0     /* no probes, no verdicts */
#define REDLOCK_CLOCK_CHECK_WARN 1    /* verdicts logged and reported, every OK counted */
#define REDLOCK_CLOCK_CHECK_ENFORCE 2 /* OKs from masters proven fast are not counted */

typedef enum redlock_setting {
#define REDLOCK_SETTING_ENUM_(name, key, min, max, def) REDLOCK_##name,
    REDLOCK_SETTING_MAP(REDLOCK_SETTING_ENUM_)
#undef REDLOCK_SETTING_ENUM_
} redlock_setting;

/* An empty config (no nodes) with every setting at its default. */
REDLOCK_API int redlock_config_new(redlock_config **out);

/*
 * Load a YAML config (see docs/config.md). On error *out is NULL, nothing is
 * leaked, and errbuf (if not NULL) holds one line naming file:line:column and
 * the key, e.g. "nodes.yaml:7:11: nodes[1].port: expected an integer from 1
 * to 65535". Returns REDLOCK_ECONFIG for every problem with the file or its
 * contents, REDLOCK_ENOMEM, or REDLOCK_EINVAL for NULL arguments.
 */
REDLOCK_API int redlock_config_load_file(redlock_config **out, const char *path,
                                         char *errbuf, size_t errlen);
/* The same from a buffer; name is used in messages (NULL: "<string>"). */
REDLOCK_API int redlock_config_load_string(redlock_config **out, const char *text,
                                           size_t len, const char *name,
                                           char *errbuf, size_t errlen);
/* The file cfg was loaded from (redlock_config_load_file()) when it holds
 * a password inline (`password`, or a url with one) and others may read
 * it (mode o+r); else NULL. A client started with cfg logs a warning. */
REDLOCK_API const char *redlock_config_password_exposed(const redlock_config *cfg);
/* A deep copy. */
REDLOCK_API int redlock_config_copy(const redlock_config *cfg, redlock_config **out);
/* Frees cfg and wipes the passwords it held. NULL is allowed. */
REDLOCK_API void redlock_config_free(redlock_config *cfg);

/* Set or read an integer setting. REDLOCK_EINVAL when out of range. */
REDLOCK_API int redlock_config_set(redlock_config *cfg, redlock_setting key, int64_t value);
REDLOCK_API int redlock_config_get(const redlock_config *cfg, redlock_setting key,
                                   int64_t *value);
/* The YAML key of a setting, e.g. "ttl_ms"; NULL for an unknown setting. */
REDLOCK_API const char *redlock_setting_name(redlock_setting key);

/* Clock drift allowance: validity loses ttl * factor + 2 ms. 0 <= factor < 1. */
REDLOCK_API int redlock_config_set_drift_factor(redlock_config *cfg, double factor);
REDLOCK_API double redlock_config_drift_factor(const redlock_config *cfg);

/* Messages at min_level or more severe go to fn. fn NULL: no logging. */
REDLOCK_API int redlock_config_set_log(redlock_config *cfg, redlock_log_fn fn, void *arg,
                                       int min_level);

/* Add a master. index (may be NULL) receives its position. REDLOCK_EINVAL on
 * an empty host, a port outside 1..65535, a duplicate, or more than
 * REDLOCK_MAX_NODES nodes. */
REDLOCK_API int redlock_config_add_tcp_node(redlock_config *cfg, const char *host, int port,
                                            size_t *index);
REDLOCK_API int redlock_config_add_unix_node(redlock_config *cfg, const char *path,
                                             size_t *index);
/* AUTH for a node: password alone, or ACL username + password. NULL password
 * removes authentication. */
REDLOCK_API int redlock_config_node_set_auth(redlock_config *cfg, size_t index,
                                             const char *username, const char *password);
/* SELECT db for a node (default 0). */
REDLOCK_API int redlock_config_node_set_db(redlock_config *cfg, size_t index, int db);
/* Whether a node keeps its keys across a restart (AOF with appendfsync
 * always: docs/safety.md, "Masters restarted empty"): 1 durable, 0 not,
 * -1 as the config's `durable` setting (the default). */
REDLOCK_API int redlock_config_node_set_durable(redlock_config *cfg, size_t index, int durable);
/* Per-node timeouts; 0 keeps the config-wide value. */
REDLOCK_API int redlock_config_node_set_timeouts(redlock_config *cfg, size_t index,
                                                 int64_t connect_timeout_ms,
                                                 int64_t command_timeout_ms);
/*
 * TLS to a master (docs/tls.md). The server's certificate is always
 * verified: it must chain to a CA of ca_file or ca_dir (the system's CAs
 * when both are NULL) and name server_name (the node's host when NULL: a
 * DNS name, or an IP address, which must be in the certificate's IP SANs).
 */
typedef struct redlock_tls_options {
    int enabled;             /* 1: TLS; 0: plain TCP; -1 (a node's only): as
                                the config-wide setting */
    const char *ca_file;     /* PEM file of the CAs to trust; NULL: none */
    const char *ca_dir;      /* directory of hashed CA certificates (c_rehash) */
    const char *cert_file;   /* client certificate chain (PEM), for servers with
                                tls-auth-clients; needs key_file */
    const char *key_file;    /* its private key (PEM, not encrypted) */
    const char *server_name; /* SNI and the name verified; NULL: the node's host */
} redlock_tls_options;

/* Whether this build has TLS. When not, why (may be NULL) receives a
 * sentence saying why not, e.g. that its hiredis has no hiredis_ssl. */
REDLOCK_API bool redlock_tls_available(const char **why);
/*
 * Config-wide TLS: enabled is the default of every TCP node, and the files
 * and server_name fill in what a node's own options leave NULL. NULL opts:
 * plain, nothing set. A node's own: enabled -1 keeps the config-wide
 * choice; NULL opts forgets the node's own options. Strings are copied.
 * REDLOCK_ECONFIG when the build has no TLS (redlock_tls_available()) and
 * opts enable it or name a file; REDLOCK_EINVAL for enabled out of range
 * (-1 config-wide), an empty or over-long string, TLS on a unix-socket
 * node, a bad index; REDLOCK_ENOMEM. Nothing changes on failure.
 */
REDLOCK_API int redlock_config_set_tls(redlock_config *cfg, const redlock_tls_options *opts);
REDLOCK_API int redlock_config_node_set_tls(redlock_config *cfg, size_t index,
                                            const redlock_tls_options *opts);
/* Remove every node (settings are kept). */
REDLOCK_API void redlock_config_clear_nodes(redlock_config *cfg);
REDLOCK_API size_t redlock_config_node_count(const redlock_config *cfg);
/* "host:port" or "unix:/path"; NULL when index is out of range. */
REDLOCK_API const char *redlock_config_node_name(const redlock_config *cfg, size_t index);

/* ------------------------------------------------------------------------ */
/* Masters as URLs                                                           */

/*
 * Add a master written as a URL (docs/config.md, "Masters as URLs"):
 *   redis://[USER[:PASSWORD]@]HOST[:PORT][/DB]  HOST: a name, an IPv4 address
 *                                               or [IPV6]; PORT 6379, DB 0
 *   rediss://...                                the same over TLS
 *   unix://[USER[:PASSWORD]@]/PATH[?db=N]       a unix socket
 * The scheme is case-insensitive. USER, PASSWORD and PATH are
 * percent-decoded (%40 is '@'), so any password can be written;
 * redis://:PASSWORD@HOST is a password without a user. The credentials go
 * through redlock_config_node_set_auth(), the db through
 * redlock_config_node_set_db(); index (may be NULL) receives the node's
 * position. rediss:// turns TLS on for the node (redlock_config_node_set_tls()
 * with enabled 1: the files are the config-wide ones). Returns
 * REDLOCK_ECONFIG for rediss:// on a build without TLS, REDLOCK_EINVAL for
 * anything else that is not such a URL, a USER
 * without a PASSWORD, or what redlock_config_add_tcp_node() and
 * redlock_config_add_unix_node() refuse, REDLOCK_ENOMEM. Nothing is added
 * on failure.
 */
REDLOCK_API int redlock_config_add_node_url(redlock_config *cfg, const char *url,
                                            size_t *index);
/* The same, with the credentials the URL leaves out: username (may be NULL)
 * when it gives no USER, password (may be NULL) when it gives no PASSWORD.
 * On failure errbuf (if not NULL) holds one line saying why, e.g. "expected
 * a port from 1 to 65535", which never quotes the URL or a password. */
REDLOCK_API int redlock_config_add_node_url_auth(redlock_config *cfg, const char *url,
                                                 const char *username, const char *password,
                                                 size_t *index, char *errbuf, size_t errlen);
/*
 * For messages: url (any text, e.g. a command-line argument) into buf,
 * always NUL-terminated and cut to fit, with its secret replaced by "***":
 * the PASSWORD, or a USER@ without ':' (some clients read that as a
 * password), as in "redis://user:***@host:6379/2". Returns buf.
 */
REDLOCK_API const char *redlock_url_redact(const char *url, char *buf, size_t len);
/* Overwrites, in place and with '*', what redlock_url_redact() hides: for
 * text that must stay where it is, e.g. an argument in argv, which ps shows
 * to every user. Returns whether there was anything to hide. */
REDLOCK_API bool redlock_url_mask_password(char *url);

/* ------------------------------------------------------------------------ */
/* Results                                                                   */

/* What one master did with one request: X(NAME, value, name), giving
 * REDLOCK_MASTER_NAME and its redlock_master_outcome_name(). */
#define REDLOCK_MASTER_OUTCOME_MAP(X)                                         \
    X(OK, 0, "ok")                /* did what was asked: set, deleted, extended */ \
    X(HELD, 1, "held")            /* the key holds another holder's value */ \
    X(ABSENT, 2, "absent")        /* release/extend: the key is not there */ \
    X(TIMEOUT, 3, "timeout")      /* no reply within the command timeout */ \
    X(NOT_CONNECTED, 4, "not-connected") /* no connection, lost before the reply, or too many waiting */ \
    X(AUTH_FAILED, 5, "auth-failed") /* the master refused our credentials */ \
    X(ERROR, 6, "error")          /* an error reply; detail has its text */ \
    X(PENDING, 7, "pending")      /* no reply yet when the outcome was decided */ \
    X(CLOCK, 8, "clock-excluded") /* did it, but its clock is proven fast: not counted */ \
    X(REFUSED, 9, "refused")      /* answered NOPERM: the ACL user may not, or the master \
                                     refused our scripts when we connected; detail has its \
                                     text */

typedef enum redlock_master_outcome {
#define REDLOCK_MASTER_OUTCOME_ENUM_(name, value, text) REDLOCK_MASTER_##name = (value),
    REDLOCK_MASTER_OUTCOME_MAP(REDLOCK_MASTER_OUTCOME_ENUM_)
#undef REDLOCK_MASTER_OUTCOME_ENUM_
} redlock_master_outcome;

/* The outcome's name from REDLOCK_MASTER_OUTCOME_MAP, e.g. "not-connected";
 * "unknown" otherwise. */
REDLOCK_API const char *redlock_master_outcome_name(int outcome);

/* What this client has proven of a master's expiry clock (docs/safety.md):
 * X(NAME, value, name), giving REDLOCK_CLOCK_NAME and its
 * redlock_clock_state_name(). */
#define REDLOCK_CLOCK_STATE_MAP(X)                                              \
    X(OFF, 0, "off")           /* not checked (clock_check off, or no probe) */ \
    X(CHECKING, 1, "checking") /* too few samples yet for a verdict */        \
    X(TRUSTED, 2, "trusted")   /* nothing proven against it */                \
    X(FAST, 3, "fast")         /* proven fast: its OKs are not counted */

enum redlock_clock_state {
#define REDLOCK_CLOCK_STATE_ENUM_(name, value, text) REDLOCK_CLOCK_##name = (value),
    REDLOCK_CLOCK_STATE_MAP(REDLOCK_CLOCK_STATE_ENUM_)
#undef REDLOCK_CLOCK_STATE_ENUM_
};

/* The state's name from REDLOCK_CLOCK_STATE_MAP; "invalid" otherwise. */
REDLOCK_API const char *redlock_clock_state_name(int state);

typedef struct redlock_master_result {
    const char *name;   /* the node's name, as redlock_config_node_name() */
    int outcome;        /* a redlock_master_outcome */
    /* The outcome is what the master said after its deadline: the round
     * counted it as a timeout (see masters_locked). Only this flag tells;
     * a master's own error text may read like the detail below. */
    bool late;
    const char *detail; /* error reply or connection error; NULL when none.
                           "late reply, not counted[: ...]" when late.
                           fencing-init, OK: REDLOCK_FENCING_INITIALIZED
                           when it put the counter in use, else "in use
                           already" */
    int64_t latency_us; /* from send to reply; -1 without a reply */
    /* Inspect only (see redlock_inspect_async()); otherwise NULL, 0, -2. */
    const char *value;  /* the key's value, NUL-terminated; NULL when absent */
    size_t value_len;
    int64_t pttl_ms;    /* the key's PTTL: -2 absent, -1 no expiry; several
                           resources: the least, or -3 when they do not all
                           hold one value (value NULL then) */
    /* Inspect only: the fencing token of the lock there, when it was
     * acquired with one (and, several resources, all keys agree); else 0. */
    uint64_t fencing_token;
    /* Its expiry clock as this client has checked it, when the result was
     * made: a redlock_clock_state; slow when proven slower than ours (its
     * keys live longer: reported only); and the bounds its samples prove
     * on its rate to ours, rate_hi < 0 when there is no upper bound yet
     * (both 0 and -1 with no samples). FAST: rate_lo is the rate its proof
     * showed (0 when its probe vanished), rate_hi -1. */
    int clock_state;
    bool clock_slow;
    double clock_rate_lo, clock_rate_hi;
    /* The server, as its INFO server reply says when this client last
     * connected: "valkey 9.1.2", "redis 7.0.15"; NULL when not known
     * (never connected, or INFO refused). */
    const char *server;
} redlock_master_result;

/*
 * The outcome of one operation. Allocated by the library; fields may be
 * added at the end in later versions, never removed or reordered.
 */
typedef struct redlock_result {
    int status;            /* the operation's status */
    int64_t validity_ms;   /* acquire/extend: how long the holder may act; else 0 */
    int64_t elapsed_ms;    /* the last attempt, from before its first send */
    int64_t elapsed_us;    /* the same in microseconds */
    int64_t total_ms;      /* the whole operation, retries included */
    unsigned attempts;     /* attempts made (acquire retries; 1 otherwise) */
    unsigned masters_locked; /* masters that took (acquire), kept (extend) or
                                gave up (release) our value in the last attempt */
    unsigned quorum;       /* masters needed: N/2 + 1 */
    unsigned master_count; /* N; also the length of masters[] */
    const redlock_master_result *masters; /* per master, in config order */
    uint64_t fencing_token; /* acquire with fencing: the lock's token; else 0 */
} redlock_result;

REDLOCK_API int redlock_result_copy(const redlock_result *result, redlock_result **out);
/* Frees a result from redlock_result_copy() or a redlock_sync_* call. */
REDLOCK_API void redlock_result_free(redlock_result *result);

/* ------------------------------------------------------------------------ */
/* Locks                                                                     */

typedef struct redlock_lock redlock_lock;

/*
 * A handle for a lock known by its value, e.g. one taken by another process
 * that passed the value along. Its validity is unknown (0) until a successful
 * extend. ttl_ms is what a later extend uses by default (0: the client's).
 */
REDLOCK_API int redlock_lock_new(redlock_lock **out, const void *resource,
                                 size_t resource_len, const void *value, size_t value_len,
                                 int64_t ttl_ms);
/* The same for a lock on several resources (see redlock_acquire_many_async()),
 * in any order. REDLOCK_EINVAL as that function says. */
REDLOCK_API int redlock_lock_new_many(redlock_lock **out, const void *const *resources,
                                      const size_t *resource_lens, size_t count,
                                      const void *value, size_t value_len, int64_t ttl_ms);
/* Forget a handle (it does not release the lock) and stop its
 * auto-extension. Safe while an operation on it is in flight: that operation
 * completes without touching it. NULL is allowed. */
REDLOCK_API void redlock_lock_free(redlock_lock *lock);
/* The lock's resource; for a lock on several, the first in its order
 * (redlock_lock_resource_at(lock, 0, len)). */
REDLOCK_API const void *redlock_lock_resource(const redlock_lock *lock, size_t *len);
/* How many resources the lock is for (1 for a lock on one; 0 for NULL). */
REDLOCK_API size_t redlock_lock_resource_count(const redlock_lock *lock);
/* Its resources, sorted bytewise (a prefix first), i from 0; NULL (*len 0)
 * when i is out of range. */
REDLOCK_API const void *redlock_lock_resource_at(const redlock_lock *lock, size_t i,
                                                 size_t *len);
/* The value, NUL-terminated for convenience; len (may be NULL) gets its length. */
REDLOCK_API const char *redlock_lock_value(const redlock_lock *lock, size_t *len);
/* Milliseconds the holder may still act, by the monotonic clock. 0 or less:
 * do not rely on the lock (it ran out, was released, or is unknown). */
REDLOCK_API int64_t redlock_lock_validity_ms(const redlock_lock *lock);
REDLOCK_API int64_t redlock_lock_ttl_ms(const redlock_lock *lock);
/* The lock's fencing token (docs/fencing.md): greater than that of every
 * lock granted on any resource before it, and kept by extensions. Send it
 * with every write to the storage the lock protects. 0 when the lock was
 * acquired without fencing, or made from a value. */
REDLOCK_API uint64_t redlock_lock_fencing_token(const redlock_lock *lock);

/* Who holds a lock, as its value says (the acquire option label). */
typedef struct redlock_holder {
    char host[REDLOCK_MAX_HOST_LEN + 1]; /* the holder's host name */
    int64_t pid;                         /* its process id */
    int64_t since_ms;                    /* its attempt's start, Unix time in ms */
    char label[REDLOCK_MAX_LABEL_LEN + 1];
} redlock_holder;

/* Read the holder metadata from a lock's value (a master result's value
 * from an inspect, or redlock_lock_value()) into *out. REDLOCK_EINVAL when
 * the value carries none (acquired without a label, by an earlier version,
 * or given to redlock_lock_new()): the holder is unknown; *out is zeroed. */
REDLOCK_API int redlock_value_holder(const char *value, size_t value_len, redlock_holder *out);

/* A lock's state: X(NAME, value, name), giving REDLOCK_LOCK_NAME and its
 * redlock_lock_state_name(). */
#define REDLOCK_LOCK_STATE_MAP(X)                                             \
    X(HELD, 0, "held")         /* validity left: the holder may act */       \
    X(EXPIRED, 1, "expired")   /* its validity ran out */                    \
    X(LOST, 2, "lost")         /* auto-extension failed (the lost callback ran) */ \
    X(RELEASED, 3, "released") /* released, or released by freeing its client */ \
    X(UNKNOWN, 4, "unknown")   /* made from a value, never extended */

/* The enum has a tag and no typedef: its name is the function's that
 * returns it (as struct stat and stat()). */
enum redlock_lock_state {
#define REDLOCK_LOCK_STATE_ENUM_(name, value, text) REDLOCK_LOCK_##name = (value),
    REDLOCK_LOCK_STATE_MAP(REDLOCK_LOCK_STATE_ENUM_)
#undef REDLOCK_LOCK_STATE_ENUM_
};

/* The lock's state now. Safe to call from any thread, also while the
 * blocking client's I/O thread auto-extends the lock. */
REDLOCK_API int redlock_lock_state(const redlock_lock *lock);
/* The state's name from REDLOCK_LOCK_STATE_MAP, e.g. "held"; "invalid"
 * otherwise. */
REDLOCK_API const char *redlock_lock_state_name(int state);
/*
 * *fd: a file descriptor that becomes readable when the lock is lost (for
 * poll(2), select(2) or an event loop), created on the first call and owned
 * by the handle (closed by redlock_lock_free()). Never read from it. Safe
 * from any thread. REDLOCK_EINVAL for a NULL lock or fd, REDLOCK_ESYS (errno
 * set) when it cannot be created; *fd is -1 then.
 */
REDLOCK_API int redlock_lock_lost_fd(redlock_lock *lock, int *fd);

/* ------------------------------------------------------------------------ */
/* Acquire options                                                           */

#define REDLOCK_DEFAULT (-1)

typedef struct redlock_acquire_options {
    int64_t ttl_ms;          /* REDLOCK_DEFAULT: the config's ttl_ms */
    int64_t retry_count;     /* REDLOCK_DEFAULT: the config's; 0: one attempt */
    int64_t retry_delay_ms;  /* REDLOCK_DEFAULT: the config's */
    int64_t retry_jitter_ms; /* REDLOCK_DEFAULT: the config's */
    int64_t wait_ms;         /* no retry starts later than this after the call;
                                REDLOCK_DEFAULT: no limit beyond retry_count */
    int64_t lock_delay_ms;   /* the keys live this much longer than the validity
                                (PX = ttl + delay), so a holder that dies keeps
                                the lock taken that much longer; a release frees
                                it at once. REDLOCK_DEFAULT: the config's */
    /* The reentrant form (docs/design.md, "Reentrancy"): owner_len bytes
     * (1..REDLOCK_MAX_VALUE_LEN) naming who holds the lock. An acquire with
     * the owner token of the lock's holder succeeds at once, as another hold
     * with its own handle and value; the keys go when the last hold is
     * released (or expires). NULL (the default): a plain lock, which an
     * owner never re-enters. */
    const void *owner;
    size_t owner_len;
    /* 1: the lock is granted only with a fencing token (docs/fencing.md),
     * at the cost of a second round trip; 0: without. REDLOCK_DEFAULT: the
     * config's `fencing`. */
    int fencing;
    /* Holder metadata (docs/design.md, "Who holds a lock"): a label of
     * 1..REDLOCK_MAX_LABEL_LEN printable ASCII characters (a NUL ends it)
     * saying who holds the lock, e.g. a command line. Given, each value
     * the acquire writes is its random part followed by the host name,
     * the process id, the time of the attempt and the label, which
     * redlock_value_holder() reads back from an inspect. NULL (the
     * default): the value is the random part alone. */
    const char *label;
    /* A file descriptor (an eventfd, a pipe's read end, a signalfd, ...)
     * whose becoming readable cancels this acquire: it completes with
     * REDLOCK_ECANCELED and leaves no key behind (what its attempt may have
     * set is released, as after a failed attempt). Readable already when
     * the acquire starts: REDLOCK_ECANCELED, nothing sent. The fd is only
     * polled, never read: its state is the caller's, who keeps it open
     * until the acquire completes. -1 (the default): none. */
    int cancel_fd;
    /* A counting semaphore (docs/design.md, "Semaphores"): at most slots
     * holders of the resource at once, 2..REDLOCK_MAX_SLOTS. Each slot is
     * a lock of its own key, "<resource>:slot:<i>"; an attempt tries the
     * slots in turn and holds the first it wins (the handle's resource
     * names it). One resource only, not reentrant (REDLOCK_EINVAL); every
     * client of the resource must give the same number. 0 or 1 (the
     * default): the lock, one holder, on the resource's own key. */
    int slots;
} redlock_acquire_options;

/* The most slots a semaphore may have. */
#define REDLOCK_MAX_SLOTS 64

/* The name of the key each master keeps its fencing counter in, which no
 * lock may use as its resource. */
#define REDLOCK_FENCING_KEY "redlock:fence"
/* A fencing-init master result's detail when that master's counter was
 * put in use by it (else "in use already": it was in use before). */
#define REDLOCK_FENCING_INITIALIZED "initialized"
/* A fenced lock's token is kept beside each of its keys, in the key named
 * this prefix and the resource, for inspection (redlock status); no lock
 * may use a resource beginning with it. */
#define REDLOCK_FENCING_TOKEN_PREFIX "redlock:fence:"

/* Sets every number to REDLOCK_DEFAULT (cancel_fd to -1) and owner and label
 * to NULL. Always call it before setting fields. */
REDLOCK_API void redlock_acquire_options_init(redlock_acquire_options *opts);

/* ------------------------------------------------------------------------ */
/* Asynchronous client, on the caller's libev loop                           */

struct ev_loop;
typedef struct redlock_client redlock_client;

/*
 * Create a client on loop and start connecting to every master (without
 * waiting). The config is copied. REDLOCK_EINVAL without nodes,
 * REDLOCK_ECONFIG for inconsistent settings (logged), REDLOCK_ENOMEM.
 */
REDLOCK_API int redlock_client_new(redlock_client **out, const redlock_config *cfg,
                                   struct ev_loop *loop);
/*
 * Free the client: cancel operations in flight (their callbacks run with
 * REDLOCK_ECANCELED), stop auto-extensions, and release every lock it
 * acquired that was not released yet (their handles stay valid, in state
 * REDLOCK_LOCK_RELEASED, and must still be freed). Returns at once; the
 * releases and the closing of connections finish on the loop within one
 * command timeout (a master still in its connection handshake gets the rest
 * of its connect timeout first), so keep running the loop until ev_run()
 * returns before destroying it. NULL is allowed. From inside a callback
 * (the log callback included) it is deferred until the library's frames
 * below that callback have returned (docs/design.md, "Ownership and
 * callbacks").
 */
REDLOCK_API void redlock_client_free(redlock_client *client);

/*
 * Whether the masters' clocks are checked as far as a client's first
 * acquire waits for them (docs/safety.md, "Masters' clocks"): every
 * connected master's clock trusted or proven fast, with clock_warmup_ms of
 * samples; a master still connecting is not waited for once the checked
 * ones make a quorum; never longer than connect_timeout_ms and
 * clock_warmup_ms from the client's creation; at once with clock_check
 * off or clock_warmup_ms 0. A status tool waits for it (running the loop)
 * before it reports masters' clocks. Loop thread. REDLOCK_EINVAL for NULL.
 */
REDLOCK_API int redlock_client_clocks_checked(const redlock_client *client, bool *checked);

/* status REDLOCK_OK: lock is a new handle the callback owns (free it with
 * redlock_lock_free()). Otherwise lock is NULL. */
typedef void (*redlock_acquire_cb)(int status, redlock_lock *lock,
                                   const redlock_result *result, void *arg);
/* Completion of extend and release. */
typedef void (*redlock_done_cb)(int status, const redlock_result *result, void *arg);

/*
 * Take the lock on resource: SET resource <random value> NX PX ttl on every
 * master in parallel; held when a quorum said OK and validity remains.
 * Failed attempts are released on every master and retried per opts (NULL:
 * the config's policy). Completes with REDLOCK_OK, ECONFLICT, ENOQUORUM,
 * EEXPIRED, EAUTH, EREPLY or ECANCELED (the client freed, opts->cancel_fd
 * readable, or redlock_acquire_cancel()), or (rarely) ENOMEM or ESYS when a
 * retry cannot be started.
 * Returns REDLOCK_EINVAL, ENOMEM, ESYS (no random value) or ECANCELED (the
 * client is being freed, or opts->cancel_fd is readable already) without
 * calling cb.
 */
REDLOCK_API int redlock_acquire_async(redlock_client *client, const void *resource,
                                      size_t resource_len,
                                      const redlock_acquire_options *opts,
                                      redlock_acquire_cb cb, void *arg);
/*
 * Cancel the acquire (every one, if several) started on client with this cb
 * and arg that has not completed: what its attempt in flight may have set
 * is released as after a failed attempt, and cb runs with REDLOCK_ECANCELED
 * from the loop, after this call has returned, never inside it. Returns
 * REDLOCK_OK when it canceled one, REDLOCK_ENOENT when none is left to
 * cancel (it completed: its callback ran or is running; or it was canceled
 * already), REDLOCK_EINVAL for a NULL client or cb. Loop thread.
 */
REDLOCK_API int redlock_acquire_cancel(redlock_client *client, redlock_acquire_cb cb,
                                       const void *arg);
/*
 * Take one lock on count resources (resources[i], resource_lens[i] bytes),
 * all or nothing: each master runs one script that sets every key or, when
 * any of them is taken, none, so its vote is for the whole set; the lock is
 * held when a quorum voted yes. The order given does not matter (the set is
 * sorted: clients asking for {a,b} and {b,a} send the same request). The
 * handle works like a one-resource lock: extend, release and auto-extension
 * act on every resource at once. REDLOCK_EINVAL besides the above: count
 * outside 1..REDLOCK_MAX_RESOURCES, a resource named twice, or more than
 * REDLOCK_MAX_RESOURCE_LEN bytes in all.
 */
REDLOCK_API int redlock_acquire_many_async(redlock_client *client,
                                           const void *const *resources,
                                           const size_t *resource_lens, size_t count,
                                           const redlock_acquire_options *opts,
                                           redlock_acquire_cb cb, void *arg);
/*
 * Reset the lock's time-to-live to ttl_ms (0: the lock's own) on every master
 * where it still holds our value (every key of a set; a reentrant hold's key
 * is never shortened). Succeeds when a quorum extended it before
 * the current validity ran out; the lock's validity is then recomputed.
 * Returns REDLOCK_EEXPIRED at once when the lock's validity is known to have
 * run out. Completes with REDLOCK_OK, ENOTOWNER, EEXPIRED (also when the lock
 * was lost while the extension was in flight), ENOQUORUM, ECLOCK, EAUTH,
 * EREPLY or ECANCELED. On failure the lock must not be relied on: release it.
 * Masters that did not answer may still apply ttl_ms, so a failure leaves
 * the lock no more validity than ttl_ms gives from the start of the extend.
 */
REDLOCK_API int redlock_extend_async(redlock_client *client, redlock_lock *lock,
                                     int64_t ttl_ms, redlock_done_cb cb, void *arg);
/*
 * Delete the key (every key of a set) on every master where it still holds
 * our value, never a key holding another value; for a reentrant hold,
 * remove the hold, and the key with the owner's last hold. One bounded attempt, no retries. The handle
 * stays valid (its validity becomes 0) and must still be freed. cb may be
 * NULL. Completes with REDLOCK_OK (a quorum confirmed our value gone),
 * ENOTOWNER (our value was on none of the masters that answered before the
 * outcome was known: the lock had already expired), ENOQUORUM, EAUTH, EREPLY
 * or ECANCELED.
 */
REDLOCK_API int redlock_release_async(redlock_client *client, redlock_lock *lock,
                                      redlock_done_cb cb, void *arg);

/* Callbacks take the status first, then what the operation is about, then
 * the caller's arg. */

/* Called when an auto-extended lock is lost; status says why:
 * REDLOCK_ENOTOWNER (our value is gone from a quorum: it expired or was
 * taken), REDLOCK_EEXPIRED, the reason the masters could not be reached
 * (REDLOCK_ENOQUORUM, EAUTH, EREPLY), or REDLOCK_EMAXHOLD (held for the
 * config's max_hold_ms: extension stopped, the keys left to expire). */
typedef void (*redlock_lost_cb)(int status, redlock_lock *lock, void *arg);

/*
 * Keep a held lock extended in the background: about every ttl/3 (drawn
 * within 10 % each time; the first within [0.1, 1.1] · ttl/3 of the
 * acquire, spreading a burst of acquires) an extend by the lock's TTL; a failed one is
 * retried after the config's retry_delay_ms + 0..retry_jitter_ms, doubled
 * per failure in a row, the last retry a command timeout before the guard
 * at the latest. When no extension has succeeded and
 * less than ttl/6 of validity is left, or a quorum says the value is no
 * longer ours, the lock is lost: its state becomes REDLOCK_LOCK_LOST, its
 * lost fd becomes readable, and on_lost (may be NULL) is called at once,
 * while some validity may remain for the holder to stop. Releasing the lock,
 * freeing its handle or freeing the client stops the extension. The lock
 * must have been acquired by this client (or extended successfully by it).
 * With the config's max_hold_ms set, extension stops once the lock has been
 * held that long since its acquire (since now for a handle made from a
 * value): the lock is then lost with REDLOCK_EMAXHOLD, as above, and its
 * keys expire after the TTL of its last extension.
 * REDLOCK_EEXPIRED when no validity is left, REDLOCK_EBUSY when another
 * operation is in flight on the lock or it is already auto-extended,
 * REDLOCK_EINVAL for a TTL shorter than redlock_auto_extend_min_ttl().
 */
REDLOCK_API int redlock_auto_extend_async(redlock_client *client, redlock_lock *lock,
                                          redlock_lost_cb on_lost, void *arg);

/*
 * The smallest TTL, in milliseconds, that redlock_auto_extend_async() can
 * keep extended under cfg's drift_factor (some 27 ms with the default):
 * with a shorter one the lock would be lost at its first guard, and
 * redlock_auto_extend_async() refuses it (REDLOCK_EINVAL, the reason
 * logged). REDLOCK_OK; REDLOCK_EINVAL for a NULL argument; REDLOCK_ECONFIG
 * when no TTL can be kept (a drift_factor near 1; *ttl_ms is then -1).
 */
REDLOCK_API int redlock_auto_extend_min_ttl(const redlock_config *cfg, int64_t *ttl_ms);

/*
 * Ask every master about resource: each master's result gets the key's
 * value (value, value_len; NULL when absent) and PTTL (pttl_ms). Completes
 * with REDLOCK_OK when a quorum answered, else ENOQUORUM, EAUTH or EREPLY.
 */
REDLOCK_API int redlock_inspect_async(redlock_client *client, const void *resource,
                                      size_t resource_len, redlock_done_cb cb, void *arg);
/* The same for a set of resources, read at one instant on each master: the
 * value all of them hold, with the least PTTL, or value NULL and pttl_ms -3
 * when they differ (held in part, or by different holders). */
REDLOCK_API int redlock_inspect_many_async(redlock_client *client,
                                           const void *const *resources,
                                           const size_t *resource_lens, size_t count,
                                           redlock_done_cb cb, void *arg);
/* PING every master; latency_us per master. REDLOCK_OK when a quorum
 * answered. */
REDLOCK_API int redlock_ping_async(redlock_client *client, redlock_done_cb cb, void *arg);

/*
 * What a master's settings say of Redlock's safety there (docs/operations.md,
 * "Health check"), as redlock_health_async() read them. Strings are ""
 * and numbers -1 where not known: the master was not connected, or
 * refused the question (an ACL, a renamed CONFIG).
 */
typedef struct redlock_master_health {
    const char *name;      /* the node's name, as redlock_config_node_name() */
    bool connected;        /* ready when asked; else detail says why not */
    const char *detail;    /* why it is not connected, or NULL */
    bool durable;          /* declared durable in the config */
    char role[16];         /* INFO's role: "master", or "slave" for a replica */
    int cluster_enabled;   /* INFO's cluster_enabled: 1 or 0 */
    char maxmemory_policy[32]; /* INFO's maxmemory_policy */
    int aof_enabled;       /* INFO's aof_enabled: 1 or 0 */
    char appendfsync[16];  /* CONFIG GET appendfsync */
    int rdb;               /* CONFIG GET save: 1 save points set, 0 none */
    /* 1 allowed, 0 refused by the server (error kept in *_error), -1 not
     * known: EVAL of a script; PTTL of a clock probe key
     * (redlock:clock:...); PTTL of the restart marker (redlock:restart:...). */
    int scripting, probe_keys, marker_keys;
    char scripting_error[96], probe_keys_error[96], marker_keys_error[96];
} redlock_master_health;

typedef struct redlock_health {
    unsigned master_count; /* masters[] filled, in config order */
    redlock_master_health masters[REDLOCK_MAX_NODES];
} redlock_health;

/* health is valid during the call only. */
typedef void (*redlock_health_cb)(int status, const redlock_health *health, void *arg);

/*
 * Ask every connected master about the settings that decide whether
 * Redlock is safe on it: INFO, CONFIG GET save and appendfsync, an EVAL of
 * a script returning 1, and PTTL of a clock probe key and of the restart
 * marker, pipelined on its connection; nothing of the lock path changes.
 * Completes once every master answered or a command timeout passed, with
 * REDLOCK_OK (what was not answered is not known), or REDLOCK_ECANCELED
 * when the client is freed first. REDLOCK_EINVAL for NULL arguments,
 * REDLOCK_ENOMEM.
 */
REDLOCK_API int redlock_health_async(redlock_client *client, redlock_health_cb cb, void *arg);
/*
 * Put the fencing counters in use (docs/fencing.md): on every master whose
 * counter is not in use, set it to the greater of floor and what it holds;
 * a counter in use is left as it is. For a new deployment, with floor 0;
 * else floor must be at least every token ever handed out (a restarted
 * master is seeded from the others by itself; this is for when too many
 * restarted at once). REDLOCK_OK when a quorum has its counter in use
 * (masters_locked counts them); REDLOCK_EINVAL for floor 2^53 or more.
 */
REDLOCK_API int redlock_fencing_init_async(redlock_client *client, uint64_t floor,
                                           redlock_done_cb cb, void *arg);

/* ------------------------------------------------------------------------ */
/* Blocking client, for threaded programs                                    */

typedef struct redlock_sync redlock_sync;

/* Start the I/O thread and begin connecting. REDLOCK_EINVAL for NULL
 * arguments or a config without nodes, REDLOCK_ECONFIG for inconsistent
 * settings, REDLOCK_ENOMEM, REDLOCK_ESYS if a thread or loop cannot be
 * created. */
REDLOCK_API int redlock_sync_new(redlock_sync **out, const redlock_config *cfg);
/* Release the locks it acquired and has not released (see
 * redlock_client_free()), waiting for them as long as that says (one command
 * timeout, after the rest of the connect timeout for a master still in its
 * handshake), then stop the I/O thread and free. Calls of other threads still waiting
 * when it begins complete with REDLOCK_ECANCELED (an acquire hands out no
 * lock); no call may start once it has begun. NULL is allowed. */
REDLOCK_API void redlock_sync_free(redlock_sync *sync);

/*
 * The blocking forms of the operations above, with the same statuses. Each
 * returns when its operation completes (bounded by timeouts and the retry
 * policy). result_out (may be NULL) receives the result, to be freed with
 * redlock_result_free(); it is NULL when the operation never started
 * (e.g. REDLOCK_EINVAL).
 */
REDLOCK_API int redlock_sync_acquire(redlock_sync *sync, const void *resource,
                                     size_t resource_len, const redlock_acquire_options *opts,
                                     redlock_lock **lock_out, redlock_result **result_out);
REDLOCK_API int redlock_sync_acquire_many(redlock_sync *sync, const void *const *resources,
                                          const size_t *resource_lens, size_t count,
                                          const redlock_acquire_options *opts,
                                          redlock_lock **lock_out, redlock_result **result_out);
REDLOCK_API int redlock_sync_extend(redlock_sync *sync, redlock_lock *lock, int64_t ttl_ms,
                                    redlock_result **result_out);
REDLOCK_API int redlock_sync_release(redlock_sync *sync, redlock_lock *lock,
                                     redlock_result **result_out);
/* Start auto-extension (see redlock_auto_extend_async()). on_lost runs on
 * the I/O thread; a holder may instead poll redlock_lock_state() or wait on
 * redlock_lock_lost_fd(). */
REDLOCK_API int redlock_sync_auto_extend(redlock_sync *sync, redlock_lock *lock,
                                         redlock_lost_cb on_lost, void *arg);
REDLOCK_API int redlock_sync_inspect(redlock_sync *sync, const void *resource,
                                     size_t resource_len, redlock_result **result_out);
REDLOCK_API int redlock_sync_fencing_init(redlock_sync *sync, uint64_t floor,
                                          redlock_result **result_out);
REDLOCK_API int redlock_sync_inspect_many(redlock_sync *sync, const void *const *resources,
                                          const size_t *resource_lens, size_t count,
                                          redlock_result **result_out);
REDLOCK_API int redlock_sync_ping(redlock_sync *sync, redlock_result **result_out);

/*
 * Scoped: run fn with the lock held. Acquires (as redlock_sync_acquire(),
 * with opts), auto-extends the lock while fn runs on the calling thread,
 * then releases it and frees the handle, whatever fn returned (also when
 * the thread is canceled in fn). fn gets the handle to read, not to
 * release or free: redlock_lock_state() (HELD while the lock lasts),
 * redlock_lock_lost_fd(), its fencing token. *fn_result (may be NULL) gets
 * fn's return value, 0 when fn did not run. Returns REDLOCK_OK when fn ran
 * with the lock held throughout; REDLOCK_ELOST when fn ran but the lock
 * was lost meanwhile (its section may have overlapped another holder's);
 * otherwise the acquire's status (or auto-extension's, e.g. a TTL below
 * redlock_auto_extend_min_ttl()) and fn did not run. result_out (may be
 * NULL) receives the acquire's result. A release that fails afterwards
 * changes nothing returned: the keys expire with their TTL.
 */
typedef int (*redlock_locked_fn)(redlock_lock *lock, void *arg);
REDLOCK_API int redlock_sync_with_lock(redlock_sync *sync, const void *resource,
                                       size_t resource_len, const redlock_acquire_options *opts,
                                       redlock_locked_fn fn, void *arg, int *fn_result,
                                       redlock_result **result_out);
/* The same with one lock on several resources (redlock_sync_acquire_many()). */
REDLOCK_API int redlock_sync_with_lock_many(redlock_sync *sync, const void *const *resources,
                                            const size_t *resource_lens, size_t count,
                                            const redlock_acquire_options *opts,
                                            redlock_locked_fn fn, void *arg, int *fn_result,
                                            redlock_result **result_out);

/* ------------------------------------------------------------------------ */
/* Statistics, for an operator to export                                     */

/* Histogram buckets, fixed so that two snapshots can be subtracted: bucket
 * 0 counts values below 1, bucket b (1 <= b < REDLOCK_STATS_BUCKETS - 1)
 * values in [2^(b-1), 2^b), and the last one everything from 2^(b-1) up. */
#define REDLOCK_STATS_BUCKETS 32
/* Room in the per-outcome and per-status arrays (index: the outcome, or
 * minus the status), beyond the values that exist today. */
#define REDLOCK_STATS_OUTCOMES 16
#define REDLOCK_STATS_STATUSES 32

/* A master's connection, now. */
typedef enum redlock_connection_state {
    REDLOCK_CONNECTION_DOWN = 0,       /* none: waiting to reconnect */
    REDLOCK_CONNECTION_CONNECTING = 1, /* connect and handshake under way */
    REDLOCK_CONNECTION_READY = 2,      /* requests go straight out */
    REDLOCK_CONNECTION_CLOSING = 3     /* the client is being freed */
} redlock_connection_state;

typedef struct redlock_master_stats {
    uint64_t requests;      /* requests written to the master (a resend counts again) */
    /* Requests by outcome (index: a redlock_master_outcome), each counted
     * once, as its operation counted it: a reply after the deadline is a
     * timeout here, and also counted in late. */
    uint64_t outcomes[REDLOCK_STATS_OUTCOMES];
    uint64_t late;          /* replies after their deadline */
    uint64_t connects;      /* connections made ready (the first, then reconnects) */
    int state;              /* a redlock_connection_state */
    /* Reply latency, from send to reply, in microseconds: a histogram
     * (REDLOCK_STATS_BUCKETS) and the sum of what it counts. */
    uint64_t latency_us[REDLOCK_STATS_BUCKETS];
    uint64_t latency_sum_us;
    /* Now: requests sent and not answered (at most max_in_flight), and
     * requests waiting in the client for room or for the handshake. */
    uint64_t in_flight;
    uint64_t queued;
} redlock_master_stats;

/* Whether a master's OKs count toward a quorum now, for its restart
 * (docs/safety.md, "Masters restarted empty"). */
typedef enum redlock_restart_state {
    REDLOCK_RESTART_UNKNOWN = 0,  /* its run not read yet (connecting, or never) */
    REDLOCK_RESTART_COUNTS = 1,   /* durable, or its run began over max_ttl_ms ago */
    REDLOCK_RESTART_EXCLUDED = 2  /* its run is too young: its OKs do not count yet */
} redlock_restart_state;

typedef struct redlock_master_restart {
    int state;           /* a redlock_restart_state */
    int64_t excluded_ms; /* EXCLUDED: milliseconds until its OKs count; else 0 */
    int64_t age_ms;      /* since its run began, by the bound this client
                            trusts; -1 when none (durable, or UNKNOWN) */
} redlock_master_restart;

/* A master's expiry clock as this client has checked it (docs/safety.md),
 * as redlock_master_result has it. */
typedef struct redlock_master_clock {
    int state; /* a redlock_clock_state */
    bool slow; /* proven slower than ours: its keys live longer (reported only) */
} redlock_master_clock;

/*
 * A snapshot of a client's counters since it was created. The caller owns
 * it and sets size to sizeof(redlock_stats) first: fields may be added at
 * the end in later versions, and the library fills only the size given.
 * Each counter is exact; the snapshot is not one instant across counters.
 */
typedef struct redlock_stats {
    size_t size;
    uint64_t acquires[REDLOCK_STATS_STATUSES]; /* completed acquires by status: index -status */
    uint64_t extends;          /* extends completed OK (auto-extension's included) */
    uint64_t extend_failures;  /* extends that failed (auto-extension's included) */
    uint64_t auto_extend_failures; /* auto-extension attempts that failed; it retries */
    uint64_t locks_lost;       /* auto-extended locks given up (the lost callback ran) */
    uint64_t releases;         /* releases completed OK */
    uint64_t release_failures; /* releases that completed with another status */
    uint64_t locks_held;       /* acquired and not yet released, lost or freed */
    /* How long locks were held, in milliseconds, from the start of their
     * acquire to their release, loss or free: a histogram and its sum. */
    uint64_t hold_ms[REDLOCK_STATS_BUCKETS];
    uint64_t hold_sum_ms;
    unsigned master_count;     /* masters[] filled, in config order */
    redlock_master_stats masters[REDLOCK_MAX_NODES];
    /* Since 0.3.0 (filled when size covers them): each master's restart
     * state now, in config order. */
    redlock_master_restart restarts[REDLOCK_MAX_NODES];
    /* Since 0.3.0 (filled when size covers them): each master's clock
     * verdict now, in config order. */
    redlock_master_clock clocks[REDLOCK_MAX_NODES];
} redlock_stats;

/* Zero *stats and set its size to sizeof(redlock_stats): call it before
 * redlock_client_stats() or redlock_sync_stats(). Inline, so that the size
 * is the one of the header the caller was compiled with, whatever version
 * of the library it runs with. */
static inline void redlock_stats_init(redlock_stats *stats)
{
    memset(stats, 0, sizeof(*stats));
    stats->size = sizeof(*stats);
}
/* Fill *stats (size set by the caller; at least up to masters[], the
 * first version's struct: later fields are filled as far as size goes).
 * Any thread: the counters are atomic. REDLOCK_EINVAL for NULL or a size
 * too small. */
REDLOCK_API int redlock_client_stats(const redlock_client *client, redlock_stats *stats);
REDLOCK_API int redlock_sync_stats(const redlock_sync *sync, redlock_stats *stats);
/* The name of a redlock_connection_state: "down", "connecting", "ready",
 * "closing"; "unknown" otherwise. */
REDLOCK_API const char *redlock_connection_state_name(int state);

/*
 * The snapshot in the Prometheus text exposition format (version 0.0.4),
 * for a scrape or a node_exporter textfile (docs/operations.md,
 * "Metrics"): every metric with its # HELP and # TYPE lines, counters
 * named _total, times in seconds, label values lower case and escaped.
 * cfg names the masters (label master="host:port", never a password): the
 * client's config, whose nodes are in the snapshot's order; NULL labels
 * them by index ("0", "1", ...). prefix starts every metric name
 * ([a-zA-Z_][a-zA-Z0-9_]*, at most 64 characters); NULL: "redlock".
 * Writes the text and a NUL into buf and sets *needed (when not NULL) to
 * its length with the NUL. REDLOCK_ENOSPC when len is smaller: nothing
 * written but a NUL (len > 0), *needed the size it takes; REDLOCK_EINVAL
 * for a NULL stats or buf (len > 0), a bad prefix or stats->size too
 * small. Any thread; no allocation.
 */
REDLOCK_API int redlock_stats_format_prometheus(const redlock_stats *stats,
                                                const redlock_config *cfg, const char *prefix,
                                                char *buf, size_t len, size_t *needed);

#ifdef __cplusplus
}
#endif

#endif /* REDLOCK_REDLOCK_H */
