/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Masters restarted empty (docs/safety.md, "Masters restarted empty";
 * model/restart.pml is the specification): an OK from a master counts
 * toward a quorum only once its current run began at least max_ttl_ms
 * (plus the drift allowance) ago, by a bound on that start this client
 * can trust. Kept per master, for its connection:
 *
 *                 INFO: durable, or the run old enough;
 *                 marker script: the marker, the guard gone
 *   UNKNOWN ------------------------------------------> COUNTS
 *    |   ^  |                                             ^
 *    |   +--+ INFO: no run_id, marker script sent         | votes_from passed
 *    |                                                    | (seen by the first
 *    v                                                    |  OK counted after it)
 *   EXCLUDED ---------------------------------------------+
 *     INFO: a young run, or a new one; marker script: the marker
 *     missing, or the guard there, or the script refused
 *
 * A new connection starts UNKNOWN, and UNKNOWN's OKs do not count. Its
 * INFO comes before any reply of ours (the handshake is pipelined ahead
 * of the requests), and so does the marker script's, sent as INFO's reply
 * comes in, ahead of what waited for the handshake (unless it has to go
 * again as EVAL). The bound:
 *  - durable (declared): none, it counts at once;
 *  - the same run_id as this client's last connection: the run's bound
 *    as it was (a reconnection to the same run changes nothing);
 *  - a new run_id, an earlier run seen: when the connection to the new
 *    run was established (the restart came before it), never the uptime,
 *    which a forward step of the master's wall clock inflates;
 *  - this client's first connection to the master: the earlier of that
 *    and (INFO reply received - (uptime - 1 s) * (1 - drift_factor));
 *    no uptime: the connection;
 *  - no run_id (INFO refused): the marker script (restart_probe.h), on
 *    every connection, with the keys redlock:restart:marker (no TTL: a
 *    restart without persistence loses it) and redlock:restart:guard
 *    (PX max_ttl_ms, written with the marker). The marker missing: both
 *    written, the bound is the reply's arrival. Marker and guard: when
 *    the guard was written (the reply's arrival - (its PX, which is its
 *    value, - its PTTL)). The marker without the guard: none, it counts
 *    at once. The script refused (NOPERM, scripting off): the connection,
 *    on every connection, and one warning.
 * votes_from = bound + max_ttl_ms + the drift allowance of max_ttl_ms.
 * Releases still go to an excluded master.
 *
 * A master declared durable is asked CONFIG GET append* in the handshake
 * (no reply awaited): AOF off, or appendfsync not always, is logged (WARN)
 * and kept for reports (rl_restart_durable_doubt()); the declaration
 * stands. A refused CONFIG is not news.
 */
#ifndef REDLOCK_RESTART_H
#define REDLOCK_RESTART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rl_master;

typedef enum rl_restart_state {
    RL_RESTART_UNKNOWN,  /* connecting: its run not known yet */
    RL_RESTART_EXCLUDED, /* its OKs do not count until votes_from_us */
    RL_RESTART_COUNTS,   /* its OKs count */
} rl_restart_state;

typedef struct rl_restart {
    rl_restart_state state;
    bool durable;           /* declared durable: never excluded */
    bool seen_run;          /* this client saw a run of the master */
    char last_run_id[41];   /* the run last seen (RL_RUN_ID_SIZE), "" when none */
    int64_t connected_at_us; /* when the current connection was established */
    int64_t run_start_us;   /* the bound on the current run's start; 0: none */
    int64_t votes_from_us;  /* EXCLUDED: its OKs count from then */
    unsigned conn_seq;      /* connections whose run was read: an OK counted on
                               an earlier one is checked again at the decision */
    bool marker_warned;     /* the marker script's refusal was logged (WARN) */
    char durable_doubt[64]; /* declared durable, but CONFIG GET says otherwise:
                               what it says ("appendonly no"); "" none */
} rl_restart;

/* What the marker script found (restart_probe.c reads its reply). */
typedef enum rl_restart_marker {
    RL_MARKER_MISSING,  /* written again, with the guard */
    RL_MARKER_GUARDED,  /* there, and the guard */
    RL_MARKER_UNGUARDED /* there, the guard gone */
} rl_restart_marker;

void rl_restart_init(struct rl_master *m);
/* A new connection is under way: UNKNOWN, its start not seen yet. */
void rl_restart_on_connecting(struct rl_master *m);
/* The TCP connection is established (before the handshake's replies). */
void rl_restart_on_connected(struct rl_master *m);
/* The handshake's INFO reply: run_id ("" when INFO was refused or gave
 * none) and uptime_s (-1 when none). Logs (INFO) when it excludes. True
 * when the marker script is to be sent (no run_id, not durable): the
 * master stays UNKNOWN until rl_restart_on_marker() or
 * rl_restart_on_marker_refused(). The caller runs inside an entry. */
bool rl_restart_on_info(struct rl_master *m, const char *run_id, int64_t uptime_s);
/* The marker script's reply on the current connection: guard_pttl_ms and
 * guard_px_ms (the guard's value; 0 when not a number) for
 * RL_MARKER_GUARDED. Logs (INFO) when it excludes. Inside an entry. */
void rl_restart_on_marker(struct rl_master *m, rl_restart_marker found, int64_t guard_pttl_ms,
                          int64_t guard_px_ms);
/* The marker script was refused (why: one printable line): the master is
 * excluded from its connection on, as if nothing told a restart from a
 * reconnection. Logs it once a client (WARN), then at DEBUG. Inside an
 * entry. */
void rl_restart_on_marker_refused(struct rl_master *m, const char *why);
/* CONFIG GET append* answered for a master declared durable: appendonly
 * and appendfsync as read ("" when absent). Settings that do not keep
 * acknowledged writes through a kill -9 are logged (WARN, when news) and
 * kept for rl_restart_durable_doubt(). Inside an entry. */
void rl_restart_on_durable_config(struct rl_master *m, const char *appendonly,
                                  const char *appendfsync);
/* Whether m, declared durable, was last found without AOF and appendfsync
 * always; what was found into buf ("" when not). */
bool rl_restart_durable_doubt(const struct rl_master *m, char *buf, size_t len);
/* Whether an OK from m, on its current connection, is not counted now.
 * The first call after votes_from passed moves it to COUNTS and logs it
 * (INFO). The caller runs inside an entry. */
bool rl_restart_excludes(struct rl_master *m, int64_t now_us);
/* The same without changing anything, for reports. */
bool rl_restart_excluded(const struct rl_master *m, int64_t now_us);
/* For a result's detail and the status: "restarted N s ago: not counted
 * for M s more" into buf; false (buf "") when it is not excluded. */
bool rl_restart_describe(const struct rl_master *m, int64_t now_us, char *buf, size_t len);
/* Milliseconds until m counts (0: it does), and since its run began by
 * the bound (-1: not known). */
int64_t rl_restart_wait_ms(const struct rl_master *m, int64_t now_us);
int64_t rl_restart_age_ms(const struct rl_master *m, int64_t now_us);

#endif
