#!/bin/sh
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
# The masters come from $REDLOCK_CONFIG or redlock's usual places (see
# redlock(1)). Exit status: the job's own; 0 when another machine holds the
# lock (this round is that machine's, not an error for cron); anything
# else is redlock's.
set -u

REDLOCK="${REDLOCK:-redlock}"
if [ "$#" -eq 0 ]; then
    set -- sh -c 'echo "report made on $(hostname) while holding $REDLOCK_RESOURCE"'
fi

"$REDLOCK" run --ttl 30s --wait 0 nightly-report -- "$@"
status=$?
if [ "$status" -eq 75 ]; then
    echo "cron-guard: another machine holds nightly-report; skipping this round" >&2
    exit 0
fi
exit "$status"
