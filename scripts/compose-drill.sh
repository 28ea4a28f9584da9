#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The docker compose failover drill, run for real: docker-compose.yml's five
# masters (AOF, appendfsync always) and two client containers running the
# failover program's clients, while this script breaks things through
# docker: a master killed (SIGKILL) and started again, restarted (SIGTERM),
# paused (cgroup freezer), or cut off the network; a client container
# killed while it holds the lock. Never more than two masters (a minority)
# out at once. Then the failover checker reads every client's event log.
#
#   scripts/compose-drill.sh                # the default drill (120 s of faults)
#   scripts/compose-drill.sh --seconds 600  # longer
#   scripts/compose-drill.sh --unsafe       # masters without persistence restarted
#                                           # at once, still declared durable
#                                           # (config/docker.yaml): shows why the
#                                           # persistence rule exists
#   scripts/compose-drill.sh --seed 1234    # the same choice of faults again
#   scripts/compose-drill.sh --keep DIR     # keep the event logs in DIR
#   scripts/compose-drill.sh --prepare      # only make the base image (below) and
#                                           # stop: minutes of downloads and
#                                           # unpacking and little CPU, so CI
#                                           # runs it beside the test passes
#
# Needs root (or sudo). Installs docker.io, docker-compose and debootstrap
# from Debian when missing, and starts a Docker daemon when none answers
# (stopped again at the end). No registry is needed: the image the masters
# and the client build on is made with debootstrap from the Debian mirror
# apt is configured with here, and kept for the next run.
#
# Prints one summary line with violations=N; exits 0 when no two holders
# ever overlapped, every section ended, fencing tokens grew in lock order
# and the lock stayed live, 1 otherwise (--unsafe: 0 once it ran), 2 when
# the drill itself could not run. Everything it started (containers, the
# network, volumes, the client image, the daemon) is removed at the end,
# also on error and on Ctrl-C.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  exec sudo -E "$0" "$@"
fi
cd "$(dirname "$0")/.."

seconds=120
unsafe=0
seed=$(( $(date +%s) % 100000 ))
keep=""
prepare=0
usage() { echo "usage: $0 [--seconds N] [--unsafe] [--seed S] [--keep DIR] | --prepare" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage; seconds=$2; shift 2 ;;
    --seed) [[ ${2:-} =~ ^[0-9]+$ ]] || usage; seed=$2; shift 2 ;;
    --keep) [ -n "${2:-}" ] || usage; keep=$2; shift 2 ;;
    --unsafe) unsafe=1; shift ;;
    --prepare) prepare=1; shift ;;
    *) usage ;;
  esac
done

masters=(redis1 redis2 redis3 redis4 redis5)
clients=2
project=redlockdrill
net=${REDLOCK_DRILL_NET:-10.77.38}
failover=build/test/failover/redlock-failover

work=$(mktemp -d /tmp/redlock-drill.XXXXXX)
logs=$work/logs
mkdir -p "$logs"
faults_log=$logs/faults.log
started_dockerd=""
compose_up=0

say() { echo "drill: $*"; }
die() { echo "drill: $*" >&2; exit 2; }
# A step's own output goes to the work directory; shown when it fails.
quiet() {
  local out=$work/step.log
  if ! "$@" >"$out" 2>&1; then
    tail -n 30 "$out" >&2
    die "failed: $*"
  fi
}

# --- Cleanup: on any exit, error or signal ------------------------------------

compose=(docker-compose -p "$project" -f docker-compose.yml)

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if [ "$compose_up" -eq 1 ]; then
    say "removing the drill's containers, network, volumes and client image"
    # A paused container cannot be stopped: unpause what is left paused.
    for c in $("${compose[@]}" ps -q 2>/dev/null); do
      [ "$(docker inspect -f '{{.State.Paused}}' "$c" 2>/dev/null)" = true ] && docker unpause "$c" >/dev/null
    done
    "${compose[@]}" down -v --rmi local --remove-orphans -t 5 >"$work/down.log" 2>&1 \
      || { cat "$work/down.log" >&2; rc=2; }
  fi
  if [ -n "$started_dockerd" ]; then
    say "stopping the Docker daemon it started (pid $started_dockerd)"
    kill -TERM "$started_dockerd" 2>/dev/null
    for _ in $(seq 1 60); do
      kill -0 "$started_dockerd" 2>/dev/null || break
      sleep 0.5
    done
    kill -0 "$started_dockerd" 2>/dev/null && kill -KILL "$started_dockerd"
  fi
  # debootstrap mounts /proc and /sys in its target: never leave them.
  awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m"
  done
  if [ -n "$keep" ] || { [ "$rc" -ne 0 ] && [ "$unsafe" -eq 0 ]; }; then
    local dest=${keep:-$work-logs}
    mkdir -p "$dest" && cp -a "$logs/." "$dest/" && say "event logs kept in $dest"
  fi
  rm -rf --one-file-system "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- 1. Tools: Debian's packages, and the program that marks and checks -------

missing=()
for p in docker.io docker-compose debootstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  quiet apt-get update -qq
  DEBIAN_FRONTEND=noninteractive quiet apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The event logs are marked and checked on this machine, with the clock the
# containers share with it. (--prepare builds nothing here: it may run
# beside a build of the same tree.)
if [ "$prepare" -eq 0 ]; then
  quiet scripts/deps.sh --build
  if [ ! -f build/CMakeCache.txt ]; then
    quiet cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  quiet cmake --build build -j "$(nproc)" --target redlock-failover
fi
mark() { "$failover" --mark "$@"; }

# A Docker daemon: the one running, else one of our own. Ours leaves the
# host's firewall, forwarding and interfaces alone (no iptables rules, no
# default bridge): the drill's containers only talk among themselves on
# the drill's bridge, and images build from the local base image, offline.
if ! docker info >/dev/null 2>&1; then
  say "no Docker daemon answers: starting dockerd (log: $work/dockerd.log)"
  setsid dockerd --iptables=false --ip-forward=false --bridge=none \
    >"$work/dockerd.log" 2>&1 </dev/null &
  started_dockerd=$!
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$started_dockerd" 2>/dev/null || { tail -n 20 "$work/dockerd.log" >&2; die "dockerd exited"; }
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || die "dockerd did not answer within 30 s"
fi

# --- 2. The base image: debootstrap, no registry -------------------------------

# The Debian mirror apt uses here (bookworm, main): the first matching
# source of /etc/apt/sources.list, sources.list.d/*.list (one-line format)
# or sources.list.d/*.sources (deb822).
debian_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    awk '$1 == "deb" {
           i = 2
           if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
           if ($(i + 1) != "bookworm") next
           for (j = i + 2; j <= NF; j++) if ($j == "main") { print $i; exit }
         }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk 'function flush() {
           if (!found && (" " v["types"] " ") ~ / deb / && v["enabled"] != "no" &&
               (" " v["suites"] " ") ~ / bookworm / && (" " v["components"] " ") ~ / main /) {
             split(v["uris"], u, " "); print u[1]; found = 1
           }
           delete v
         }
         /^#/ { next }
         /^[ \t]*$/ { flush(); next }
         /^[ \t]/ { v[key] = v[key] " " $0; next }
         { key = tolower(substr($0, 1, index($0, ":") - 1)); v[key] = substr($0, index($0, ":") + 1) }
         END { flush() }' "$f"
  done
}

# The base: minbase bookworm with redis-server and what building needs
# (scripts/deps.sh --build), so the masters run it as is and the client
# image builds on it offline. Named after that package list: a changed list
# makes a new one; an existing one is used as is.
packages=$({ echo redis-server; scripts/deps.sh --build --list; } | sort -u)
base=libredlock/base:bookworm-$(sha256sum <<<"$packages" | cut -c1-12)
if docker image inspect "$base" >/dev/null 2>&1; then
  say "base image $base: cached"
else
  mirror=$(debian_mirror)
  mirror=${mirror%%$'\n'*}
  [ -n "$mirror" ] || die "no Debian bookworm mirror (main) in apt's sources"
  say "building the base image $base with debootstrap (bookworm, minbase)"
  start=$SECONDS
  quiet debootstrap --variant=minbase --include="$(paste -sd, - <<<"$packages")" \
    bookworm "$work/rootfs" "$mirror"
  # Downloaded packages and indexes: not needed in the image.
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  tar -C "$work/rootfs" -c . | quiet docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' - "$base"
  rm -rf --one-file-system "$work/rootfs"
  say "base image built in $((SECONDS - start)) s"
fi
if [ "$prepare" -eq 1 ]; then
  say "base image $base ready"
  exit 0
fi

# --- 3. and 4. The client image, the masters, the clients ----------------------

export REDLOCK_REDIS_IMAGE=$base REDLOCK_BASE_IMAGE=$base REDLOCK_DRILL_LOGS=$logs
if [ "$unsafe" -eq 1 ]; then
  # Unsafe: the same masters without persistence.
  {
    echo "services:"
    for m in "${masters[@]}"; do
      printf '  %s:\n    command: [redis-server, --appendonly, "no", --save, "", ' "$m"
      printf -- '--protected-mode, "no", --dir, /data]\n'
    done
  } >"$work/unsafe.yml"
  compose+=(-f "$work/unsafe.yml")
fi
compose_up=1
start=$SECONDS
say "building the client image (Dockerfile on $base)"
quiet "${compose[@]}" build client
say "client image built in $((SECONDS - start)) s"

quiet "${compose[@]}" up -d "${masters[@]}"
declare -A cid
for m in "${masters[@]}"; do
  cid[$m]=$("${compose[@]}" ps -q "$m")
done
network=$(docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}' "${cid[redis1]}")
for _ in $(seq 1 120); do
  healthy=0
  for m in "${masters[@]}"; do
    [ "$(docker inspect -f '{{.State.Health.Status}}' "${cid[$m]}")" = healthy ] && healthy=$((healthy + 1))
  done
  [ "$healthy" -eq ${#masters[@]} ] && break
  sleep 0.5
done
[ "$healthy" -eq ${#masters[@]} ] || die "the masters did not become healthy within 60 s"
say "5 masters healthy on $network ($([ "$unsafe" -eq 1 ] && echo "no persistence: UNSAFE" || echo "AOF, appendfsync always"))"

# A new deployment: put the fencing counters in use once, before any client.
quiet "${compose[@]}" run --rm --no-deps -T client redlock fencing-init
quiet "${compose[@]}" up -d --no-deps --scale "client=$clients" client
mapfile -t client_ids < <("${compose[@]}" ps -q client)
[ ${#client_ids[@]} -eq "$clients" ] || die "expected $clients client containers, found ${#client_ids[@]}"
for _ in $(seq 1 60); do
  [ "$(find "$logs" -name 'events-*.log' | wc -l)" -ge "$clients" ] && break
  sleep 0.5
done
say "$clients client containers running the failover clients (each: 2 library processes x 3 threads, 3 redlock run loops)"

# --- 5. Faults ---------------------------------------------------------------

RANDOM=$seed
# Wall-clock ms, for the schedule only (the logs use the shared monotonic
# clock, through --mark). The decimal mark is the locale's.
now_ms() { local t=$EPOCHREALTIME; now=$(( ${t%[.,]*} * 1000 + 10#${t#*[.,]} / 1000 )); }
now_ms
t0=$now
declare -A state back_at seeding
for m in "${masters[@]}"; do state[$m]=up; seeding[$m]=0; done
down_client=""
client_down_at=0
declare -A count

up_count() {
  local n=0 m
  for m in "${masters[@]}"; do [ "${state[$m]}" = up ] && n=$((n + 1)); done
  echo "$n"
}
# Masters out: down, paused, cut off, or back but not seeded yet (a
# fenced acquire cannot count it yet: docs/fencing.md).
out_count() {
  local n=0 m
  for m in "${masters[@]}"; do
    { [ "${state[$m]}" != up ] || [ "${seeding[$m]}" -eq 1 ]; } && n=$((n + 1))
  done
  echo "$n"
}
fault() { # kind master
  count[$1]=$(( ${count[$1]:-0} + 1 ))
  mark "$faults_log" F "$1" "${2#redis}"
  mark "$faults_log" U "$(up_count)"
  now_ms
  printf 'drill: %6.1f s  %-11s %-7s %s of 5 masters up\n' \
    "$(( (now - t0) / 100 ))e-1" "$1" "$2" "$(up_count)"
}
answers_ping() { [ "$(docker exec "${cid[$1]}" redis-cli ping 2>/dev/null | tr -d '\r')" = PONG ]; }
# A master back from a kill or a restart counts as up once it answers PING.
wait_ping() {
  local m=$1
  for _ in $(seq 1 120); do
    answers_ping "$m" && break
    sleep 0.25
  done
  answers_ping "$m" || die "$m does not answer PING 30 s after its restart"
  state[$m]=up
  seeding[$m]=1
  fault restart "$m"
}
# Its fencing counter counts in its current run again (seeded by the
# clients' next fenced acquires).
seeded() {
  local run counted
  run=$(docker exec "${cid[$1]}" redis-cli INFO server 2>/dev/null | tr -d '\r' | sed -n 's/^run_id://p')
  counted=$(docker exec "${cid[$1]}" redis-cli HGET redlock:fence run 2>/dev/null | tr -d '\r')
  [ -n "$run" ] && [ "$run" = "$counted" ]
}
random_master() { # one that is up and seeded, into $victim
  local up=() m
  for m in "${masters[@]}"; do
    [ "${state[$m]}" = up ] && [ "${seeding[$m]}" -eq 0 ] && up+=("$m")
  done
  victim=""
  [ ${#up[@]} -gt 0 ] && victim=${up[RANDOM % ${#up[@]}]}
  return 0
}
kill_master() {
  docker kill -s KILL "${cid[$1]}" >/dev/null
  state[$1]=down
  fault "$([ "$unsafe" -eq 1 ] && echo kill-unsafe || echo kill-aof)" "$1"
}
# The newest event log of a client container (one per start).
client_log() {
  local host
  host=$(docker inspect -f '{{.Config.Hostname}}' "$1")
  find "$logs" -name "events-$host-*.log" | sort -V | tail -n 1
}
# The running client container with a critical section open now, if any.
holder_container() {
  local c f open
  holder=""
  for c in "${client_ids[@]}"; do
    [ "$c" = "$down_client" ] && continue
    f=$(client_log "$c")
    [ -n "$f" ] || continue
    open=$(awk '$1 == "S" { open[$5] = $3 } $1 == "E" { delete open[$4] }
                $1 == "X" { for (v in open) if (open[v] == $3) delete open[v] }
                END { n = 0; for (v in open) n++; print n }' "$f")
    if [ "$open" -gt 0 ]; then holder=$c; return 0; fi
  done
  return 0
}

# Sections of `redlock run` holders started so far (their deadline is 0:
# the run extends its lock as long as its command works).
run_sections() { cat "$logs"/events-*.log | awk '$1 == "S" && $4 == 0' | wc -l; }

# --unsafe: the restart the persistence rule forbids, where it hurts, a
# minority at a time. Two masters go down; a `redlock run` holder takes
# the lock on the three others, a bare majority; the two come back
# (empty, which is harmless: they never had its key); then one of the
# holder's three is killed and started at once, empty. Its key is left on
# two masters, and a contender can take the lock on the other three while
# the holder still acts, until its next extension fails.
unsafe_restart() {
  local a=$1 b c before
  b=$a
  while [ "$b" = "$a" ]; do b=${masters[RANDOM % 5]}; done
  c=$a
  while [ "$c" = "$a" ] || [ "$c" = "$b" ]; do c=${masters[RANDOM % 5]}; done
  before=$(run_sections)
  kill_master "$a"
  kill_master "$b"
  for _ in $(seq 1 160); do
    [ "$(run_sections)" -gt "$before" ] && break
    sleep 0.05
  done
  docker start "${cid[$a]}" "${cid[$b]}" >/dev/null
  wait_ping "$a"
  wait_ping "$b"
  kill_master "$c"
  docker start "${cid[$c]}" >/dev/null
  wait_ping "$c"
}

# Bring back what is due; note masters seeded again.
tend() {
  local m
  now_ms
  for m in "${masters[@]}"; do
    case ${state[$m]} in
      paused)
        if [ "$now" -ge "${back_at[$m]}" ]; then
          docker unpause "${cid[$m]}" >/dev/null
          state[$m]=up
          fault unpause "$m"
        fi ;;
      cut)
        if [ "$now" -ge "${back_at[$m]}" ]; then
          docker network connect --ip "$net.1${m#redis}" --alias "$m" "$network" "${cid[$m]}"
          state[$m]=up
          fault heal "$m"
        fi ;;
      up)
        if [ "${seeding[$m]}" -eq 1 ] && seeded "$m"; then seeding[$m]=0; fi ;;
    esac
  done
  if [ -n "$down_client" ] && [ "$now" -ge "$client_down_at" ]; then
    docker start "$down_client" >/dev/null
    down_client=""
    say "        client container started again"
  fi
}

inject() {
  local roll=$((RANDOM % 100)) out
  out=$(out_count)
  now_ms
  if [ "$roll" -lt 20 ] && [ -z "$down_client" ]; then
    holder_container
    if [ -n "$holder" ]; then
      local f
      f=$(client_log "$holder")
      docker kill -s KILL "$holder" >/dev/null
      # Its clients are all gone: their sections end here, their lock
      # frees itself when its keys expire.
      mark "$f" C
      down_client=$holder
      client_down_at=$((now + 2000 + RANDOM % 2000))
      count[client-kill]=$(( ${count[client-kill]:-0} + 1 ))
      printf 'drill: %6.1f s  %-11s %s\n' "$(( (now - t0) / 100 ))e-1" client-kill \
        "the client container holding the lock (SIGKILL; started again in 2-4 s)"
      return
    fi
  fi
  # A minority at most: this fault takes one more master out.
  [ "$out" -lt 2 ] || return 0
  random_master
  [ -n "$victim" ] || return 0
  if [ "$unsafe" -eq 1 ] && [ "$roll" -lt 60 ] && [ "$out" -eq 0 ]; then
    unsafe_restart "$victim"
  elif [ "$roll" -lt 45 ]; then
    # SIGKILL and back at once: with AOF appendfsync always it keeps its keys.
    kill_master "$victim"
    docker start "${cid[$victim]}" >/dev/null
    wait_ping "$victim"
  elif [ "$roll" -lt 60 ]; then
    # SIGTERM (docker restart): a clean shutdown, back at once.
    state[$victim]=down
    fault term "$victim"
    docker restart -t 10 "${cid[$victim]}" >/dev/null
    wait_ping "$victim"
  elif [ "$roll" -lt 80 ]; then
    docker pause "${cid[$victim]}" >/dev/null
    state[$victim]=paused
    back_at[$victim]=$((now + 1000 + RANDOM % 3000))
    fault pause "$victim"
  else
    # Cut off the drill's network: alive, keys intact, unreachable.
    docker network disconnect "$network" "${cid[$victim]}"
    state[$victim]="cut"
    back_at[$victim]=$((now + 2000 + RANDOM % 3000))
    fault partition "$victim"
  fi
}

say "$seconds s of faults (seed $seed: --seed $seed chooses the same faults)"
mark "$faults_log" U 5
drill_start=$SECONDS
end=$((SECONDS + seconds))
now_ms
next_fault=$((now + 3000))
for _ in $(seq 1 $((seconds * 20))); do
  [ "$SECONDS" -lt "$end" ] || break
  tend
  if [ "$now" -ge "$next_fault" ]; then
    inject
    now_ms
    next_fault=$((now + 1500 + RANDOM % 2500))
  fi
  sleep 0.2
done
mark "$faults_log" Z

# Heal every master, then stop the clients (each stops its processes,
# which log how their sections ended).
for m in "${masters[@]}"; do back_at[$m]=0; done
tend
for m in "${masters[@]}"; do
  [ "${state[$m]}" = up ] || die "$m is still ${state[$m]} after healing"
done
[ -z "$down_client" ] || { docker start "$down_client" >/dev/null; down_client=""; }
quiet "${compose[@]}" stop -t 30 client
drill_time=$((SECONDS - drill_start))

# --- 6. The verdict ----------------------------------------------------------

check_args=(--json)
[ "$unsafe" -eq 0 ] || check_args+=(--unsafe)
rc=0
"$failover" --check "${check_args[@]}" "$logs"/*.log >"$work/check.txt" || rc=$?
grep -v '^{' "$work/check.txt"
json=$(grep '^{' "$work/check.txt" || true)
[ -n "$json" ] || die "the checker gave no figures (exit $rc)"
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$json"; }
kinds=$(sed -n 's/.*"faults":{\([^}]*\)}.*/\1/p' <<<"$json" | tr -d '"' | tr ':,' '= ')
violations=$(field violations)
verdict=PASS
[ "$rc" -eq 0 ] || verdict=FAIL
[ "$unsafe" -eq 0 ] || verdict=UNSAFE
echo "compose-drill: $verdict violations=$violations token_violations=$(field token_violations)" \
  "unterminated=$(field unterminated) sections=$(field sections)" \
  "longest_free_s=$(field longest_gap_s) seconds=$drill_time faults: $kinds"
[ "$rc" -eq 0 ] || exit 1
