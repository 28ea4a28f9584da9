/* SPDX-License-Identifier: BSD-3-Clause */
/* The Lua scripts that make release, extend and inspect atomic on each
 * master. */
#ifndef REDLOCK_SCRIPTS_H
#define REDLOCK_SCRIPTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct rl_script {
    const char *name;   /* for messages: "release", "extend" */
    const char *source;
    const char *sha;    /* SHA1 of source, 40 hex digits, as SCRIPT LOAD returns */
} rl_script;

/* Deletes KEYS[1] if it holds ARGV[1], then PUBLISHes ARGV[1] on channel
 * ARGV[2] if given. Returns 1 + the subscribers that heard it when
 * deleted, 0 absent, -1 another value (left untouched). */
extern const rl_script rl_release_script;
/* PEXPIREs KEYS[1] to ARGV[2] ms if it holds ARGV[1]. Returns 1 extended,
 * 0 absent, -1 another value. */
extern const rl_script rl_extend_script;
/* Reads KEYS[1] and its PTTL at one instant: {value or nil, pttl}. */
extern const rl_script rl_inspect_script;

/*
 * The EVAL form of an EVALSHA command (see command.h): the
 * same arguments after the script. Used when a master answers NOSCRIPT (its
 * script cache was flushed). *out is malloc'ed and NUL-terminated, as
 * hiredis wants a formatted command; returns its length (without the NUL),
 * or -1 when out of memory or cmd is not such a command.
 */
long rl_evalsha_to_eval(const char *cmd, size_t len, const rl_script *script, char **out);

#endif
