#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Local Redis masters to try libredlock and the redlock tool with: N
# redis-server processes on 127.0.0.1 only, each in its own directory of a
# temporary one, with a config naming them (docs/quickstart.md).
#
#   scripts/masters.sh start [N]   # N masters (default 5) on ports 7001.., or
#                                  # REDLOCK_MASTERS_PORT.. (0: any free ports);
#                                  # prints the config's path on stdout
#   scripts/masters.sh config      # the config's path, when they run
#   scripts/masters.sh status      # each master: port, pid, up or not
#   scripts/masters.sh stop        # stop them and remove the directory
#
# The directory is REDLOCK_MASTERS_DIR, else ${TMPDIR:-/tmp}/redlock-masters-UID:
# DIR/PORT/ holds a master's pid file, log and append-only file, and
# DIR/redlock.yaml names them all. The masters run AOF with `appendfsync
# always`, so the config declares them `durable`: a lock counts on them at
# once, not only after max_ttl_ms (docs/upgrading.md). For trying things,
# not for production: one machine is one failure.
#
# start when they already run says so and prints the config again; stop
# when none runs does nothing; both exit 0 then. Exit statuses: 0, 64 a
# usage error, 69 redis-server missing or a master that would not start
# (the others are stopped again).
set -euo pipefail

dir=${REDLOCK_MASTERS_DIR:-${TMPDIR:-/tmp}/redlock-masters-$(id -u)}
config="$dir/redlock.yaml"

usage() {
  echo "usage: $0 start [N] | config | status | stop" >&2
  exit 64
}
say() { echo "masters: $*" >&2; }

# Whether process $1 runs: there and not a zombie (one whose parent has
# not reaped it yet has stopped all the same).
alive() {
  local state
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# The pid in DIR/PORT/redis.pid if that process is still a redis-server.
running_pid() {
  local pidfile="$1/redis.pid" pid
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && alive "$pid" || return 1
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q redis-server || return 1
  echo "$pid"
}

master_dirs() {
  local d
  for d in "$dir"/*/; do
    [ -d "$d" ] && [[ "$(basename "$d")" =~ ^[0-9]+$ ]] && echo "${d%/}"
  done
  return 0
}

# Start one master on port $1; 0 once it answers PING as the process its
# pid file names, 1 if it did not start (the port taken, for instance).
start_one() {
  local port="$1" d="$dir/$1" pid
  mkdir -p "$d"
  rm -f "$d/redis.pid"
  redis-server --bind 127.0.0.1 --port "$port" --protected-mode yes \
    --dir "$d" --daemonize yes --pidfile "$d/redis.pid" --logfile "$d/redis.log" \
    --appendonly yes --appendfsync always --save '' >/dev/null 2>&1 || return 1
  # Up to 5 s for it to answer as itself (not another server on the port).
  for _ in $(seq 1 100); do
    if pid=$(running_pid "$d"); then
      if [ "$(redis-cli -h 127.0.0.1 -p "$port" info server 2>/dev/null |
              sed -n 's/^process_id:\([0-9]*\).*/\1/p')" = "$pid" ]; then
        return 0
      fi
    elif [ -f "$d/redis.log" ] && grep -q 'Could not create server TCP\|Address already in use' "$d/redis.log"; then
      break
    fi
    sleep 0.05
  done
  stop_one "$d"
  rm -rf "$d"
  return 1
}

# Stop the master of directory $1: SIGTERM, SIGKILL after 5 s.
stop_one() {
  local pid
  pid=$(running_pid "$1") || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do
    alive "$pid" || return 0
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null || true
}

cmd_stop() {
  local d n=0
  if [ ! -d "$dir" ]; then
    say "none running ($dir does not exist)"
    return 0
  fi
  while IFS= read -r d; do
    [ -n "$d" ] || continue
    if running_pid "$d" >/dev/null; then n=$((n + 1)); fi
    stop_one "$d"
  done < <(master_dirs)
  rm -rf "$dir"
  say "stopped $n; removed $dir"
}

cmd_status() {
  local d pid up=0 all=0
  while IFS= read -r d; do
    [ -n "$d" ] || continue
    all=$((all + 1))
    if pid=$(running_pid "$d"); then
      up=$((up + 1))
      echo "127.0.0.1:$(basename "$d") pid $pid up"
    else
      echo "127.0.0.1:$(basename "$d") down"
    fi
  done < <(master_dirs)
  say "$up of $all up; config $config"
  [ "$all" -gt 0 ] && [ "$up" -eq "$all" ]
}

cmd_start() {
  local n="$1" base port started=() d tries
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || { say "N must be 1 to 64"; exit 64; }
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
    { say "redis-server not installed (scripts/deps.sh --run)"; exit 69; }
  if [ -f "$config" ] && [ -n "$(master_dirs)" ] && cmd_status >/dev/null 2>&1; then
    say "already running in $dir (scripts/masters.sh stop first for others)"
    echo "$config"
    return 0
  fi
  # Leftovers of masters that died: stop what still runs and start afresh.
  [ ! -d "$dir" ] || cmd_stop >/dev/null 2>&1
  mkdir -p "$dir"
  chmod 700 "$dir"
  base=${REDLOCK_MASTERS_PORT:-7001}
  [[ "$base" =~ ^[0-9]+$ ]] && [ "$base" -le 65535 ] || { say "REDLOCK_MASTERS_PORT must be a port or 0"; exit 64; }
  [ "$base" -eq 0 ] || [ $((base + n - 1)) -le 65535 ] || { say "ports $base.. do not fit"; exit 64; }
  port=$base
  for i in $(seq 1 "$n"); do
    if [ "$base" -eq 0 ]; then
      # Any free ports: random ones tried until one starts (20 tries).
      for _ in $(seq 1 20); do
        port=$((20000 + RANDOM % 40000))
        [ ! -e "$dir/$port" ] && start_one "$port" && break
        port=""
      done
    else
      start_one "$port" || port=""
    fi
    if [ -z "$port" ]; then
      say "master $i would not start (port ${base/#0/any} in use? see its log above)"
      cmd_stop >/dev/null 2>&1
      exit 69
    fi
    started+=("$port")
    [ "$base" -eq 0 ] || port=$((port + 1))
  done
  {
    echo "# Written by scripts/masters.sh: ${#started[@]} local masters for trying"
    echo "# libredlock (127.0.0.1 only). They run AOF with appendfsync always, so"
    echo "# they are durable: a restart does not make them forget a lock."
    echo "durable: true"
    echo "nodes:"
    for port in "${started[@]}"; do
      printf '  - host: 127.0.0.1\n    port: %s\n' "$port"
    done
  } >"$config"
  say "${#started[@]} masters on 127.0.0.1 ports ${started[*]} ($dir); stop: scripts/masters.sh stop"
  echo "$config"
}

[ $# -ge 1 ] || usage
case $1 in
  start)
    [ $# -le 2 ] || usage
    cmd_start "${2:-5}" ;;
  config)
    [ $# -eq 1 ] || usage
    [ -f "$config" ] || { say "none running (scripts/masters.sh start)"; exit 69; }
    echo "$config" ;;
  status)
    [ $# -eq 1 ] || usage
    cmd_status ;;
  stop)
    [ $# -eq 1 ] || usage
    cmd_stop ;;
  *) usage ;;
esac
