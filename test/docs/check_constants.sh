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

# Each mention against the compiler's value, in one awk (a sed and an
# awk per mention took seconds of CPU).
result=$(printf '%s\n' "$mentions" | awk -v header="$header" '
    NR == FNR { value[$1] = $2; next }
    {
        mention = $0
        where = mention; sub(/:`.*/, "", where)
        name = mention; sub(/^[^`]*`/, "", name); sub(/`.*/, "", name)
        rest = mention; sub(/.*`/, "", rest)   # after the last backtick
        if (!match(rest, /-?[0-9]+/)) next
        said = substr(rest, RSTART, RLENGTH) + 0
        if (rest ~ /[0-9] KiB\)?$/) said *= 1024
        else if (rest ~ /[0-9] MiB\)?$/) said *= 1024 * 1024
        if (!(name in value)) next
        checked++
        if (said != value[name] + 0) {
            printf "%s: `%s` is %s in %s, the doc says%s\n", where, name, value[name], header, rest
            problems++
        }
    }
    END { printf "checked %d problems %d\n", checked, problems }' "$work/values.txt" -)
printf '%s\n' "$result" | sed '$d'
read -r _ checked _ problems <<<"$(printf '%s\n' "$result" | tail -n 1)"

if [ "$problems" -ne 0 ]; then
    echo "check_constants: $problems value(s) differ from the header"
    exit 1
fi
echo "check_constants: the $checked values of ${#names[@]} constants the docs give are the header's"
