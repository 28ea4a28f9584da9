#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build libredlock against hiredis 1.x, with TLS (hiredis_ssl), and run the
# whole test suite with it, the TLS tests included.
#
# Debian 12 ships hiredis 0.14; the library must also work with hiredis 1.x.
# scripts/hiredis1-fetch.sh takes Debian 13's hiredis packages with apt and
# unpacks them into build-hiredis1/ without installing anything; this builds
# and tests there. CI runs the suite against hiredis 1.x under
# AddressSanitizer instead (scripts/sanitize.sh asan --hiredis1): this is
# the same without the sanitizers, by hand.
#
#   scripts/hiredis1-check.sh [CMAKE-ARGS...]
#   DEBIAN_MIRROR=URI   the Debian mirror to use instead of apt's
#   HIREDIS1_SUITE=S    the suite to take hiredis 1.x from (trixie)
set -euo pipefail
cd "$(dirname "$0")/.."

work="build-hiredis1"
mkdir -p "$work"
libdir=$(scripts/hiredis1-fetch.sh "$work" | tail -n 1)
version=$(sed -n 's/^Version: //p' "$work/pkgconfig/hiredis.pc")

echo "Building against hiredis $version"
PKG_CONFIG_PATH="$(cd "$work/pkgconfig" && pwd)" \
  cmake -S . -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$work/build" -j "$(nproc)"
scripts/hiredis1-verify.sh "$work/build" "$libdir"
# The model checks run spin, not our code: the main suite runs them.
LD_LIBRARY_PATH="$libdir" ctest --test-dir "$work/build" --output-on-failure -j "$(nproc)" -LE model
