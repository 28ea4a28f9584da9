#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Compile-check the C examples of the documentation.
#
#   scripts/check-doc-examples.sh [FILE.md...]
#
# Every ```c block of the given Markdown files (by default README.md,
# docs/api/*.md, docs/errors.md, docs/config.md and docs/quickstart.md) is
# compiled on its own with
#   $CC -fsyntax-only -std=c11 -Wall -Wextra -Werror -I include
# first as a whole translation unit; a block that does not compile that
# way (a fragment of statements) is compiled again as the body of a
# function returning int, after the library's header and the usual
# standard headers (stdint.h, stdio.h, stdlib.h, string.h). A block fails
# when neither compiles; the compiler's messages point at the Markdown
# file's own lines. The complete programs among them are also run against
# masters by test/docs/run_examples.sh (ctest docs.examples_run). Exits 1 when any block fails, 2 on a usage problem.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
cc=${CC:-cc}
if [ $# -eq 0 ]; then
    set -- "$root"/README.md "$root"/docs/api/*.md "$root"/docs/errors.md "$root"/docs/config.md \
        "$root"/docs/quickstart.md
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

flags=(-fsyntax-only -std=c11 -Wall -Wextra -Werror -I "$root/include")
blocks=0
failed=0

for md in "$@"; do
    if [ ! -f "$md" ]; then
        echo "check-doc-examples: no such file: $md" >&2
        exit 2
    fi
    "$root/scripts/md-c-blocks.sh" "$md" "$work"
    for block in "$work"/block_*.c; do
        [ -e "$block" ] || continue
        blocks=$((blocks + 1))
        if "$cc" "${flags[@]}" -x c "$block" >"$work/whole.log" 2>&1; then
            continue
        fi
        {
            printf '#include <redlock/redlock.h>\n'
            printf '#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n'
            printf 'int doc_example_fragment(void);\nint doc_example_fragment(void)\n{\n'
            cat "$block"
            printf '\nreturn 0;\n}\n'
        } >"$work/wrapped.c"
        if "$cc" "${flags[@]}" -x c "$work/wrapped.c" >"$work/wrapped.log" 2>&1; then
            continue
        fi
        failed=$((failed + 1))
        start=$(sed -n '1s/^#line \([0-9]*\).*/\1/p' "$block")
        echo "FAIL: $md: the C block at line $start compiles neither as a file nor as a fragment"
        echo "--- as a file:"
        cat "$work/whole.log"
        echo "--- as a fragment, inside a function:"
        cat "$work/wrapped.log"
    done
done

if [ "$blocks" -eq 0 ]; then
    echo "check-doc-examples: no \`\`\`c block found in: $*" >&2
    exit 1
fi
if [ "$failed" -gt 0 ]; then
    echo "check-doc-examples: $failed of $blocks C blocks failed"
    exit 1
fi
echo "check-doc-examples: all $blocks C blocks compile"
