#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# examples/systemd/ is what systemd accepts: `systemd-analyze verify` says
# nothing about its units (an unknown key or a bad value is only a warning
# there, so any output fails), with ExecStart='s redlock the one built and
# the job /bin/true; and the service keeps what docs/operations.md says
# of it: exit 75 a success, the password as a credential, KillMode=mixed.
#
#   test/docs/check_systemd.sh SOURCE_DIR REDLOCK
set -u
root=$1
redlock=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
for unit in "$root"/examples/systemd/*.service "$root"/examples/systemd/*.timer; do
    sed -e "s|/usr/bin/redlock|$redlock|" -e "s|/usr/local/bin/make-report|/bin/true|" \
        "$unit" >"$dir/$(basename "$unit")"
done
service="$dir/nightly-report.service"
for line in 'SuccessExitStatus=75' 'LoadCredential=redis-password:' 'KillMode=mixed' \
            'ExecStart=.* run --wait 0 '; do
    grep -q "^$line" "$service" || { echo "nightly-report.service: no $line"; status=1; }
done
out=$(cd "$dir" && systemd-analyze verify --man=no ./*.service ./*.timer 2>&1)
rc=$?
if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
    echo "systemd-analyze verify (exit $rc):"
    echo "$out"
    status=1
fi
# The command line is one redlock takes: its options parse (an unknown
# option, or a bad TIME, would exit 64 before anything else).
args=$(sed -n 's|^ExecStart=[^ ]* ||p' "$service")
# shellcheck disable=SC2086 # split as systemd splits it: no quotes in it
"$redlock" --node 127.0.0.1:1 --config /dev/null $args >/dev/null 2>"$dir/err"
rc=$?
if [ "$rc" -eq 64 ]; then
    echo "redlock refuses the unit's command line:"
    cat "$dir/err"
    status=1
fi
exit $status
