/* SPDX-License-Identifier: BSD-3-Clause */
/* The processes below this one -- its children, theirs, and so on -- found
 * through the parent links in /proc, signalled, killed and reaped. */
#ifndef REDLOCK_CLI_PROCTREE_H
#define REDLOCK_CLI_PROCTREE_H

#include <sys/types.h>

/* Send signo (0: none, just count) to every living descendant of this
 * process, in one sweep of /proc; one that is stopped gets SIGCONT after
 * it, to act on it. Returns how many it found, or -1 if /proc cannot be
 * read; *refused (may be NULL) is how many of them it may not signal
 * (EPERM: a program that changed its user). A process forked during the
 * sweep may be missed. */
long proctree_signal(int signo, long *refused);

/* Run a sweep's code over a few processes of /proc, signalling none: a
 * later sweep, when it hurries (a lock lost), finds its code loaded and
 * bound, for the cost of a handful of reads instead of one per process
 * on the machine. */
void proctree_warm_up(void);

/* Called for each child reaped, with its wait status. */
typedef void proctree_reaped(pid_t pid, int wait_status, void *arg);

/* SIGKILL every descendant and reap, sweep after sweep, until this process
 * has no child left (waitpid: ECHILD). With this process a child
 * subreaper, every orphan comes back to it, so none is left then. Waits
 * for as long as some descendant does not die (one that may not be
 * signalled, or stuck in the kernel). on_reaped may be NULL. */
void proctree_kill_all(proctree_reaped *on_reaped, void *arg);

#endif
