#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A constant of the public header that the docs give with its value, as
# `REDLOCK_NAME` (N) (or (N KiB), (N MiB)), `REDLOCK_NAME` is N, or a table
# row | `REDLOCK_NAME` | N |, has that value in the header:
# the value is the compiler's, from a program that includes
# include/redlock/redlock.h and prints each constant named so, whether a
# #define (of an expression: 1U << 20) or a member of an enum. Reads
# README.md and docs/ (docs/cli.md is generated from tool/, but says
# constants too).
#
#   test/docs/check_constants.sh [SOURCE_DIR]      (CC: the compiler, else cc)
# Exits 0 when every such value is the header's, 1 listing those that are
# not, 2 when the check itself cannot run.
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
header=include/redlock/redlock.h
cc=${CC:-cc}

# FILE:LINE:`NAME` (VALUE) (or is VALUE, or | VALUE), one a line.
mentions=$(grep -rnoE '`REDLOCK_[A-Z0-9_]+`( \(| is |[[:space:]]*\|[[:space:]]*)-?[0-9]+( [KM]iB)?\)?' \
    README.md docs | grep -vE '\([0-9]+$' | sort -u)
[ -n "$mentions" ] || { echo "check_constants: no \`REDLOCK_NAME\` (N) in the docs (have they changed shape?)"; exit 2; }

# The names the header defines (a #define or an enum member); others (a
# word that merely looks like one) are not checked.
names=()
while IFS= read -r name; do
    grep -qE "^[[:space:]]*(#define[[:space:]]+)?$name\b" "$header" && names+=("$name")
done < <(sed -E 's/.*`(REDLOCK_[A-Z0-9_]+)`.*/\1/' <<<"$mentions" | sort -u)
[ "${#names[@]}" -ge 5 ] || { echo "check_constants: only ${#names[@]} constants found (have the docs changed shape?)"; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
    echo '#include <stdio.h>'
    echo '#include "redlock/redlock.h"'
    echo 'int main(void)'
    echo '{'
    for name in "${names[@]}"; do
        echo "    printf(\"%s %lld\\n\", \"$name\", (long long)($name));"
    done
    echo '    return 0;'
    echo '}'
} >"$work/values.c"
if ! "$cc" -std=c11 -I include -o "$work/values" "$work/values.c" 2>"$work/cc.err"; then
    cat "$work/cc.err"
    echo "check_constants: the program printing the header's values does not compile"
    exit 2
fi
"$work/values" >"$work/values.txt" || { echo "check_constants: the program failed"; exit 2; }

problems=0
checked=0
while IFS= read -r mention; do
    where=${mention%%:\`*}
    name=$(sed -E 's/.*`(REDLOCK_[A-Z0-9_]+)`.*/\1/' <<<"$mention")
    said=$(sed -E 's/.*`[^0-9-]*(-?[0-9]+).*/\1/' <<<"$mention")
    unit=$(sed -nE 's/.*[0-9] ([KM]iB)\)?$/\1/p' <<<"$mention")
    case $unit in
        KiB) said=$((said * 1024)) ;;
        MiB) said=$((said * 1024 * 1024)) ;;
    esac
    value=$(awk -v n="$name" '$1 == n { print $2 }' "$work/values.txt")
    [ -n "$value" ] || continue
    checked=$((checked + 1))
    if [ "$said" != "$value" ]; then
        echo "$where: \`$name\` is $value in $header, the doc says ${mention##*\`}"
        problems=$((problems + 1))
    fi
done <<<"$mentions"

if [ "$problems" -ne 0 ]; then
    echo "check_constants: $problems value(s) differ from the header"
    exit 1
fi
echo "check_constants: the $checked values of ${#names[@]} constants the docs give are the header's"
