/* SPDX-License-Identifier: BSD-3-Clause */
/* The Lua scripts that make acquire (of several resources, or reentrant),
 * release, extend and inspect atomic on each master (scripts.c says how a
 * lock's keys look). Each works on all of KEYS at once. */
#ifndef REDLOCK_SCRIPTS_H
#define REDLOCK_SCRIPTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct rl_script {
    const char *name;   /* for messages: "release", "extend" */
    const char *source;
    const char *sha;    /* SHA1 of source, 40 hex digits, as SCRIPT LOAD returns */
} rl_script;

/* Sets every key to ARGV[1] with PX ARGV[2], or (ARGV[3], an owner token,
 * given) adds hold ARGV[1] to the owner's hash in every key; or sets
 * nothing when a key is taken otherwise. Returns 1 set, 0 taken. */
extern const rl_script rl_acquire_script;
/* Round 1 of a fenced acquire: the acquire script on KEYS[1..n-1], then
 * {1, n} with the counter in KEYS[n] when it is in use in the master's run,
 * else {1, nil, run_id}; 0 when taken. Reads before it writes: an error
 * (INFO denied) leaves nothing set. */
extern const rl_script rl_fenced_acquire_script;
/* Round 2: when every key of KEYS[1..n-1] holds ARGV[1] and the counter in
 * KEYS[n] is in use in this run, raises it to ARGV[2] (never lowers it) and
 * returns 1; 0 a key absent, -1 another value, -2 the counter not in use. */
extern const rl_script rl_fence_confirm_script;
/* {1, n} when the counter in KEYS[1] is in use in this run, else {0}. */
extern const rl_script rl_fence_read_script;
/* Puts the counter in KEYS[1] in use in this run at max(its n, ARGV[1]),
 * unless it is already (0), or ARGV[2] is given and is not this run's
 * run_id (-1). Returns 1 when it did. */
extern const rl_script rl_fence_seed_script;
/* Removes ARGV[1] from every key that holds it, deleting the key with its
 * last hold, and PUBLISHes ARGV[1] on ARGV[2] (a channel prefix, if given)
 * followed by the key's name for each key deleted. Returns 1 + the most
 * subscribers one announcement reached when it removed ours anywhere, 0
 * absent, -1 other values (left untouched). */
extern const rl_script rl_release_script;
/* PEXPIREs every key to ARGV[2] ms if every key holds ARGV[1] (a hash's
 * TTL is never shortened). Returns 1 extended, 0 some key absent, -1
 * another value. */
extern const rl_script rl_extend_script;
/* The extend and release scripts for several locks in one call (batch.h):
 * EVALSHA sha <all keys> keys... <groups> then, for each lock, <its key
 * count> <its argument count> <its arguments...>. Returns an array with,
 * for each lock, what the single script returns, or its error. */
extern const rl_script rl_extend_batch_script;
extern const rl_script rl_release_batch_script;
/* Reads the keys and their PTTL at one instant: {value or nil, pttl}; for
 * several keys, the value all hold and the least PTTL, or {nil, -3} when
 * they differ. */
extern const rl_script rl_inspect_script;

/* The restart marker (master/restart.h, for a master that answers no
 * run_id): KEYS[1] the marker, KEYS[2] the guard, ARGV[1] max_ttl_ms.
 * The marker missing: writes it (no TTL) and the guard (ARGV[1], PX
 * ARGV[1]), returns {0}. There with the guard: {1, the guard's PTTL, its
 * value}. There without: {2}. */
extern const rl_script rl_restart_marker_script;
/* Its keys: the library's own, never a lock's (rl_resource_valid()). */
#define RL_RESTART_KEY_PREFIX "redlock:restart:"
#define RL_RESTART_MARKER_KEY RL_RESTART_KEY_PREFIX "marker"
#define RL_RESTART_GUARD_KEY RL_RESTART_KEY_PREFIX "guard"

/* Tokens and counters are compared by Lua as doubles: exactly only below
 * 2^53. A counter there gives no further token. */
#define RL_TOKEN_LIMIT (UINT64_C(1) << 53)

/*
 * The EVAL form of an EVALSHA command (see command.h): the
 * same arguments after the script. Used when a master answers NOSCRIPT (its
 * script cache was flushed). *out is malloc'ed and NUL-terminated, as
 * hiredis wants a formatted command; returns its length (without the NUL),
 * or -1 when out of memory or cmd is not such a command.
 */
long rl_evalsha_to_eval(const char *cmd, size_t len, const rl_script *script, char **out);

#endif
