/* SPDX-License-Identifier: BSD-3-Clause */
/* What the redlock tool's files share. The tool uses the public API only. */
#ifndef REDLOCK_CLI_H
#define REDLOCK_CLI_H

#include <ev.h>
#include <redlock/redlock.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sysexits.h>

/* Exit statuses of our own (see docs/cli.md); the rest come from sysexits.h. */
#define CLI_EXIT_NOT_OURS 1 /* release/extend: the lock is not ours */
#define CLI_EXIT_LOST 80    /* run: the lock was lost while CMD ran */
#define CLI_EXIT_HELD EX_TEMPFAIL /* acquire/run: held by another holder (75) */

#define CLI_MAX_NODES REDLOCK_MAX_NODES

/* The invocation: global options, then the command's state. */
typedef struct cli {
    const char *config_path;       /* --config, or NULL */
    char *nodes[CLI_MAX_NODES];    /* --node values, in argv: cli_load_config()
                                      overwrites their passwords there */
    size_t node_count;
    int verbosity;                 /* number of -v */
    bool quiet;                    /* -q: no message when held by another */
    redlock_config *cfg;
    struct ev_loop *loop;
    redlock_client *client;
    redlock_lock *lock;     /* the command's lock handle, or NULL */
    redlock_result *result; /* the command's result, or NULL */
} cli;

/* "redlock: " + message + newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse TIME as timeout(1) and systemd write it: a bare number of
 * seconds ("2", "1.5"), or numbers each with a unit us, ms, s, m (min), h
 * or d, summed ("250ms", "1m30s", "1h 30min"), rounded to the nearest
 * millisecond, halves up. Returns 0 and *ms in [min, max], CLI_TIME_RANGE
 * for a TIME outside them, CLI_TIME_TOO_FINE for one above zero but
 * below 1 ms ("500us"), or CLI_TIME_INVALID for anything else. */
#define CLI_TIME_INVALID (-1)
#define CLI_TIME_RANGE (-2)
#define CLI_TIME_TOO_FINE (-3)
int cli_parse_duration(const char *text, int64_t min, int64_t max, int64_t *ms);

/* A --node value: HOST:PORT, HOST, [IPV6]:PORT, [IPV6] or unix:/path; or
 * a URL (SCHEME://...), which only the library reads. */
typedef struct cli_node {
    char host[256];  /* or the socket path; empty for a URL */
    int port;        /* 0 for a unix socket or a URL */
    bool is_unix;
    bool is_url;     /* for redlock_config_add_node_url_auth(), as written */
} cli_node;
int cli_parse_node(const char *text, cli_node *node);

/* Load the config (--config, $REDLOCK_CONFIG, --node, default files) into
 * c->cfg and set logging; nothing to do when c->cfg is loaded already.
 * Returns 0, or the exit status after reporting. */
int cli_load_config(cli *c);
/* Create the client on the default loop. Returns 0 or an exit status. */
int cli_connect(cli *c);
/* cli_load_config(), then cli_connect(). */
int cli_open(cli *c);

/* The resources a command names, in the order given: one lock on all of
 * them. The names are argv's strings. */
typedef struct cli_resources {
    const char *names[REDLOCK_MAX_RESOURCES];
    size_t lens[REDLOCK_MAX_RESOURCES];
    size_t count;
} cli_resources;
/* The first count - trailing operands of command as its resources (the
 * trailing ones, such as VALUE, are the caller's). 0, or EX_USAGE after
 * saying what is wrong: too few operands, more than REDLOCK_MAX_RESOURCES
 * resources, an empty or too long one, one named twice, too many bytes in
 * all (resource_set.c). */
int cli_resources_take(const char *command, char **operands, int count, int trailing,
                       cli_resources *set);
/* Room for a set of resources in a message. */
#define CLI_SHOWN_SET_SIZE 200
/* The set as messages show it: each resource as cli_shown() shows it,
 * joined with ", ", and "and N more" where buf (size >= CLI_SHOWN_SIZE +
 * 32) is full. Returns buf. */
const char *cli_resources_shown(const cli_resources *set, char *buf, size_t size);
/* An inspected master's pttl_ms when the resources do not all hold one
 * value there (redlock_inspect_many_async()). */
#define CLI_PTTL_MIXED (-3)

/* Exit status for a library status and its result (r may be NULL): of
 * release/extend/status/ping, and of acquire/run, where "held" exits
 * conflict_exit (75 unless -E). See exit_status.c. */
int cli_exit_for(int status, const redlock_result *r);
int cli_exit_for_acquire(int status, const redlock_result *r, int conflict_exit);
/* Free the client, letting it finish (releases, closing connections). */
void cli_disconnect(cli *c);

/* Blocking forms of the asynchronous operations, run on c->loop. The
 * result (may be NULL when not wanted) is a copy to free. */
int cli_acquire(cli *c, const cli_resources *set, const redlock_acquire_options *opts,
                redlock_lock **lock, redlock_result **result);
int cli_extend(cli *c, redlock_lock *lock, int64_t ttl_ms, redlock_result **result);
int cli_release(cli *c, redlock_lock *lock, redlock_result **result);
/* cli_release() with no result, calling sent(arg) once its requests are
 * written, before the masters answer. */
int cli_release_then(cli *c, redlock_lock *lock, void (*sent)(void *arg), void *arg);
int cli_inspect(cli *c, const cli_resources *set, redlock_result **result);
int cli_ping(cli *c, redlock_result **result);
int cli_fencing_init(cli *c, uint64_t floor, redlock_result **result);
/* What ping and check begin with: cli_open(), then cli_ping() into
 * c->result, its status in *status. Returns 0, or the exit status when
 * there is no result (told as "COMMAND: why", EX_SOFTWARE) or no client. */
int cli_open_and_ping(cli *c, const char *command, int *status);

/* "; N of M masters failed, e.g. NAME: DETAIL" when some did, else "". */
void cli_describe_failures(const redlock_result *r, char *buf, size_t len);
/* One line on why an acquire failed; none when quiet and the lock is held
 * by another holder (REDLOCK_ECONFLICT: the wait ran out, if any). */
void cli_report_not_acquired(const cli_resources *set, int status, const redlock_result *r,
                             bool quiet);

/* JSON output (json_out.c): one object, on one line, as a string to
 * free; NULL when out of memory. r may be NULL (out of memory) but for
 * status and ping. cli_print_json() prints it (with a newline) and frees it. */
char *cli_json_acquire(const cli_resources *set, int status, const redlock_lock *lock,
                       const redlock_result *r);
char *cli_json_release(const cli_resources *set, int status, const redlock_result *r);
char *cli_json_extend(const cli_resources *set, int status, const redlock_lock *lock,
                      const redlock_result *r);
/* stats (may be NULL): the client's counters, shown per master. */
char *cli_json_status(const cli_resources *set, int status, const redlock_result *r,
                      const redlock_stats *stats);
char *cli_json_ping(int status, const redlock_result *r, const redlock_stats *stats);
char *cli_json_fencing_init(int status, uint64_t floor, const redlock_result *r);
/* Whether fencing-init put master m's counter in use (it may have found it
 * in use already). */
bool cli_fencing_initialized(const redlock_master_result *m);

/* check (cmd_check.c): what it found on one master. A finding says what
 * is wrong and what to change, in one sentence; an unsafe one keeps the
 * master out of the safe ones a quorum is counted from. */
#define CLI_CHECK_MAX_FINDINGS 12
typedef enum cli_check_state {
    CLI_CHECK_OK,          /* nothing found */
    CLI_CHECK_WARNING,     /* findings, none unsafe: it counts */
    CLI_CHECK_UNSAFE,      /* a finding that makes it unsafe, or not counted now */
    CLI_CHECK_UNREACHABLE  /* not answering */
} cli_check_state;
typedef struct cli_finding {
    int severity;     /* CLI_CHECK_WARNING or CLI_CHECK_UNSAFE */
    const char *code; /* what it is about: "maxmemory-policy", "replica", ... */
    char message[480];
} cli_finding;
typedef struct cli_check_master {
    const char *clock;       /* "ok", "fast", "slow" or "not-checked" */
    int state;               /* a cli_check_state */
    unsigned finding_count;
    char clock_why[128];     /* not-checked: why; else "" */
    char persistence[64];    /* "none", "rdb", "aof (appendfsync always)", ..., "unknown" */
    cli_finding findings[CLI_CHECK_MAX_FINDINGS];
} cli_check_master;
/* health may be NULL (not read); masters[] parallels r->masters. */
char *cli_json_check(int status, const redlock_result *r, const redlock_stats *stats,
                     const redlock_health *health, const cli_check_master *masters,
                     unsigned safe);
void cli_print_json(char *text);
/* bytes in standard base64 (RFC 4648, padded), to free; NULL when out of memory. */
char *cli_base64(const unsigned char *bytes, size_t len);
/* Text output: bytes with controls, non-ASCII and backslash as \xNN. */
void text_bytes(FILE *out, const char *s, size_t len);
/* Room for a resource in a message; longer ones are cut. */
#define CLI_SHOWN_SIZE 100
/* s with controls and non-ASCII as \xNN, into buf (size > 4): one line
 * for a message whatever s holds, cut with "..." where buf is full.
 * Returns buf. */
const char *cli_shown(char *buf, size_t size, const char *s);
/* Unix time in ms as UTC ISO 8601, "2026-01-31T12:00:00.250Z", into buf
 * (CLI_TIME_SIZE bytes). Returns buf. */
#define CLI_TIME_SIZE 32
const char *cli_utc_time(char *buf, int64_t unix_ms);

/* Every command option's value; each command uses some of them. */
typedef struct cli_options {
    int64_t ttl_ms;        /* --ttl; -1: the config's */
    int64_t wait_ms;       /* --wait; -1: the config's retry policy;
                              CLI_WAIT_FOREVER: until acquired */
    int64_t kill_after_ms; /* --kill-after; -1: half the validity left */
    int64_t max_hold_ms;   /* --max-hold; -1: the config's max_hold_ms */
    int64_t lock_delay_ms; /* --lock-delay; -1: the config's lock_delay_ms */
    bool json;             /* --json */
    int conflict_exit;     /* -E: the exit status when held */
    const char *owner;     /* --owner: the reentrant form's token, or NULL */
    int fencing;           /* --fencing 1, --no-fencing 0; -1: the command's
                              default (run: on; acquire: the config's) */
    const char *label;     /* --label: the holder label, or NULL */
    const char *metrics_file; /* run --metrics-file, or NULL */
    int slots;             /* --slots: a semaphore's slots; 0: a lock */
} cli_options;
#define CLI_WAIT_FOREVER INT64_MAX
#define CLI_OPTIONS_INIT {-1, -1, -1, -1, -1, false, CLI_EXIT_HELD, NULL, -1, NULL, NULL, 0}

/* Acquire options from --ttl, --wait, --owner, --fencing/--no-fencing,
 * --label and --slots. */
redlock_acquire_options cli_acquire_options(const cli_options *o);

/* cli_load_config(), then the settings the command's options override
 * (--max-hold, --lock-delay). Returns 0 or an exit status. */
int cli_load_settings(cli *c, const cli_options *o);

#endif
