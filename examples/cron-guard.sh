#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A cron job guarded by redlock: every machine runs the same crontab line,
#
#   */5 * * * *  /usr/local/bin/cron-guard.sh /usr/local/bin/make-report
#
# and at most one of them runs the job at a time. The lock is kept extended
# while the job runs; if it is lost (masters unreachable), the job gets
# SIGTERM while the lock is still valid, and redlock exits 80.
#
#   cron-guard.sh [CMD [ARG...]]   (default: a stand-in job that prints a line)
#
# The job gets the lock's fencing token in $REDLOCK_FENCING_TOKEN, to pass
# to whatever it writes (new masters need `redlock fencing-init` once).
#
# The masters come from $REDLOCK_CONFIG or redlock's usual places (see
# redlock(1)). Exit status: the job's own; 0 when another machine holds the
# lock (redlock's 75: this round is that machine's, not an error for cron);
# anything else is redlock's, and cron mails its message: 69 no quorum of
# masters reachable (or of fencing counters in use), 77 the masters refused
# our password, 78 configuration,
# 80 the lock was lost while the job ran.
set -u

REDLOCK="${REDLOCK:-redlock}"
if [ "$#" -eq 0 ]; then
    set -- sh -c 'echo "report made on $(hostname) while holding $REDLOCK_RESOURCE (token $REDLOCK_FENCING_TOKEN)"'
fi

"$REDLOCK" run --ttl 30s --wait 0 nightly-report -- "$@"
status=$?
case "$status" in
75)
    echo "cron-guard: another machine holds nightly-report; skipping this round" >&2
    exit 0
    ;;
69 | 77)
    echo "cron-guard: nightly-report not run: the lock could not be taken (status $status, see above)" >&2
    ;;
esac
exit "$status"
