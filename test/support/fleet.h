/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The test fleet: N real redis-server processes on loopback ports, each in
 * its own temporary directory, for integration tests and the demo. Faults
 * are real: kill -9, SIGSTOP/SIGCONT, restart on the same port.
 *
 * Lifetime
 * - fleet_start() forks and execs every server, then waits until each one
 *   answers PING (5 s at most). fleet_stop() kills (SIGKILL) and reaps every
 *   server, paused ones included, and removes the temporary directory.
 * - A fleet still alive when its process calls exit() is stopped by an
 *   atexit handler. If the process dies without exit() (a crash, abort(),
 *   a Criterion timeout's SIGKILL), each server is killed by the kernel
 *   (PR_SET_PDEATHSIG) and the fleet's janitor -- a small process forked by
 *   fleet_start(), waiting on a pipe from the test process -- removes the
 *   temporary directory ($TMPDIR or /tmp, "redlock-fleet-XXXXXX").
 * - Servers are killed when the *thread* that started them exits
 *   (PR_SET_PDEATHSIG follows the thread): start, restart and make replicas
 *   from the main thread, or from a thread that outlives the fleet.
 * - Only the process that started a fleet may stop it; in a forked child,
 *   fleet_stop() only frees memory.
 *
 * Threads: the fleet is not synchronised. Use one fleet from one thread at a
 * time (the library under test may run its own threads meanwhile).
 *
 * Processes and signals
 * - Each server runs in its own process group with the forks it makes
 *   (replication, AOF rewrite); kill, pause and resume signal the group.
 * - A write to a server that has gone away raises SIGPIPE, so fleet_start()
 *   sets SIGPIPE to SIG_IGN for the whole process; tests should keep it
 *   ignored.
 * - fleet_start() makes the process a child subreaper
 *   (PR_SET_CHILD_SUBREAPER), so a killed server's forks are reparented to
 *   it rather than to init and are reaped with the server, leaving no
 *   zombie.
 * - The fixture reaps its own children by pid: its servers, their groups
 *   and the janitor. Do not set SIGCHLD to SIG_IGN or call waitpid(-1, ...)
 *   while a fleet is alive.
 *
 * Ports: every server listens on 127.0.0.1 only. Its port is chosen by the
 * kernel (bind to port 0) and stays reserved by the fleet (a bound,
 * non-listening socket) until fleet_stop(), so while a server is down no
 * other program's bind(0) or outgoing connection takes the port, and the
 * server can restart on it. Connecting to a killed server's port is refused.
 *
 * Servers run `redis-server --port P --bind 127.0.0.1 --dir D --save ""
 * --appendonly no|yes --logfile D/redis.log --daemonize no --protected-mode no
 * --repl-diskless-sync-delay 0` plus the options below. The binary is
 * $REDLOCK_REDIS_SERVER if set, else the one CMake was configured with
 * (REDLOCK_REDIS_SERVER, default "redis-server"), looked up on PATH when the
 * name has no '/'. A ':'-separated list of them makes a mixed fleet: server
 * i runs the (i mod count)th (scripts/servers-fetch.sh gives Redis 8 and
 * Valkey 8 and 9 as redis-server wrappers).
 *
 * Time scale: under a slow tool (valgrind, a sanitizer) the code under test
 * runs many times slower than the servers. REDLOCK_TEST_TIME_SCALE in the
 * environment, an integer 1..100 (anything else counts as 1), stretches
 * time for tests: the fleet's own waits (starting, reaping, pausing), the
 * timeouts of fleet_connect() and of fleet_config(), and every bound a test
 * passes through fleet_scaled_ms(). At 1 (normal runs) nothing changes.
 *
 * Errors are reported on stderr, prefixed "fleet: ", with the tail of the
 * server's log when a server does not start. Passwords are never printed
 * and never appear on a command line (they go to a 0600 config file).
 */
#ifndef REDLOCK_TEST_FLEET_H
#define REDLOCK_TEST_FLEET_H

#include <hiredis/hiredis.h>
#include <redlock/redlock.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_MAX_SERVERS 64        /* = REDLOCK_MAX_NODES */
#define FLEET_START_TIMEOUT_MS 5000 /* until every server of a start answers
                                       (times the time scale) */

typedef struct fleet fleet;

typedef struct fleet_options {
    const char *requirepass;        /* NULL or "": no password. Also given to
                                       replicas as masterauth. */
    int appendonly;                 /* 1: appendonly yes + appendfsync always,
                                       so acknowledged writes survive kill -9 */
    const char *const *extra_args;  /* more redis-server arguments for every
                                       server ("--name", "value", ...),
                                       NULL-terminated; NULL: none */
    int unix_socket;                /* 1: each server also listens on a unix
                                       socket in its directory, mode 0700
                                       (fleet_unix_socket()) */
    int tls;                        /* a fleet_tls: TLS only on each port */
    const char *const *faketime;    /* NULL, or one entry per server: NULL
                                       for the real clock, else its initial
                                       fake wall clock (see "Fake clocks") */
} fleet_options;

/*
 * Fake clocks: a server given a faketime spec runs under libfaketime
 * (Debian's faketime/libfaketime), with a shim preloaded before it so
 * that its jemalloc does not hang it at start (faketime_shim.c). Only its
 * wall clock is fake (FAKETIME_DONT_FAKE_MONOTONIC): what Redis expires
 * keys by. The spec is libfaketime's, kept in a file of the server's
 * directory that it reads at every call (FAKETIME_NO_CACHE=1), so a change
 * takes effect at once: "+0" the real time, "+0 x3" three times as fast
 * (from the server's start), "+5" five seconds ahead. fleet_set_faketime()
 * rewrites it: a step, or a new rate (which counts from the server's
 * start, so it jumps too); fleet_set_clock_rate() changes the rate from
 * now on with no step. A restart keeps the current spec. libfaketime keeps a shared
 * memory segment and a semaphore per process in /dev/shm, which a SIGKILL
 * leaves behind: the fleet removes them when it kills a server (not when
 * the test process itself dies: then the janitor removes only the
 * directory).
 */


/*
 * TLS fleets: each server listens with TLS only on its port (--port 0
 * --tls-port P), with the certificates of fleet_tls.h made in
 * fleet_tls_dir() (server.crt for 127.0.0.1 and localhost, signed by
 * ca.crt), and on a plain unix socket, which the fleet's own connections,
 * probes and data helpers use (fleet_connect, fleet_command, fleet_ping,
 * ...). fleet_config() then turns TLS on, trusting ca.crt, with client.crt
 * as the client certificate.
 */
enum fleet_tls {
    FLEET_TLS_OFF = 0,
    FLEET_TLS_ON = 1,         /* --tls-auth-clients optional */
    FLEET_TLS_CLIENT_CERT = 2, /* --tls-auth-clients yes: a client certificate
                                  signed by ca.crt is required */
    FLEET_TLS_EXPIRED = 3      /* as ON, but the servers present expired.crt,
                                  whose validity ended before it began */
};

/* ---- Time scale ------------------------------------------------------ */

/* REDLOCK_TEST_TIME_SCALE from the environment: 1..100, else 1. */
int fleet_time_scale(void);
/* ms times the time scale: for a test's waits and time bounds. */
int64_t fleet_scaled_ms(int64_t ms);

/* ---- Lifecycle -------------------------------------------------------- */

/* Start n (1..FLEET_MAX_SERVERS) servers concurrently and wait until each
 * answers PING. opts NULL: defaults (no password, no persistence). A server
 * that exits early (e.g. its port was taken) is retried on a new port, up to
 * 5 times. NULL on failure, with a message on stderr and nothing left
 * running. Sets SIGPIPE to SIG_IGN. */
fleet *fleet_start(size_t n, const fleet_options *opts);

/* SIGKILL and reap every server still running or paused, remove the
 * temporary directory, free f. NULL is allowed. */
void fleet_stop(fleet *f);

size_t fleet_size(const fleet *f);
/* The server's port; it never changes after fleet_start(). -1: bad index. */
int fleet_port(const fleet *f, size_t i);
/* The server's pid; 0 when it is not running (killed, or a restart failed). */
pid_t fleet_pid(const fleet *f, size_t i);
/* 1 when the server is paused (SIGSTOP), else 0. */
int fleet_is_paused(const fleet *f, size_t i);
/* The fleet's temporary directory (server i uses DIR/i). */
const char *fleet_dir(const fleet *f);
/* The path of server i's unix socket (DIR/i/redis.sock); NULL without
 * fleet_options.unix_socket, or for a bad index. */
const char *fleet_unix_socket(const fleet *f, size_t i);
/* The directory of a TLS fleet's certificates (fleet_tls.h); NULL when the
 * fleet has no TLS. */
const char *fleet_tls_dir(const fleet *f);

/* ---- Faults ------------------------------------------------------------
 * Each returns 0 on success, -1 on failure (bad index, or the server is not
 * in a state where the fault applies), with a message on stderr. */

/* kill -9 and reap. Works on a paused server. -1 when not running. */
int fleet_kill(fleet *f, size_t i);

/* Start server i again as a master on the same port and directory (killing
 * it first if it is running or paused) and wait until it answers PING.
 * With appendonly it reloads its data; without, it starts empty (any
 * dump.rdb, e.g. from an earlier replica sync, is deleted first). On failure
 * the server is left not running. */
int fleet_restart(fleet *f, size_t i);
/* Set server i's fake wall clock to spec (see "Fake clocks"); it takes
 * effect at once. -1 with a message when server i was started
 * with the real clock, or the file cannot be written. */
int fleet_set_faketime(fleet *f, size_t i, const char *spec);
/* Make server i's fake clock, true since its launch, run at rate times
 * ours from now on with no step (to within the few ms between its launch
 * and libfaketime's start, times rate - 1): "-OFFSET xRATE", OFFSET the
 * time it has run times rate - 1, since a rate counts from the launch. */
int fleet_set_clock_rate(fleet *f, size_t i, double rate);

/* Persistence of server i from its next (re)start on: 1 for AOF with
 * appendfsync always (a restart reloads its data), 0 for none (a restart
 * starts empty). Starts as fleet_options.appendonly. */
int fleet_set_appendonly(fleet *f, size_t i, int on);

/* SIGSTOP, and wait until the kernel reports it stopped: the port still
 * accepts connections but no command gets a reply. 0 if already paused. */
int fleet_pause(fleet *f, size_t i);

/* SIGCONT, and wait until the kernel reports it running. 0 if not paused. */
int fleet_resume(fleet *f, size_t i);

/* Restart server i (as fleet_restart) as a replica of server `of`
 * (--replicaof 127.0.0.1 port-of-of) and wait until it answers PING. Writes
 * to it fail with READONLY at once; its data set syncs from `of` in the
 * background. `of` need not be running. fleet_restart() makes it a master
 * again. */
int fleet_start_replica(fleet *f, size_t i, size_t of);

/* ---- Connections -------------------------------------------------------
 * Contexts are blocking hiredis contexts, authenticated when the fleet has
 * a password; free them with redisFree(). NULL on any failure (no message:
 * failing to connect is often what a test expects). */

/* Connect and command timeouts of 1 s (times the time scale). */
redisContext *fleet_connect(const fleet *f, size_t i);
/* Connect and command timeouts of timeout_ms (> 0). */
redisContext *fleet_connect_timeout(const fleet *f, size_t i, int timeout_ms);

typedef enum fleet_ping_result {
    FLEET_PING_OK = 0,   /* PONG */
    FLEET_PING_REFUSED,  /* connection refused: nothing listens on the port */
    FLEET_PING_TIMEOUT,  /* connected, but no reply within timeout_ms */
    FLEET_PING_ERROR     /* anything else (an error reply, bad index, ...) */
} fleet_ping_result;

/* Connect (authenticating as needed) and PING, each step bounded by
 * timeout_ms (> 0). Returns a fleet_ping_result. */
int fleet_ping(const fleet *f, size_t i, int timeout_ms);

/* ---- Data helpers for assertions ---------------------------------------
 * Each opens its own connection (fleet_connect), so each is bounded by the
 * 1 s timeouts and works whatever the test did to other connections. Keys
 * and values are binary-safe. */

/* Run a command (hiredis format, %b for binary arguments). The reply, to be
 * freed with freeReplyObject(), or NULL on a connection or I/O error. */
redisReply *fleet_command(const fleet *f, size_t i, const char *format, ...);

/* GET: 1 found (value copied to buf, truncated to buflen; *len_out, if not
 * NULL, gets the full length), 0 absent, -1 error. */
int fleet_get(const fleet *f, size_t i, const void *key, size_t keylen, char *buf,
              size_t buflen, size_t *len_out);

/* PTTL in ms: -2 absent, -1 no expiry, -3 error. */
long long fleet_pttl(const fleet *f, size_t i, const void *key, size_t keylen);
/* The number after field (e.g. "cmdstat_set:calls=") in master i's INFO
 * section; -1 when it is not there or the master does not answer. */
long long fleet_info_number(const fleet *f, size_t i, const char *section, const char *field);

/* SET key val [PX px_ms]; px_ms 0: no expiry. 0 on OK, -1 otherwise. */
int fleet_set(const fleet *f, size_t i, const void *key, size_t keylen, const void *val,
              size_t vallen, long long px_ms);

/* DEL: 1 deleted, 0 absent, -1 error. */
int fleet_del(const fleet *f, size_t i, const void *key, size_t keylen);

/* ---- Fencing counters (docs/fencing.md) -------------------------------- */

/* Server i's run_id (40 hex digits and a NUL): 0, or -1 ("") when unknown. */
int fleet_run_id(const fleet *f, size_t i, char run_id[41]);
/* Server i's fencing counter when it is in use in the server's run, else -1. */
long long fleet_fencing_counter(const fleet *f, size_t i);
/* Put every running server's fencing counter in use at 0, as a new
 * deployment's initialization does. 0, or -1 on an error. */
int fleet_init_fencing(const fleet *f);

/* On how many running, unpaused servers key holds exactly val. */
size_t fleet_count_value(const fleet *f, const void *key, size_t keylen, const void *val,
                         size_t vallen);

/* ---- Library configuration ---------------------------------------------- */

/* A config listing every server, running or not, in index order as
 * "127.0.0.1:port", with the fleet's password (and for a TLS fleet, TLS:
 * see enum fleet_tls), and test-friendly settings:
 * connect_timeout_ms 200, command_timeout_ms 100 (both times the time
 * scale), reconnect_min_ms 20,
 * reconnect_max_ms 200, retry_delay_ms 20, retry_jitter_ms 20 (the rest at
 * their defaults). Free with redlock_config_free(). NULL on failure. */
redlock_config *fleet_config(const fleet *f);

/* Acquire options with every field at its default, then ttl and retries. */
redlock_acquire_options fleet_acquire_options(int64_t ttl_ms, int64_t retry_count);

/* How many masters in r ended with outcome. */
unsigned fleet_result_count(const redlock_result *r, int outcome);

#ifdef __cplusplus
}
#endif

#endif
