#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fetch newer Redis and Valkey servers from Debian's newer suites with apt
# (scripts/debian-suite.sh: a private sources list on the mirror this
# machine's apt uses) and unpack them, without installing anything, so that
# the tests can run against them on Debian 12. Their binaries need a newer
# glibc than Debian 12's, so each kind's root holds the suite's libc6 and
# every library the server's packages depend on, all from that suite, and
# its wrapper runs the server through that root's own loader.
#
#   scripts/servers-fetch.sh WORKDIR [KIND...]
#   KIND: redis8  (redis-server from trixie, Redis 8.0.x)
#         valkey8 (valkey-server from trixie, Valkey 8.1.x)
#         valkey9 (valkey-server from forky, Valkey 9.x)
#         all three when none is named
#   DEBIAN_MIRROR=URI   the Debian mirror to use instead of apt's
#
# Writes WORKDIR/KIND/bin/redis-server (the same name for every kind, so a
# test fleet can take any of them as its "redis-server") and, where the
# packages ship a cli, WORKDIR/KIND/bin/redis-cli: wrappers that exec them
# with all their arguments. Prints "KIND VERSION PATH-TO-redis-server" for
# each kind. A kind whose wrapper is already there and answers --version is
# not fetched again.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/debian-suite.sh
. "$here/debian-suite.sh"

usage() {
  echo "usage: $0 WORKDIR [redis8|valkey8|valkey9...]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
work="$1"
shift
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(redis8 valkey8 valkey9)

# KIND -> suite, packages (server first), server and cli names in them,
# and the major version expected.
kind_spec() {
  case "$1" in
    redis8)  echo "trixie redis-server,redis-tools redis-server redis-cli 8" ;;
    valkey8) echo "trixie valkey-server,valkey-tools valkey-server valkey-cli 8" ;;
    valkey9) echo "forky valkey-server,valkey-tools valkey-server valkey-cli 9" ;;
    *) return 1 ;;
  esac
}
for kind in "${kinds[@]}"; do
  kind_spec "$kind" >/dev/null || { echo "unknown server kind: $kind" >&2; usage; }
done
for tool in apt-get apt-cache dpkg-deb dpkg; do
  command -v "$tool" >/dev/null ||
    { echo "$tool not found: this needs Debian's apt and dpkg" >&2; exit 1; }
done

# The loader and library folders of this machine's architecture (the
# unpacked packages are of the same one).
case "$(dpkg --print-architecture)" in
  amd64) multiarch=x86_64-linux-gnu; loader_name=ld-linux-x86-64.so.2 ;;
  arm64) multiarch=aarch64-linux-gnu; loader_name=ld-linux-aarch64.so.1 ;;
  *) echo "servers-fetch.sh knows no loader for $(dpkg --print-architecture)" >&2
     exit 1 ;;
esac

mkdir -p "$work"
work="$(cd "$work" && pwd)"
# One fetch at a time into WORKDIR: CI starts one early, and the tests'
# fixture waits for it and finds everything there.
exec 9>"$work/.fetch.lock"
flock 9

# The server's version from its --version line ("... v=8.0.2 ..."); fails
# when the wrapper does not run.
server_version() {
  local out
  out=$("$1" --version 2>/dev/null) || return 1
  case "$out" in *" v="*) ;; *) return 1 ;; esac
  out="${out#* v=}"
  echo "${out%% *}"
}

# The suites' private apt configurations, each fetched once in a run.
declare -A suite_ready=()
use_suite() {
  if [ -z "${suite_ready[$1]:-}" ]; then
    debian_suite_apt "$work/.apt/$1" "$1" || return 1
    suite_ready[$1]=1
  else
    debian_suite_opts "$work/.apt/$1"
  fi
}
# The named packages and, from the same suite, every library package they
# depend on, recursively (the first of alternatives; "lib*" and zlib1g
# only: the rest, adduser, systemd, gcc-N-base..., run nothing the server
# loads). libc-gconv-modules-extra is left out: the suite's glibc looks for
# gconv modules in the system's folder, never in the root.
lib_closure() {
  local -A seen=()
  local queue=("$@") next pkg dep shown
  # A level of the search at a time, in one apt-cache call: each call
  # reads the suite's whole index (a second of CPU).
  while [ ${#queue[@]} -gt 0 ]; do
    next=()
    for pkg in "${queue[@]}"; do
      [ -z "${seen[$pkg]:-}" ] || continue
      seen[$pkg]=1
      next+=("$pkg")
      echo "$pkg"
    done
    [ ${#next[@]} -gt 0 ] || break
    # "Package NAME" and "Depends DEP" lines, per package shown.
    shown=$(apt-cache "${debian_apt_opts[@]}" show --no-all-versions "${next[@]}" 2>/dev/null |
      awk '/^Package: / { print "Package", $2 }
           /^(Pre-)?Depends: / {
             sub(/^(Pre-)?Depends: /, ""); n = split($0, d, ",")
             for (i = 1; i <= n; i++) {
               sub(/\|.*/, "", d[i]); sub(/\(.*/, "", d[i]); sub(/:.*/, "", d[i])
               gsub(/ /, "", d[i]); print "Depends", d[i]
             }
           }') || true
    for pkg in "${next[@]}"; do
      grep -qx "Package $pkg" <<<"$shown" || { echo "no package $pkg in the suite" >&2; return 1; }
    done
    queue=()
    while read -r _ dep; do
      case "$dep" in
        libc-gconv-modules-extra) ;;
        lib*|zlib1g) [ -n "${seen[$dep]:-}" ] || queue+=("$dep") ;;
      esac
    done < <(grep '^Depends ' <<<"$shown")
  done
}

# Wrappers written before preloads went to the root's loader lack this
# line: their kind is fetched again.
wrapper_mark="preload: root loader"

# write_wrapper PATH ROOT PROGRAM KIND SUITE: a script that execs ROOT's
# PROGRAM through ROOT's loader, with ROOT's libraries first.
write_wrapper() {
  local path="$1" root="$2" program="$3"
  case "$root" in
    *"'"*) echo "a folder with a ' in its name cannot be used: $root" >&2
           return 1 ;;
  esac
  cat >"$path" <<SH
#!/bin/sh
# Written by scripts/servers-fetch.sh: $4's $program (Debian $5), run
# through the loader and libraries unpacked with it (it needs a newer glibc
# than this system's).
root='$root'
loader="\$root/usr/lib/$multiarch/$loader_name"
libs="\$root/usr/lib/$multiarch:\$root/lib/$multiarch"
# $wrapper_mark: a preload (the test fleet's libfaketime and its shim) goes to
# the root's loader, not to this shell's, with the root's libfaketime in
# place of the system's, which the root's glibc cannot run.
if [ -n "\${LD_PRELOAD:-}" ]; then
  preload=\$(printf '%s' "\$LD_PRELOAD" |
    sed "s|/usr/lib/$multiarch/faketime/|\$root/usr/lib/$multiarch/faketime/|g")
  unset LD_PRELOAD
  exec "\$loader" --preload "\$preload" --library-path "\$libs" "\$root/usr/bin/$program" "\$@"
fi
exec "\$loader" --library-path "\$libs" "\$root/usr/bin/$program" "\$@"
SH
  chmod 755 "$path"
}

fetch_kind() {
  local kind="$1" suite pkgs server cli major dir root pkg_list version
  read -r suite pkgs server cli major < <(kind_spec "$kind")
  dir="$work/$kind"
  root="$dir/root"
  if [ -x "$dir/bin/redis-server" ] && grep -q "$wrapper_mark" "$dir/bin/redis-server" &&
      version=$(server_version "$dir/bin/redis-server"); then
    echo "$kind $version $dir/bin/redis-server"
    return 0
  fi

  echo "Fetching $kind ($server from Debian $suite)" >&2
  # (set -e does not hold in here: fetch_kind runs as a condition)
  rm -rf "$dir" && mkdir -p "$dir/bin" || return 1
  use_suite "$suite" || return 1
  # libc6 too: the packages' binaries need the suite's glibc and loader;
  # libfaketime for the tests' fake clocks, built for that glibc.
  # shellcheck disable=SC2086 # pkgs is a comma list of names
  pkg_list=$(lib_closure ${pkgs//,/ } libc6 libfaketime) || return 1
  # shellcheck disable=SC2086 # one package name a line
  debian_suite_unpack "$dir/debs" "$root" $pkg_list || return 1

  if [ ! -e "$root/usr/lib/$multiarch/$loader_name" ]; then
    echo "$kind: no loader $loader_name in the unpacked libc6" >&2
    return 1
  fi
  if [ ! -e "$root/usr/bin/$server" ]; then
    echo "$kind: the packages ship no /usr/bin/$server" >&2
    return 1
  fi
  # The wrapper is written last, and kept only once it runs: a fetch that
  # stopped half-way is done again next time.
  write_wrapper "$dir/bin/redis-server.new" "$root" "$server" "$kind" "$suite" ||
    return 1
  if ! version=$(server_version "$dir/bin/redis-server.new"); then
    echo "$kind: the unpacked $server does not run; its own words:" >&2
    "$dir/bin/redis-server.new" --version >&2 || true
    rm -f "$dir/bin/redis-server.new"
    return 1
  fi
  case "$version" in
    "$major".*) ;;
    *) echo "$kind: expected version $major.x, Debian $suite has $version" >&2
       rm -f "$dir/bin/redis-server.new"
       return 1 ;;
  esac
  if [ -e "$root/usr/bin/$cli" ]; then
    write_wrapper "$dir/bin/redis-cli" "$root" "$cli" "$kind" "$suite" || return 1
  fi
  mv "$dir/bin/redis-server.new" "$dir/bin/redis-server"
  echo "$kind $version $dir/bin/redis-server"
}

status=0
for kind in "${kinds[@]}"; do
  fetch_kind "$kind" || { echo "$kind: not fetched" >&2; status=1; }
done
exit "$status"
