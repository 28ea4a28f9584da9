# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by the scripts that take packages from a newer Debian suite than
# this machine's (scripts/hiredis1-fetch.sh, scripts/servers-fetch.sh) and
# unpack them without installing anything. apt reads only a sources list of
# our own and keeps its lists and cache in a folder of our own, so the
# system's package lists and sources are left alone; it still checks the
# suite's signature with the system's Debian keys, and the system's other
# configuration (proxies included) still applies.
#
#   apt_debian_mirror                 prints the mirror this system's apt uses
#   debian_suite_mirror               DEBIAN_MIRROR, else apt_debian_mirror
#   debian_suite_apt APTDIR SUITE     a private apt for SUITE in APTDIR, with
#                                     its index fetched; sets debian_apt_opts
#   debian_suite_opts APTDIR          sets debian_apt_opts again for APTDIR
#   debian_suite_unpack DEBS ROOT PKG...
#                                     downloads PKGs into DEBS (with the apt
#                                     of debian_suite_apt), unpacks each into
#                                     ROOT
#
#   DEBIAN_MIRROR=URI   the Debian mirror to use instead of apt's

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

# The mirror to take packages from; fails (with a message) when there is
# none, so that nothing is removed or fetched before that is known.
debian_suite_mirror() {
  local mirror="${DEBIAN_MIRROR:-$(apt_debian_mirror)}"
  if [ -z "$mirror" ]; then
    echo "no Debian mirror in apt's sources; set DEBIAN_MIRROR" >&2
    return 1
  fi
  echo "$mirror"
}

# debian_suite_apt APTDIR SUITE: writes a sources list for SUITE (main) on
# the mirror into APTDIR, with lists and cache there too, fetches the
# suite's index, and leaves the apt-get options that use it in the array
# debian_apt_opts (for apt-get and apt-cache alike).
debian_apt_opts=()
debian_suite_apt() {
  local apt_dir="$1" suite="$2" mirror signed_by=""
  mirror=$(debian_suite_mirror) || return 1
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" \
    "$apt_dir/sources.list.d" "$apt_dir/preferences.d" || return 1
  if [ -f /usr/share/keyrings/debian-archive-keyring.gpg ]; then
    signed_by=" [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
  fi
  echo "deb$signed_by $mirror $suite main" >"$apt_dir/sources.list"
  : >"$apt_dir/status"
  debian_suite_opts "$apt_dir" || return 1
  echo "Fetching the $suite package index from $mirror" >&2
  # --error-on=any: an index that could not be fetched is an error (apt
  # only warns by default, and would go on with no list or an old one).
  if ! apt-get "${debian_apt_opts[@]}" -qq --error-on=any update; then
    echo "apt-get update of $suite from $mirror failed" >&2
    return 1
  fi
}

# debian_suite_opts APTDIR: sets debian_apt_opts to use the apt of an
# APTDIR that debian_suite_apt prepared before (to go back to it without
# fetching its index again).
debian_suite_opts() {
  local apt_dir
  apt_dir="$(cd "$1" && pwd)" || return 1
  # Dir::State::status: an empty list of installed packages, so that only
  # the suite's packages are seen (apt would otherwise offer this system's
  # installed versions for what the suite lacks, or could not fetch).
  # APT::Sandbox::User: apt downloads as whoever runs this (root in CI
  # too) into folders that user owns, not as _apt, which may not write
  # there.
  debian_apt_opts=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
    -o "Dir::Etc::Preferences=$apt_dir/preferences"
    -o "Dir::Etc::PreferencesParts=$apt_dir/preferences.d"
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir/cache"
    -o "Dir::State::status=$apt_dir/status"
    -o "APT::Sandbox::User=$(id -un)"
    -o "APT::Get::List-Cleanup=false"
  )
}

# debian_suite_unpack DEBS ROOT PKG...: downloads the named packages (no
# dependencies: the caller names what it needs) into DEBS and unpacks each
# into ROOT with dpkg-deb -x. They are downloaded into a folder of their own
# first so that only these are unpacked, whatever DEBS already holds.
debian_suite_unpack() {
  local debs="$1" root="$2" new deb
  shift 2
  mkdir -p "$debs" "$root"
  new=$(mktemp -d "$debs/.download.XXXXXX")
  if ! (cd "$new" && apt-get "${debian_apt_opts[@]}" -qq download "$@"); then
    echo "apt-get download $* failed" >&2
    rm -rf "$new"
    return 1
  fi
  for deb in "$new"/*.deb; do
    echo "Unpacking ${deb##*/}" >&2
    dpkg-deb -x "$deb" "$root" || { rm -rf "$new"; return 1; }
    mv -f "$deb" "$debs/"
  done
  rmdir "$new"
}
