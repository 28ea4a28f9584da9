#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's first command on a clean Debian 12 machine, for real: a
# manual check, not part of the suite or CI (it downloads and builds
# everything, several minutes). A minimal Debian 12 root (debootstrap
# --variant=minbase bookworm, from the Debian mirror apt is configured with
# here: no registry, no sudo, git, ca-certificates or compiler) becomes the
# image redlock-clean-bookworm:local; a container from it gets the sources
# as `git archive HEAD` gives them (what is committed, as a clone has it)
# and runs `./scripts/demo.sh`: first as a user without sudo (it must
# install nothing and say what to run as root), then as root (it installs
# what building and running need with apt, builds, runs the demo), timed;
# then docs/quickstart.md's steps, its build step included, with
# test/docs/quickstart.sh.
#
#   scripts/clean-machine-check.sh                  # at most 45 min
#   scripts/clean-machine-check.sh --minutes 90     # a slower machine
#   scripts/clean-machine-check.sh --keep-image     # keep the image for the next run
#   scripts/clean-machine-check.sh --demo-only      # skip the quickstart
#   scripts/clean-machine-check.sh --keep DIR       # keep the container's logs in DIR
#
# Needs root (or sudo), docker and debootstrap (installed from Debian when
# missing), and a Docker daemon (started when none answers, stopped at the
# end). The container uses the daemon's default bridge to reach the mirror
# (apt), publishes no port, and gets one CPU. Exits 0 when both ran and
# passed, 1 when one failed, 2 when the check itself could not run. The
# container, the root directory and the image (unless --keep-image) are
# removed on every exit, error and Ctrl-C included.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  exec sudo -E "$0" "$@"
fi
cd "$(dirname "$0")/.."

minutes=45
keep_image=0
quickstart=1
keep=""
usage() { echo "usage: $0 [--minutes N] [--keep-image] [--demo-only] [--keep DIR]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage; minutes=$2; shift 2 ;;
    --keep-image) keep_image=1; shift ;;
    --demo-only) quickstart=0; shift ;;
    --keep) [ -n "${2:-}" ] || usage; keep=$2; shift 2 ;;
    *) usage ;;
  esac
done
deadline=$((SECONDS + minutes * 60))

image=redlock-clean-bookworm:local
container=redlock-clean-check-$$
work=$(mktemp -d /tmp/redlock-clean.XXXXXX)
started_dockerd=""
forward_policy=""
made_image=0
step=""

say() { echo "clean-machine: $*"; }
die() { echo "clean-machine: $*" >&2; exit 2; }
quiet() {
  if ! "$@" >"$work/step.log" 2>&1; then
    tail -n 30 "$work/step.log" >&2
    die "failed: $*"
  fi
}
# Seconds left, at least 1 (timeout 0 would mean no limit).
left() { local n=$((deadline - SECONDS)); echo $((n > 0 ? n : 1)); }
# A long step within the time left, in the background so that Ctrl-C runs
# the cleanup at once (bash runs a trap only once its foreground command
# ends); the cleanup stops it. Its input stays the caller's (<&0: not
# /dev/null, as for other background commands). Returns its exit status.
bounded() {
  timeout -k 10 "$(left)" "$@" <&0 &
  step=$!
  local rc=0
  wait "$step" || rc=$?
  step=""
  return "$rc"
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if [ -n "$step" ]; then
    # timeout passes the signal on to the step's whole process group.
    kill -TERM "$step" 2>/dev/null
    for _ in $(seq 1 60); do
      kill -0 "$step" 2>/dev/null || break
      sleep 0.5
    done
  fi
  if [ -n "$keep" ] && docker container inspect "$container" >/dev/null 2>&1; then
    mkdir -p "$keep" && for log in demo.log quickstart.log; do
      docker cp "$container:/root/$log" "$keep/" >/dev/null 2>&1
    done
    say "the container's logs kept in $keep"
  fi
  docker rm -f "$container" >/dev/null 2>&1
  if [ "$made_image" -eq 1 ] && [ "$keep_image" -eq 0 ]; then
    docker rmi "$image" >/dev/null 2>&1 && say "image $image removed"
  fi
  if [ -n "$started_dockerd" ]; then
    say "stopping the Docker daemon it started (pid $started_dockerd)"
    kill -TERM "$started_dockerd" 2>/dev/null
    for _ in $(seq 1 60); do
      kill -0 "$started_dockerd" 2>/dev/null || break
      sleep 0.5
    done
    kill -0 "$started_dockerd" 2>/dev/null && kill -KILL "$started_dockerd"
    if [ -n "$forward_policy" ]; then
      iptables -P FORWARD "$forward_policy" 2>/dev/null
    fi
  fi
  # debootstrap mounts /proc and /sys in its target: never leave them.
  awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m"
  done
  rm -rf --one-file-system "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- Tools and a daemon ---------------------------------------------------------

missing=()
for p in docker.io debootstrap; do
  command -v "${p%.io}" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  quiet apt-get update -qq
  DEBIAN_FRONTEND=noninteractive quiet apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! docker info >/dev/null 2>&1; then
  say "no Docker daemon answers: starting dockerd (log: $work/dockerd.log)"
  # Its NAT lets the container reach the mirror; it also sets the host's
  # FORWARD policy to DROP and leaves it so when it stops, which would cut
  # the compose drill's own daemon (no iptables) off: put it back after.
  forward_policy=$(iptables -S FORWARD 2>/dev/null | awk '$1 == "-P" { print $3; exit }')
  setsid dockerd >"$work/dockerd.log" 2>&1 </dev/null &
  started_dockerd=$!
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$started_dockerd" 2>/dev/null || { tail -n 20 "$work/dockerd.log" >&2; die "dockerd exited"; }
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || die "dockerd did not answer within 30 s"
fi

# --- The clean image: minbase bookworm, nothing else ------------------------------

# The Debian mirror apt uses here (bookworm, main), as scripts/compose-drill.sh
# finds it: one-line sources, then deb822 ones.
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

if docker image inspect "$image" >/dev/null 2>&1; then
  say "image $image: kept from an earlier run (--keep-image), used as is"
else
  mirror=$(debian_mirror)
  mirror=${mirror%%$'\n'*}
  [ -n "$mirror" ] || die "no Debian bookworm mirror (main) in apt's sources"
  say "building $image with debootstrap (bookworm, minbase, $mirror)"
  start=$SECONDS
  bounded nice -n 10 debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" \
    >"$work/step.log" 2>&1 || { tail -n 30 "$work/step.log" >&2; die "debootstrap failed"; }
  # A fresh server has its package indexes to fetch and nothing in apt's cache.
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  made_image=1
  tar -C "$work/rootfs" -c . | quiet docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' - "$image"
  rm -rf --one-file-system "$work/rootfs"
  say "image built in $((SECONDS - start)) s"
fi

# --- The README's first command, then the quickstart ------------------------------

[ -z "$(git status --porcelain --untracked-files=no)" ] ||
  say "uncommitted changes are not checked: the container gets HEAD ($(git rev-parse --short HEAD))"
# Inside, as root in /root/libredlock: nothing of what the demo installs
# may be there before it (a clean machine), then the demo, each line of its
# output stamped with the seconds since it began, so the apt install, the
# build and the run can be told apart.
# shellcheck disable=SC2016 # expanded inside the container
inside='set -u
for tool in cc gcc make cmake pkg-config redis-server sudo git; do
  if command -v $tool >/dev/null; then echo "not a clean machine: $tool is installed"; exit 2; fi
done
echo "clean: $(dpkg-query -W | wc -l) packages, no compiler, cmake, redis-server, sudo or git"
mkdir /root/libredlock && cd /root/libredlock && tar -x
# First as a user of its own, without sudo: the demo installs nothing and
# says what to run as root.
useradd -m dev && cp -a /root/libredlock /home/dev/ && chown -R dev: /home/dev/libredlock
out=$(su dev -c "cd /home/dev/libredlock && ./scripts/demo.sh" 2>&1)
rc=$?
if [ $rc -eq 0 ] || ! grep -q "as root" <<<"$out" || [ -e /usr/bin/cc ]; then
  echo "demo without root and sudo: exit $rc, not the advice to run apt-get as root:"
  echo "$out"
  exit 1
fi
echo "demo without root and sudo: exit $rc, says what to run as root"
rm -rf /home/dev/libredlock
stamp() { local l; while IFS= read -r l; do printf "%4d %s\n" $((EPOCHSECONDS - t0)) "$l"; done; }
t0=$EPOCHSECONDS
./scripts/demo.sh 2>&1 | stamp >/root/demo.log
rc=${PIPESTATUS[0]}
echo "demo: exit $rc in $((EPOCHSECONDS - t0)) s"
first() { awk -v re="$1" "\$0 ~ re { print \$1 \" s\"; exit }" /root/demo.log; }
echo "demo: apt from 0 s, build from $(first "[0-9]%] Buil"), demo from $(first " libredlock .* demo, part 1")"
if [ $rc -ne 0 ]; then tail -n 40 /root/demo.log; exit 1; fi
grep -E "mutual exclusion|Masters stopped" /root/demo.log
[ "$QUICKSTART" -eq 1 ] || exit 0
# The quickstart step by step, its own build (library and tool alone) included.
t0=$EPOCHSECONDS
steps=$(awk "/^\`\`\`sh/ { on = 1; next } /^\`\`\`/ { on = 0 } on" docs/quickstart.md)
build_step=$(grep -E "^(scripts/deps\.sh|cmake )" <<<"$steps" | sed "s/ build/ build-quickstart/")
bash -e -o pipefail -c "$build_step" >/root/quickstart.log 2>&1 &&
  test/docs/quickstart.sh build-quickstart >>/root/quickstart.log 2>&1
rc=$?
echo "quickstart: exit $rc in $((EPOCHSECONDS - t0)) s"
tail -n $([ $rc -eq 0 ] && echo 1 || echo 40) /root/quickstart.log
exit $(( rc != 0 ))'

say "running ./scripts/demo.sh in a container from $image (one CPU, default bridge, no published port)"
start=$SECONDS
rc=0
# --init: the time limit's TERM reaches the shell inside (a shell as pid 1
# would ignore it), which ends the container.
bounded docker run -i --init --name "$container" --cpus 1 \
  -e QUICKSTART="$quickstart" "$image" bash -c "$inside" < <(git archive --format=tar HEAD) || rc=$?
say "container ran for $((SECONDS - start)) s, exit $rc"
case $rc in
  0) say "the demo ran on a clean Debian 12$([ "$quickstart" -eq 1 ] && echo ", and the quickstart")" ;;
  124 | 137) say "out of time (--minutes $minutes)"; exit 2 ;;
  1) exit 1 ;;
  *) exit 2 ;;
esac
