#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what building, testing and checking libredlock needs (compilers,
# sanitizer and fuzzer runtimes, valgrind, static analysers), from Debian's archive.
# Idempotent: packages already present are left alone.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libhiredis-dev libev-dev libyaml-dev libjansson-dev libssl-dev openssl
  libcriterion-dev
  redis-server
  docker-compose
  clang libclang-rt-14-dev llvm valgrind clang-tidy cppcheck
  man-db groff-base dpkg-dev
  spin
)

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
fi
echo "Installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
