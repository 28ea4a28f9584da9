/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tool's exit statuses: one table for every command (docs/cli.md).
 *
 *    0  done
 *    1  release/extend: the lock is not ours (expired, or someone else's)
 *   75  acquire/run: the resource is held by another holder (-E N: N)
 *   77  the masters refused our credentials, or a permission (NOPERM)
 *   69  no quorum reachable: masters unreachable, erroring or too slow; or
 *       too few with a fencing counter in use (a fenced acquire), or
 *       counted (clocks proven fast, masters restarted too recently)
 *   64 usage (a TTL over max_ttl_ms too), 70 internal, 78 configuration, 80 run: the lock was lost
 *
 * A failure names one cause, the most specific: "held" or "not ours" (the
 * masters answered, and the answer rules our value out), then refused
 * credentials on any master, then the rest. The library's status for a mix
 * names the majority cause (two masters refusing our password and three
 * down is "no quorum"), so the per-master outcomes decide the second step.
 */
#include "cli.h"

static bool credentials_refused(int status, const redlock_result *r)
{
    if (status == REDLOCK_EAUTH || status == REDLOCK_EPERM)
        return true;
    for (unsigned i = 0; r != NULL && i < r->master_count; i++)
        if (r->masters[i].outcome == REDLOCK_MASTER_AUTH_FAILED ||
            r->masters[i].outcome == REDLOCK_MASTER_REFUSED)
            return true;
    return false;
}

/* A status that is no answer from a quorum: why none came. */
static int unavailable_exit(int status, const redlock_result *r)
{
    return credentials_refused(status, r) ? EX_NOPERM : EX_UNAVAILABLE;
}

int cli_exit_for(int status, const redlock_result *r)
{
    switch (status) {
    case REDLOCK_OK:
        return 0;
    case REDLOCK_ENOTOWNER:
    case REDLOCK_EEXPIRED:
        return CLI_EXIT_NOT_OURS;
    case REDLOCK_ENOQUORUM:
    case REDLOCK_EAUTH:
    case REDLOCK_EPERM:
    case REDLOCK_EREPLY:
    case REDLOCK_ENOFENCE:
    case REDLOCK_EOVERLOAD:
    case REDLOCK_ECLOCK:
    case REDLOCK_ERESTARTED:
        return unavailable_exit(status, r);
    case REDLOCK_EINVAL:
    case REDLOCK_EMAXTTL:
        return EX_USAGE;
    default:
        return EX_SOFTWARE;
    }
}

int cli_exit_for_acquire(int status, const redlock_result *r, int conflict_exit)
{
    /* Only these two read differently for an acquire. */
    if (status == REDLOCK_ECONFLICT)
        return conflict_exit;
    if (status == REDLOCK_EEXPIRED) /* a quorum, but slower than the TTL */
        return unavailable_exit(status, r);
    return cli_exit_for(status, r);
}
