#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Contenders on one lock through the tool, as scripts use it: K loops of
# `redlock run -w forever RES -- CMD` against five local masters (started
# here on unix sockets in a temporary directory, stopped at the end), each
# CMD a critical section of random length that logs when it starts and
# ends. Run once waiting by notification and once on the timer alone;
# prints, for each, the hand-off gap (one section's end to the next one's
# start), how much of the time the lock was held, and the sections run.
#
#   scripts/contention.sh [SECONDS [K [HOLD_MIN_MS [HOLD_MAX_MS]]]]
#
# Defaults: 20 s, 8 contenders, sections of 20-200 ms. Needs a build
# (scripts/build.sh) and redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
contenders=${2:-8}
hold_min=${3:-20}
hold_max=${4:-200}
tool=$PWD/build/redlock
[ -x "$tool" ] || { echo "contention: build first (scripts/build.sh)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "contention: redis-server is not installed" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

for i in 0 1 2 3 4; do
  redis-server --port 0 --unixsocket "$work/m$i.sock" --unixsocketperm 700 --save '' \
    --appendonly no --dir "$work" --logfile "$work/m$i.log" --daemonize no &
  pids+=($!)
done
for i in 0 1 2 3 4; do
  for _ in $(seq 100); do [ -S "$work/m$i.sock" ] && break; sleep 0.05; done
  [ -S "$work/m$i.sock" ] || { echo "contention: master $i did not start" >&2; exit 1; }
done

# One section: log its start and end (microseconds from bash's own clock,
# no process spawned for it; CLOCK_REALTIME is enough on one machine),
# sleeping in between.
cat >"$work/section.sh" <<'EOF'
#!/bin/bash
printf 'S %s\n' "${EPOCHREALTIME/./}" >>"$1"
sleep "$2"
printf 'E %s\n' "${EPOCHREALTIME/./}" >>"$1"
EOF
chmod +x "$work/section.sh"

# run NOTIFY: K contender loops for the given seconds; prints the figures.
run() {
  local notify=$1 log="$work/events-$1" cfg="$work/redlock-$1.yaml"
  {
    echo "wait_by_notification: $notify"
    echo "nodes:"
    for i in 0 1 2 3 4; do echo "  - url: unix://$work/m$i.sock"; done
  } >"$cfg"
  : >"$log"
  local deadline=$(($(date +%s) + seconds)) loops=()
  for c in $(seq "$contenders"); do
    (
      RANDOM=$((c * 7919 + notify))
      while [ "$(date +%s)" -lt "$deadline" ]; do
        hold=$((hold_min + RANDOM % (hold_max - hold_min + 1)))
        # Unfenced: the figures compare waiting, not fencing's round trip.
        "$tool" -c "$cfg" run --no-fencing -w forever contention -- \
          "$work/section.sh" "$log.$c" "$(printf '0.%03d' "$hold")" || true
      done
    ) &
    loops+=($!)
  done
  wait "${loops[@]}"
  cat "$log".* | sort -k2,2n >"$log"
  # Gaps to one file, the rest summed (mawk has no sort of its own).
  awk -v gaps="$log.gaps" '
    $1 == "S" { if (last_end) print ($2 - last_end) / 1e3 >gaps; start = $2
                if (!first) first = $2; sections++ }
    $1 == "E" { busy += ($2 - start) / 1e3; last_end = $2 }
    END { printf "%d %.3f\n", sections, busy / ((last_end - first) / 1e3) }' "$log" >"$log.sum"
  sort -n "$log.gaps" >"$log.sorted"
  local n p50 p90 sections busy
  n=$(wc -l <"$log.sorted")
  p50=$(sed -n "$((n / 2 + 1))p" "$log.sorted")
  p90=$(sed -n "$((n * 9 / 10 + 1))p" "$log.sorted")
  read -r sections busy <"$log.sum"
  printf '%-16s sections %d, gap p50 %.1f ms, p90 %.1f ms, busy %.2f\n' \
    "$([ "$notify" = 1 ] && echo "by notification" || echo "timer alone")" \
    "$sections" "$p50" "$p90" "$busy"
}

echo "contention: $contenders contenders, sections of $hold_min-$hold_max ms, $seconds s each"
run 0
run 1
