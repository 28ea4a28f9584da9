#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Check that a build made with scripts/hiredis1-fetch.sh's hiredis 1.x is
# what it claims to be: TLS (hiredis_ssl) is on, and the tests run with the
# unpacked hiredis 1.x rather than the system's 0.14.
#
#   scripts/hiredis1-verify.sh BUILD LIBDIR
#
# BUILD is the CMake build directory, LIBDIR the directory hiredis1-fetch.sh
# printed. Used by scripts/hiredis1-check.sh and scripts/sanitize.sh.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD LIBDIR" >&2
  exit 2
fi
build=$1
libdir=$2

if ! grep -q '^REDLOCK_TLS:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "the hiredis 1.x build in $build has no TLS: is libssl-dev installed?" >&2
  exit 1
fi
# ldd's output is read whole first: "ldd | grep -q" fails now and then under
# pipefail, when grep exits on its match before ldd has written everything.
linked=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  ldd "$build/test/integration_tests")
if ! grep -qF "$libdir/libhiredis" <<<"$linked"; then
  echo "the tests in $build would not run with hiredis 1.x from $libdir:" >&2
  grep -F libhiredis <<<"$linked" >&2 || true
  exit 1
fi
