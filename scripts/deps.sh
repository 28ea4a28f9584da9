#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what building, testing and checking libredlock needs (compilers,
# sanitizer and fuzzer runtimes, valgrind, static analysers), from Debian's archive.
# Idempotent: packages already present are left alone.
#
#   scripts/deps.sh                 # everything (scripts/test.sh, CI)
#   scripts/deps.sh --build         # only what scripts/build.sh needs (the Dockerfile)
#   scripts/deps.sh --run           # that and redis-server: building and running
#                                   # the demo and local masters (scripts/demo.sh,
#                                   # scripts/masters.sh, docs/quickstart.md)
#   scripts/deps.sh --build --list  # print a list, one a line, install nothing
set -euo pipefail

# Enough for scripts/build.sh: the library, the tool, the tests and the
# failover program. The Dockerfile installs these alone, and the compose
# drill puts them in its base image, so the client image builds offline.
build_packages=(
  build-essential cmake pkg-config
  libhiredis-dev libev-dev libyaml-dev libjansson-dev libssl-dev openssl
  libcriterion-dev
)
# Running the demo and masters to try with (scripts/masters.sh).
run_packages=(redis-server)
# Running the tests and the checks besides.
check_packages=(
  faketime libfaketime
  docker.io docker-compose debootstrap
  clang libclang-rt-14-dev llvm valgrind clang-tidy cppcheck
  man-db groff-base dpkg-dev
  spin
  prometheus # and promtool: test/metrics/prometheus.sh
)

tier=all
list_only=0
for a in "$@"; do
  case $a in
    --build) tier=build ;;
    --run) tier=run ;;
    --list) list_only=1 ;;
    *) echo "usage: $0 [--build | --run] [--list]" >&2; exit 64 ;;
  esac
done
packages=("${build_packages[@]}")
[ "$tier" = build ] || packages+=("${run_packages[@]}")
[ "$tier" != all ] || packages+=("${check_packages[@]}")
if [ "$list_only" -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
  # A fresh Debian server often has no sudo: say what root should run.
  if ! command -v sudo >/dev/null 2>&1; then
    echo "$0: missing: ${missing[*]}" >&2
    echo "Not root, and no sudo here: as root, run" >&2
    echo "  apt-get update && apt-get install --no-install-recommends ${missing[*]}" >&2
    echo "then this again." >&2
    exit 1
  fi
fi
echo "Installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
