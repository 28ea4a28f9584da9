#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fetch Debian 13's hiredis 1.x (libhiredis-dev and its runtime package, with
# TLS: hiredis_ssl) with apt, from the Debian mirror this machine's apt
# already uses, through a temporary sources list of its own (the system's
# package lists and sources are left alone; apt checks the suite's signature
# with the system's Debian keys), and unpack it into WORKDIR without
# installing anything. Writes WORKDIR/pkgconfig/hiredis.pc (and
# hiredis_ssl.pc) pointing into the unpacked tree, and prints the directory
# of its shared libraries (for LD_LIBRARY_PATH) as its last line.
#
#   scripts/hiredis1-fetch.sh WORKDIR
#   DEBIAN_MIRROR=URI   the Debian mirror to use instead of apt's
#   HIREDIS1_SUITE=S    the suite to take hiredis 1.x from (trixie)
#
# Used by scripts/hiredis1-check.sh and scripts/sanitize.sh asan --hiredis1.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 1 ]; then
  echo "usage: $0 WORKDIR" >&2
  exit 2
fi
suite="${HIREDIS1_SUITE:-trixie}"
work="$1"
root="$work/root"

# apt_debian_mirror, debian_suite_apt and debian_suite_unpack: a private
# apt for the suite, on the mirror this system's apt uses.
# shellcheck source=scripts/debian-suite.sh
. scripts/debian-suite.sh
# The mirror first: without one, fail before anything is removed.
mirror=$(debian_suite_mirror)

rm -rf "$root" "$work/debs" "$work/pkgconfig" "$work/apt"
mkdir -p "$root" "$work/debs" "$work/pkgconfig"

# apt, reading only a sources list of our own and keeping its lists and
# cache under WORKDIR/apt (the system's configuration, proxies included,
# still applies).
DEBIAN_MIRROR="$mirror" debian_suite_apt "$work/apt" "$suite"
# libhiredis-dev, then the runtime package it depends on (libhiredis1.1.0).
debian_suite_unpack "$work/debs" "$root" libhiredis-dev
dev_deb=$(ls "$work"/debs/libhiredis-dev_*.deb)
runtime=$(dpkg-deb -f "$dev_deb" Depends | tr ',' '\n' | sed -n 's/^ *\(libhiredis1\.[0-9.]*\).*/\1/p')
if [ -z "$runtime" ]; then
  echo "libhiredis-dev in $suite depends on no libhiredis1.x" >&2
  exit 1
fi
debian_suite_unpack "$work/debs" "$root" "$runtime"

abs_root="$(cd "$root" && pwd)"
hiredis_pc=$(find "$abs_root/usr/lib" -name hiredis.pc | head -n 1)
libdir="$(dirname "$(dirname "$hiredis_pc")")"
version=$(sed -n 's/^Version: //p' "$hiredis_pc")
cat > "$work/pkgconfig/hiredis.pc" <<PC
Name: hiredis
Description: hiredis $version unpacked for testing
Version: $version
Libs: -L$libdir -lhiredis
Cflags: -I$abs_root/usr/include
PC
# Its TLS support, hiredis_ssl, is in the same packages (with OpenSSL from
# the system): the TLS tests (ctest label tls) run in this build.
if [ -e "$libdir/libhiredis_ssl.so" ]; then
  cat > "$work/pkgconfig/hiredis_ssl.pc" <<PC
Name: hiredis_ssl
Description: hiredis_ssl $version unpacked for testing
Version: $version
Requires: hiredis
Libs: -L$libdir -lhiredis_ssl
Libs.private: -lssl -lcrypto
PC
fi
case "$version" in
  1.*) ;;
  *) echo "expected hiredis 1.x, got $version" >&2; exit 1 ;;
esac

echo "hiredis $version unpacked in $libdir" >&2
echo "$libdir"
