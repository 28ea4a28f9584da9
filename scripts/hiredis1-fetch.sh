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

# The mirror apt installs this system's own release from: the first "deb"
# source for its codename (deb822 .sources files and one-line .list files
# alike, as apt itself reads them), else for a suite named by status.
apt_debian_mirror() {
  local codename
  # shellcheck disable=SC1091
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  # shellcheck disable=SC2016 # apt's own $(FIELD) placeholders
  apt-get indextargets --no-release-info --format '$(TARGET_OF) $(RELEASE) $(SITE)' \
      'Identifier: Packages' 2>/dev/null |
    awk -v codename="$codename" '
      $1 != "deb" { next }
      $2 == codename && !mine { mine = $3 }
      ($2 == "stable" || $2 == "oldstable") && !named { named = $3 }
      END { if (mine) print mine; else if (named) print named }'
}
mirror="${DEBIAN_MIRROR:-$(apt_debian_mirror)}"
if [ -z "$mirror" ]; then
  echo "no Debian mirror in apt's sources; set DEBIAN_MIRROR" >&2
  exit 1
fi

rm -rf "$root" "$work/debs" "$work/pkgconfig" "$work/apt"
mkdir -p "$root" "$work/debs" "$work/pkgconfig"
abs_work="$(cd "$work" && pwd)"

# apt, reading only a sources list of our own and keeping its lists and
# cache under build-hiredis1/apt (the system's configuration, proxies
# included, still applies).
apt_dir="$abs_work/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" \
  "$apt_dir/sources.list.d" "$apt_dir/preferences.d"
signed_by=""
if [ -f /usr/share/keyrings/debian-archive-keyring.gpg ]; then
  signed_by=" [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
fi
echo "deb$signed_by $mirror $suite main" >"$apt_dir/sources.list"
apt_opts=(
  -o "Dir::Etc::SourceList=$apt_dir/sources.list"
  -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
  -o "Dir::Etc::Preferences=$apt_dir/preferences"
  -o "Dir::Etc::PreferencesParts=$apt_dir/preferences.d"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir/cache"
  -o "APT::Sandbox::User=$(id -un)"
  -o "APT::Get::List-Cleanup=false"
)

echo "Fetching the $suite package index from $mirror" >&2
apt-get "${apt_opts[@]}" -qq update
# libhiredis-dev, then the runtime package it depends on (libhiredis1.1.0).
(cd "$work/debs" && apt-get "${apt_opts[@]}" -qq download libhiredis-dev)
dev_deb=$(ls "$work"/debs/libhiredis-dev_*.deb)
runtime=$(dpkg-deb -f "$dev_deb" Depends | tr ',' '\n' | sed -n 's/^ *\(libhiredis1\.[0-9.]*\).*/\1/p')
if [ -z "$runtime" ]; then
  echo "libhiredis-dev in $suite depends on no libhiredis1.x" >&2
  exit 1
fi
(cd "$work/debs" && apt-get "${apt_opts[@]}" -qq download "$runtime")
for deb in "$work"/debs/*.deb; do
  echo "Unpacking ${deb##*/}" >&2
  dpkg-deb -x "$deb" "$root"
done

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
