#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/masters.sh: masters for trying things start on loopback, in their
# directory with pid files, under a config the tool takes as is (declared
# durable: a lock at once); start again and stop are idempotent; a taken
# port fails cleanly; stop kills only the masters its pid files name.
#
#   test/docs/test_masters.sh REDLOCK_TOOL
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tool=${1:?usage: test_masters.sh REDLOCK_TOOL}
masters=$root/scripts/masters.sh
work=$(mktemp -d)
export REDLOCK_MASTERS_DIR=$work/m REDLOCK_MASTERS_PORT=0
cleanup() {
    REDLOCK_MASTERS_DIR=$work/m timeout 20 "$masters" stop >/dev/null 2>&1
    REDLOCK_MASTERS_DIR=$work/other timeout 20 "$masters" stop >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Running: there and not a zombie waiting for its parent to reap it.
alive() { [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != "" ] &&
          [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]; }
pids() { cat "$REDLOCK_MASTERS_DIR"/*/redis.pid 2>/dev/null | sort; }

# start: three masters, the config's path on stdout.
config=$(timeout 30 "$masters" start 3) || fail "start 3 exited $?"
[ "$config" = "$REDLOCK_MASTERS_DIR/redlock.yaml" ] || fail "start printed '$config'"
grep -qx 'durable: true' "$config" || fail "the config does not declare the masters durable"
ports=$(sed -n 's/^    port: \([0-9]*\)$/\1/p' "$config")
[ "$(wc -l <<<"$ports")" -eq 3 ] || fail "the config names $(wc -l <<<"$ports") ports, not 3: $(cat "$config")"
[ "$(grep -c '^  - host: 127.0.0.1$' "$config")" -eq 3 ] || fail "a master not on 127.0.0.1: $(cat "$config")"
first_pids=$(pids)
[ "$(wc -l <<<"$first_pids")" -eq 3 ] || fail "not 3 pid files: $first_pids"
for p in $ports; do
    [ "$(redis-cli -p "$p" config get bind | sed -n 2p)" = 127.0.0.1 ] || fail "master $p not bound to 127.0.0.1 alone"
    [ "$(redis-cli -p "$p" config get appendfsync | sed -n 2p)" = always ] || fail "master $p without appendfsync always"
done
# The tool takes the config as is, and a lock counts at once (durable).
timeout 20 "$tool" -c "$config" ping >/dev/null || fail "redlock ping exited $?"
start_ms=$(date +%s%3N)
timeout 20 "$tool" -c "$config" run --ttl 5s --wait 0 try-masters -- true || fail "redlock run exited $?"
[ $(($(date +%s%3N) - start_ms)) -lt 3000 ] || fail "the first lock waited: the masters were not counted at once"
"$masters" status >/dev/null || fail "status: not all up"

# start again: the same masters, the same config.
again=$(timeout 30 "$masters" start 3) || fail "a second start exited $?"
[ "$again" = "$config" ] && [ "$(pids)" = "$first_pids" ] || fail "a second start changed the masters"

# A taken port: no master started there, and exit 69.
taken=$(head -1 <<<"$ports")
REDLOCK_MASTERS_DIR=$work/other REDLOCK_MASTERS_PORT=$taken timeout 30 "$masters" start 1 >/dev/null 2>&1
rc=$?
[ "$rc" -eq 69 ] || fail "start on a taken port exited $rc, not 69"
[ -z "$(cat "$work"/other/*/redis.pid 2>/dev/null)" ] || fail "a master left running after a failed start"

# A master killed -9, and a pid file naming another program (this shell):
# stop stops the rest, leaves this shell alone and removes the directory.
kill -9 "$(head -1 <<<"$first_pids")"
mkdir -p "$REDLOCK_MASTERS_DIR/1"
echo $$ >"$REDLOCK_MASTERS_DIR/1/redis.pid"
timeout 30 "$masters" stop 2>/dev/null || fail "stop exited $?"
[ ! -e "$REDLOCK_MASTERS_DIR" ] || fail "stop left $REDLOCK_MASTERS_DIR"
for pid in $first_pids; do
    for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.05; done
    ! alive "$pid" || fail "master pid $pid still runs after stop"
done
timeout 30 "$masters" stop 2>/dev/null || fail "a second stop exited $?"
"$masters" config >/dev/null 2>&1 && fail "config answered with no masters running"
echo "test_masters: start, start again, a taken port, stop and stop again as documented"
