#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The version is bumped with the changes it ships, and said alike
# everywhere it is written down:
#   - the header's version is not one CHANGELOG.md already released while
#     its Unreleased section lists changes (0.x: a new minor, as the ABI
#     may have changed, and with it the SONAME libredlock.so.MAJOR.MINOR);
#   - docs/packaging.md, docs/api/, README.md and examples/ name that
#     version, its SONAME and its runtime package, never an older one;
#   - docs/upgrading.md has a section for this minor version, linked
#     from README.md.
#
#   test/docs/check_version.sh [SOURCE_DIR]
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2

problems=()
problem() { problems+=("$*"); }

header=include/redlock/redlock.h
part() { sed -n "s/^#define REDLOCK_VERSION_$1 \([0-9]*\)$/\1/p" "$header"; }
major=$(part MAJOR)
minor=$(part MINOR)
patch=$(part PATCH)
version="$major.$minor.$patch"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "check_version: no version in $header"; exit 1; }
grep -q "^#define REDLOCK_VERSION_STRING \"$version\"$" "$header" ||
    problem "$header: REDLOCK_VERSION_STRING is not \"$version\""
if [ "$major" = 0 ]; then soversion="$major.$minor"; else soversion="$major"; fi

# What the Unreleased section holds (up to the next release heading), and
# the versions released.
unreleased=$(awk '/^## \[Unreleased\]/ { on = 1; next } /^## \[/ { on = 0 } on' CHANGELOG.md |
    grep -c '^- ')
released=$(sed -n 's/^## \[\([0-9][0-9.]*\)\] - .*/\1/p' CHANGELOG.md)
[ -n "$released" ] || problem "CHANGELOG.md: no released version found (has its layout changed?)"
if [ "$unreleased" -gt 0 ] && grep -qxF "$version" <<<"$released"; then
    problem "the header says $version, already released in CHANGELOG.md, while [Unreleased] lists $unreleased changes: bump the version"
fi

# Older versions named where the current one belongs.
for f in docs/packaging.md docs/api/types.md docs/api/redlock_version.md README.md \
         examples/CMakeLists.txt "$header"; do
    while IFS= read -r old; do
        [ -n "$old" ] || continue
        [ "$old" = "$version" ] && continue
        grep -qxF "$old" <<<"$released" || continue
        problem "$f names the released version $old where $version is meant"
    done < <(grep -o '"[0-9]\+\.[0-9]\+\.[0-9]\+"\|libredlock\.so\.[0-9.]*[0-9]' "$f" |
             sed 's/"//g; s/^libredlock\.so\.//' | sort -u)
done
grep -qF "libredlock.so.$soversion" docs/packaging.md || problem "docs/packaging.md does not name libredlock.so.$soversion"
grep -qF "libredlock$soversion" docs/packaging.md || problem "docs/packaging.md does not name the package libredlock$soversion"
grep -qF "libredlock$soversion" README.md || problem "README.md does not name the package libredlock$soversion"
grep -q "find_package(redlock $major\.$minor " examples/CMakeLists.txt ||
    problem "examples/CMakeLists.txt does not ask find_package(redlock $major.$minor)"
grep -q "find_package(redlock $major\.$minor " docs/packaging.md ||
    problem "docs/packaging.md does not show find_package(redlock $major.$minor)"

# Upgrading notes for this minor version, linked from the README.
if [ ! -f docs/upgrading.md ]; then
    problem "no docs/upgrading.md"
else
    grep -q "^## Upgrading to $major\.$minor\$" docs/upgrading.md ||
        problem "docs/upgrading.md has no \"## Upgrading to $major.$minor\" section"
fi
grep -qF '(docs/upgrading.md' README.md || problem "README.md does not link docs/upgrading.md"

if [ ${#problems[@]} -gt 0 ]; then
    printf 'check_version: %s\n' "${problems[@]}"
    exit 1
fi
echo "check_version: $version (SONAME libredlock.so.$soversion) said alike; upgrading notes for $major.$minor"
