/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CLI-test harness: runs the `redlock` tool as a child process against a
 * fleet of real masters, with bounded waits everywhere. Every wait bound
 * (timeout_ms arguments) is multiplied by the fleet's time scale
 * (REDLOCK_TEST_TIME_SCALE, see fleet.h).
 *
 * - Every test gets a fleet, a scratch directory inside the fleet's
 *   temporary directory (removed with it, even if the test process dies),
 *   and a config file for the fleet (cli.config).
 * - The tool runs with stdin from /dev/null, stdout and stderr captured,
 *   in its own process group, killed (SIGKILL) if the test process dies.
 *   With REDLOCK_TEST_TOOL_WRAPPER set in the environment (a program,
 *   e.g. test/valgrind/memcheck.sh), the harness runs WRAPPER TOOL ARGS...
 *   instead of TOOL ARGS...; the wrapper must exec the tool in its own
 *   process, which keeps the pid the tests signal and wait for; for
 *   cli_run_closed() it gets REDLOCK_TEST_CLOSE_FDS (the `closed` mask)
 *   and closes those fds itself before it execs the tool.
 *   Its environment is the test's, except that HOME and XDG_CONFIG_HOME
 *   point to empty directories and REDLOCK_CONFIG is unset, so no config
 *   of the machine's user is ever read; `env` entries change that.
 * - Results, paths and file contents returned by the harness belong to the
 *   fixture and are freed by cli_teardown(): tests never free them.
 * - cli_teardown() kills (SIGKILL) and reaps every process still running
 *   that the test started or that was left to it (the fleet makes the test
 *   process a child subreaper, so orphans of the tool become its children).
 */
#ifndef REDLOCK_TEST_CLI_HARNESS_H
#define REDLOCK_TEST_CLI_HARNESS_H

#include "fleet.h"
#include "testclock.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Programs under test and helpers, given by CMake. */
#ifndef REDLOCK_TOOL
#error "REDLOCK_TOOL (path of the redlock tool) must be defined"
#endif
#ifndef MONOTIME
#error "MONOTIME (path of the monotime helper) must be defined"
#endif
#ifndef SIGWATCH
#error "SIGWATCH (path of the sigwatch helper) must be defined"
#endif

#define CLI_MASTERS 5
#define CLI_RUN_TIMEOUT_MS 20000 /* default bound on one run of the tool */

/* A NULL-terminated argument list for cli_run(): CLI_ARGS("ping"). */
#define CLI_ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
/* A NULL-terminated environment change list: CLI_ENV("A=1", "B"). */
#define CLI_ENV(...) ((const char *const[]){__VA_ARGS__, NULL})

typedef struct cli_fixture {
    fleet *fleet;
    const char *dir;    /* scratch directory of the test */
    const char *home;   /* empty directory given as HOME */
    const char *xdg;    /* empty directory given as XDG_CONFIG_HOME */
    const char *config; /* config for every master (cli_write_config defaults) */
} cli_fixture;

extern cli_fixture cli;

/* Start `masters` masters (opts may be NULL) and prepare the directories
 * and cli.config. Fails the test if anything is missing, the tool included. */
void cli_setup(size_t masters, const fleet_options *opts);
/* Five masters without password: a TestSuite .init. */
void cli_setup_five(void);
/* Kill and reap what is left, stop the fleet, free everything. */
void cli_teardown(void);

/* ---- Configs and files ----------------------------------------------- */

typedef struct cli_config_options {
    const char *password;     /* written as `password:` on every node */
    const char *password_env; /* written as `password_env:` on every node */
    const char *password_file; /* written as `password_file:` on every node */
    long ttl_ms;              /* 0: left out (the library's default) */
    long connect_timeout_ms;  /* 0: 500 (times the fleet's time scale) */
    long command_timeout_ms;  /* 0: 500 (generous: a loaded machine; scaled too) */
    long retry_count;         /* 0: 3 */
    long retry_delay_ms;      /* 0: 20 */
    long retry_jitter_ms;     /* 0: 20 */
    const int *ports;         /* nodes 127.0.0.1:ports[i]; NULL: every master */
    size_t port_count;
    const char *extra;        /* more top-level YAML lines, or NULL */
} cli_config_options;

/* Write a config to DIR/name (o NULL: defaults); returns its path. */
const char *cli_write_config(const char *name, const cli_config_options *o);
/* env (may be NULL) with REDLOCK_CONFIG naming a config that declares
 * the masters durable: for runs that give their masters with --node
 * alone, which the tool reads with that config's settings. The fleet's
 * masters, started moments ago, would else look restarted and not count
 * (docs/safety.md, "Masters restarted empty"). */
const char *const *cli_env_durable(const char *const env[]);
/* Write text to DIR/name with the given mode; returns its path. */
const char *cli_write_file(const char *name, const char *text, int mode);
/* DIR/name (nothing is created). */
const char *cli_path(const char *name);
/* A formatted string, owned by the fixture. */
const char *cli_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The file's contents, or NULL when it cannot be read. */
const char *cli_read_file(const char *path);
/* A port on 127.0.0.1 that refuses connections for the rest of the test
 * (bound by the harness, never listening). */
int cli_dead_port(void);

/* ---- Running the tool ------------------------------------------------- */

typedef struct cli_result {
    const char *cmdline; /* for messages */
    int exit_code;       /* -1 when killed by a signal */
    int signal;          /* the signal that killed it, else 0 */
    const char *out;     /* captured stdout, NUL-terminated */
    const char *err;     /* captured stderr, NUL-terminated */
    double elapsed_ms;   /* from spawn to exit */
} cli_result;

typedef struct cli_proc cli_proc;

/* Run `redlock ARGS...` (args without the program name), with env changes:
 * "NAME=VALUE" sets, "NAME" unsets (env may be NULL). Waits until it exits
 * and its output is closed, at most timeout_ms; past that, kills it and
 * fails the test. */
const cli_result *cli_run(const char *const args[], const char *const env[], int timeout_ms);
/* As cli_run() (no env changes), with the tool started with the standard
 * descriptors in `closed` closed: bit N (1 << N) for fd N, 0 to 2. What
 * it writes to a closed one is not captured (that out or err is ""). */
const cli_result *cli_run_closed(const char *const args[], unsigned closed, int timeout_ms);
/* Start it in the background. */
cli_proc *cli_spawn(const char *const args[], const char *const env[]);
/* The same for another program in the tool's place (another build of it). */
cli_proc *cli_spawn_program(const char *program, const char *const args[],
                            const char *const env[]);
pid_t cli_proc_pid(const cli_proc *p);
/* Whether it has exited (it is not reaped: cli_wait() does that). */
bool cli_proc_exited(cli_proc *p);
/* As cli_run() for a spawned process; p is freed. */
const cli_result *cli_wait(cli_proc *p, int timeout_ms);

/* Fail the test unless r exited with code; the message shows the command
 * line, the status, stdout and stderr. */
void cli_expect_exit(const cli_result *r, int code);
/* Fail unless stderr is exactly one line starting with "redlock: ". */
void cli_expect_one_error_line(const cli_result *r);
/* The first line of s, without its newline. */
const char *cli_first_line(const char *s);
/* Whether s is exactly 32 lowercase or uppercase hex digits. */
bool cli_is_value(const char *s);
/* A value `run` writes: 32 hex digits, then its holder metadata (";h=..."). */
bool cli_is_run_value(const char *s);

/* ---- Other processes --------------------------------------------------- */

/* Watch a process the tool started (e.g. its CMD): returns a pidfd, closed
 * by the teardown, which also kills the process if it is still running. */
int cli_track(pid_t pid);
/* Wait until the tracked process exits, at most timeout_ms. true with
 * *at_ms (if not NULL) set to when it was seen gone; false on timeout. */
bool cli_wait_gone(int pidfd, int timeout_ms, double *at_ms);

/* What /proc/PID/stat says of a process. */
typedef struct cli_stat {
    char comm[64];
    char state; /* 'Z' for a zombie */
    pid_t ppid, pgid, sid;
} cli_stat;
/* false when pid does not exist (any more). */
bool cli_proc_stat(pid_t pid, cli_stat *st);

/* sigwatch's file: the time (ns) of the first line starting with event
 * ("START", "TERM", ...), or -1; and the pid on its START line, or 0. */
long long cli_sigwatch_ns(const char *file, const char *event);
pid_t cli_sigwatch_pid(const char *file);

/* Poll pred(arg) every 5 ms until it is true or timeout_ms passes. */
bool cli_wait_until(bool (*pred)(void *arg), void *arg, int timeout_ms);
/* A cli_wait_until() predicate: whether the file at path (a const char *)
 * exists. */
bool cli_file_exists(void *path);

/* ---- Masters ------------------------------------------------------------ */

/* "127.0.0.1:PORT" of master i. */
const char *cli_node(size_t i);
/* Masters (running, not paused) on which key holds value / exists. */
size_t cli_masters_holding(const char *key, const char *value);
size_t cli_masters_with_key(const char *key);
/* For messages: what each master holds under key ("0: absent, 1: VALUE
 * pttl 123, ..."). */
const char *cli_describe_key(const char *key);
/* Fail unless key is on no master; the message starts with context. */
void cli_expect_key_gone(const char *key, const char *context);
/* Keys on every running, unpaused master together (DBSIZE), but the
 * fencing counter and clock probes; -1 on error. */
long long cli_keys_total(void);
/* Every master's keys (the first few) and their PTTLs, for a failure message. */
const char *cli_keys_listing(void);

/* Masters on which key holds value with a PTTL in (min_ms, max_ms]. */
size_t cli_masters_with_pttl(const char *key, const char *value, long long min_ms,
                             long long max_ms);

/* Fail unless key is absent, or set to expire (0 < PTTL <= ttl_ms), on
 * every master answering; the message starts with context. */
void cli_expect_key_expiring(const char *key, long long ttl_ms, const char *context);

/* ---- Losing a lock held by `redlock run` ---------------------------------- */

/* The TTL of such runs (their --ttl). */
#define CLI_LOST_TTL_MS 1500
/* A config (DIR/lost.yaml) for them: command timeouts of 200 ms, so that
 * failed extensions end well within a sixth of the TTL. */
const char *cli_lost_config(void);
/* Wait until the lock on key has been extended (its PTTL on the last master
 * went up), at most timeout_ms, then a sixth of the TTL more: a loss then
 * comes mid-cycle, not right after the acquire. false on timeout. */
bool cli_wait_extended(const char *key, int timeout_ms);
/* SIGSTOP masters 0 to 2, a majority: the lock on key is lost. *paused_ms
 * is when. Returns the time by which the lock's validity ended: it cannot
 * outlast the key on the masters still answering, read there after the
 * pause (no extension can reach a majority any more). */
double cli_pause_majority(const char *key, double *paused_ms);
/* Resume them; then no copy of key may outlive CLI_LOST_TTL_MS. */
void cli_resume_majority(const char *key);

/* `redlock --config cli.config acquire [--ttl ttl] resource` (ttl may be
 * NULL); fails the test unless it exits 0 printing a value. The value. */
const char *cli_acquire(const char *resource, const char *ttl);
/* The line of text that names node ("127.0.0.1:PORT" not followed by a
 * digit), without its newline; NULL if none. Fails if several do. */
const char *cli_line_about(const char *text, const char *node);

/* ---- Between the harness's files (cli_harness.c, cli_process.c) ---------- */

/* p, freed by the teardown; fails the test when p is NULL. */
void *cli_own(void *p);
/* Kill (SIGKILL) and reap every spawned and tracked process. */
void cli_processes_kill(void);
/* Kill and reap the processes left to us as subreaper (fleet stopped). */
void cli_processes_reap_adopted(void);

#endif
