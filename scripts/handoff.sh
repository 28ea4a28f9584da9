#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# How quickly one lock passes from one shell loop to the next, through the
# tool against flock(1): K loops of `redlock run --wait 1.5s RES -- CMD`
# against five local masters (scripts/masters.sh on free loopback ports, in
# a temporary directory, stopped on every exit), fenced and --no-fencing,
# then the same K loops of `flock -w 1.5 FILE CMD` on a local file. CMD is
# a small Python section of random length (20-200 ms by default) that
# logs its start and end (CLOCK_MONOTONIC, time.monotonic_ns()) to a log
# all share. Prints, for each, the hand-off gap (one section's end to the
# next one's start: CMD's exit noticed, the lock released and taken,
# CMD's process started), its median and p90, the sections run, and the
# calls that gave up waiting (exit 75).
#
#   scripts/handoff.sh [SECONDS [K [HOLD_MIN_MS [HOLD_MAX_MS]]]]
#
# Defaults: 12 s per configuration, 8 contenders, sections of 20-200 ms:
# about 45 s in all. The configurations take turns in HANDOFF_ROUNDS
# rounds (default 3), so that the machine's other load weighs on each
# alike. HANDOFF_ONLY (a space-separated list of fenced, unfenced, flock,
# base-fenced, base-unfenced) runs only those. HANDOFF_BASE=PATH adds
# base-fenced and base-unfenced: another build's redlock (its RUNPATH
# names its library), to compare builds in one run. HANDOFF_TOOL=PATH
# measures another build's redlock instead of build/redlock.
# HANDOFF_PERF=1 also times, with perf's scheduler tracepoints (root), the
# part of each gap that is the tool's: from a section's process exit to
# the next one's exec, without the interpreter's own start and end, which
# the machine's load stretches. Needs a build (scripts/build.sh),
# redis-server and python3 (and perf for HANDOFF_PERF).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-12}
contenders=${2:-8}
hold_min=${3:-20}
hold_max=${4:-200}
rounds=${HANDOFF_ROUNDS:-3}
base_tool=${HANDOFF_BASE:-}
only=${HANDOFF_ONLY:-${base_tool:+base-fenced base-unfenced }fenced unfenced flock}
tool=${HANDOFF_TOOL:-$PWD/build/redlock}
[ -x "$tool" ] || { echo "handoff: build first (scripts/build.sh)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "handoff: redis-server is not installed" >&2; exit 1; }
command -v flock >/dev/null || { echo "handoff: flock(1) is not installed" >&2; exit 1; }
use_perf=${HANDOFF_PERF:-}
[ -z "$use_perf" ] || command -v perf >/dev/null ||
  { echo "handoff: HANDOFF_PERF needs perf (package linux-perf)" >&2; exit 1; }
# The interpreter itself, not a wrapper (pyenv's shims are shell scripts
# that would add their own start-up to every section); run isolated and
# without site (-I -S), so that what it starts with is the same anywhere
# and small beside the hand-off.
python=$(python3 -c 'import sys; print(sys.executable)') ||
  { echo "handoff: python3 is not installed" >&2; exit 1; }
[[ "$seconds" =~ ^[0-9]+$ && "$contenders" =~ ^[0-9]+$ && "$hold_min" =~ ^[0-9]+$ &&
   "$hold_max" =~ ^[0-9]+$ && "$seconds" -gt 0 && "$seconds" -le 300 && "$contenders" -gt 0 &&
   "$contenders" -le 64 && "$hold_min" -le "$hold_max" && "$hold_max" -le 10000 &&
   "$rounds" =~ ^[0-9]+$ && "$rounds" -gt 0 && "$rounds" -le 20 ]] ||
  { echo "usage: $0 [SECONDS (1-300) [K (1-64) [HOLD_MIN_MS [HOLD_MAX_MS]]]]" >&2; exit 64; }

for name in $only; do
  case $name in
    fenced | unfenced | flock) ;;
    base-fenced | base-unfenced)
      [ -n "$base_tool" ] || { echo "handoff: $name needs HANDOFF_BASE" >&2; exit 64; } ;;
    *) echo "handoff: unknown configuration $name (fenced, unfenced, flock, base-fenced, base-unfenced)" >&2
       exit 64 ;;
  esac
done

# The masters' AOF on tmpfs where there is one: `appendfsync always` there
# costs no disk flush, which would swamp the figures on a shared disk.
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/redlock-handoff.XXXXXX")
loops=()
cleanup() {
  for pid in "${loops[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  REDLOCK_MASTERS_DIR="$work/masters" scripts/masters.sh stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cfg=$(REDLOCK_MASTERS_DIR="$work/masters" REDLOCK_MASTERS_PORT=0 scripts/masters.sh start 5 2>"$work/masters.err") ||
  { cat "$work/masters.err" >&2; exit 1; }

# One section: its start as soon as the interpreter runs, its end just
# before it exits; one O_APPEND write each, so lines never mix.
cat >"$work/section.py" <<'EOF'
import os, sys, time
start = time.monotonic_ns()
log = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(log, b"S %d\n" % start)
time.sleep(int(sys.argv[2]) / 1000.0)
os.write(log, b"E %d\n" % time.monotonic_ns())
EOF

# cmd=(the configuration's command), CMD to follow.
command_of() {
  case $1 in
    fenced) cmd=("$tool" -q -c "$cfg" run --wait 1.5s handoff --) ;;
    unfenced) cmd=("$tool" -q -c "$cfg" run --no-fencing --wait 1.5s handoff --) ;;
    base-fenced) cmd=("$base_tool" -q -c "$cfg" run --wait 1.5s handoff --) ;;
    base-unfenced) cmd=("$base_tool" -q -c "$cfg" run --no-fencing --wait 1.5s handoff --) ;;
    flock) cmd=(flock -E 75 -w 1.5 "$work/lockfile") ;;
  esac
}

# exec_gaps PERF_DATA: each section process's exit to the next one's exec,
# in ms (the interpreter's processes, told by their name).
exec_gaps() {
  local comm
  comm=$(basename "$python" | cut -c1-15)
  perf script -i "$1" -F comm,time,event 2>/dev/null | awk -v comm="$comm" '
    $1 == comm { t = $2; sub(":", "", t)
                 if ($3 ~ /sched_process_exit/) last = t
                 else if ($3 ~ /sched_process_exec/ && last) { print (t - last) * 1000; last = 0 } }'
}

# contend NAME SECONDS: K contender loops; their sections' gaps added to
# $work/NAME.gaps, the sections and the calls that gave up to NAME.counts.
contend() {
  local name=$1 log="$work/$1.events" deadline c
  local -a cmd
  command_of "$name"
  : >"$log"
  : >"$work/lockfile"
  deadline=$(($(date +%s) + $2))
  loops=()
  local perf_pid=
  if [ -n "$use_perf" ]; then
    perf record -q -a -e sched:sched_process_exec -e sched:sched_process_exit \
      -o "$work/$name.perf" >/dev/null 2>&1 &
    perf_pid=$!
    sleep 0.5 # its tracepoints set up before the first section
  fi
  for c in $(seq "$contenders"); do
    (
      RANDOM=$((c * 7919 + ${#name}))
      gave_up=0
      while [ "$(date +%s)" -lt "$deadline" ]; do
        hold=$((hold_min + RANDOM % (hold_max - hold_min + 1)))
        rc=0
        "${cmd[@]}" "$python" -I -S "$work/section.py" "$log" "$hold" || rc=$?
        if [ "$rc" -eq 75 ]; then gave_up=$((gave_up + 1))
        elif [ "$rc" -ne 0 ]; then echo "handoff: $name: exit $rc" >&2; fi
      done
      echo "$gave_up" >"$log.gaveup.$c"
    ) &
    loops+=($!)
  done
  wait "${loops[@]}"
  loops=()
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid"
    wait "$perf_pid" || true
    exec_gaps "$work/$name.perf" >>"$work/$name.execgaps"
    rm -f "$work/$name.perf"
  fi
  # Sorted by time, sections alternate S, E; a start before the last end
  # would be two holders at once, and is counted.
  sort -k2,2n "$log" | awk -v gaps="$work/$name.gaps" '
    $1 == "S" { if (open) overlaps++; else if (last_end) print ($2 - last_end) / 1e6 >>gaps
                open = 1; sections++ }
    $1 == "E" { open = 0; last_end = $2 }
    END { printf "%d %d\n", sections, overlaps }' >>"$work/$name.counts"
  cat "$log".gaveup.* | awk '{ s += $1 } END { print "gave_up", s + 0 }' >>"$work/$name.counts"
  rm -f "$log".gaveup.*
}

# report NAME: one line of figures over every round.
report() {
  local name=$1 n p50 p90 sections overlaps gave_up
  touch "$work/$name.gaps"
  sort -n "$work/$name.gaps" >"$work/$name.sorted"
  n=$(wc -l <"$work/$name.sorted")
  [ "$n" -gt 0 ] || { echo "handoff: $name: no hand-off measured" >&2; return 1; }
  p50=$(sed -n "$((n / 2 + 1))p" "$work/$name.sorted")
  p90=$(sed -n "$((n * 9 / 10 + 1))p" "$work/$name.sorted")
  read -r sections overlaps gave_up < <(awk '
    $1 == "gave_up" { g += $2; next } { s += $1; o += $2 }
    END { print s + 0, o + 0, g + 0 }' "$work/$name.counts")
  local exec_part=
  if [ -s "$work/$name.execgaps" ]; then
    exec_part=$(sort -n "$work/$name.execgaps" | awk '{ a[NR] = $1 }
      END { printf ", exit-exec p50 %5.2f ms", a[int(NR / 2) + 1] }')
  fi
  printf '%-26s sections %4d, gap p50 %6.2f ms, p90 %6.2f ms, gave up %3d%s%s\n' \
    "$(case $name in fenced) echo "redlock fenced" ;; unfenced) echo "redlock --no-fencing" ;;
       base-fenced) echo "base redlock fenced" ;; base-unfenced) echo "base redlock --no-fencing" ;;
       *) echo "flock" ;; esac)" "$sections" "$p50" "$p90" "$gave_up" "$exec_part" \
    "$([ "$overlaps" -eq 0 ] || echo ", $overlaps OVERLAPS")"
  [ "$overlaps" -eq 0 ]
}

# The configurations take turns, a share of the time each round, so that
# the machine's load, which drifts, weighs on them all alike.
each=$((seconds / rounds))
[ "$each" -gt 0 ] || each=1
echo "handoff: $contenders contenders, sections of $hold_min-$hold_max ms," \
  "$seconds s each in $rounds rounds"
for _ in $(seq "$rounds"); do
  for name in $only; do contend "$name" "$each"; done
done
status=0
for name in $only; do report "$name" || status=1; done
[ "$status" -eq 0 ]
