#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What redlock --help and redlock(1) point a reader at is where the
# package puts it: installs the cli component (the redlock-tools package)
# with prefix /usr into a temporary DESTDIR, never into the system, then
#   - --help names `man redlock` and a documentation path under
#     /usr/share/doc/, which is installed;
#   - the man page's FILES section names the example configuration and every
#     path of it under /usr/ or ending in .example is installed.
#
#   test/docs/check_installed_paths.sh BUILD_DIR TOOL MAN_PAGE
# Exits 0 when all is there, 1 listing what is not, 2 on a usage problem.
set -u
[ $# -eq 3 ] || { sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$1 tool=$2 page=$3
export LC_ALL=C

problems=()
problem() { problems+=("$*"); }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! DESTDIR="$work/root" cmake --install "$build" --component cli --prefix /usr \
        >"$work/install.log" 2>&1; then
    cat "$work/install.log"
    echo "check_installed_paths: cmake --install failed"
    exit 1
fi

# An absolute path as the package installs it: /usr/... under DESTDIR;
# /etc/... there too, or under /usr/etc for a build configured with
# another prefix (its sysconfdir follows the prefix).
installed() {
    [ -e "$work/root$1" ] && return 0
    case $1 in /etc/*) [ -e "$work/root/usr$1" ] ;; *) return 1 ;; esac
}

help=$("$tool" --help)
grep -q '`\{0,1\}man redlock`\{0,1\}' <<<"$help" || problem "redlock --help does not say \`man redlock\`"
help_paths=$(grep -oE '/usr/share/doc/[^ ,;)`]*[^ ,;)`.]' <<<"$help" | sort -u)
[ -n "$help_paths" ] || problem "redlock --help names no documentation under /usr/share/doc/"
for p in $help_paths; do
    installed "$p" || problem "redlock --help names $p, which the package does not install"
done

# The FILES section's text (groff: plain ASCII, unhyphenated, one line per line).
files=$(groff -man -Tascii -rHY=0 -rLL=2000n -P-cbou "$page" 2>/dev/null |
    awk '/^[A-Z]/ { on = ($0 == "FILES") ; next } on')
[ -n "$files" ] || problem "$page: no FILES section"
grep -q '/etc/redlock/redlock.yaml.example' <<<"$files" ||
    problem "$page: FILES does not name /etc/redlock/redlock.yaml.example"
for p in $(grep -oE '/(usr|etc)/[^ ,;)]*[^ ,;).]' <<<"$files" | sort -u); do
    case $p in
        /usr/* | *.example) installed "$p" || problem "$page: FILES names $p, which the package does not install" ;;
    esac
done

if [ ${#problems[@]} -gt 0 ]; then
    printf 'check_installed_paths: %s\n' "${problems[@]}"
    exit 1
fi
echo "check_installed_paths: --help and FILES name what the package installs:" \
    $help_paths $(grep -oE '/(usr|etc)/[^ ,;)]*[^ ,;).]' <<<"$files" | sort -u)
