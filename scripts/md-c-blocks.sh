#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The C blocks (```c) of a Markdown file, one file each: DIR/block_NNN.c,
# in order, each starting with a #line naming where the block starts, so
# that a compiler's messages name the Markdown file's lines. Blocks left in
# DIR by an earlier file are removed first. Used by check-doc-examples.sh
# (compiled) and test/docs/run_examples.sh (run).
#
#   scripts/md-c-blocks.sh FILE.md DIR
set -euo pipefail
md=$1
dir=$2
rm -f "$dir"/block_*.c
awk -v dir="$dir" -v md="$md" '
    /^```c[ \t]*$/ { inside = 1; n++; out = sprintf("%s/block_%03d.c", dir, n);
                     printf "#line %d \"%s\"\n", NR + 1, md > out; next }
    /^```/ && inside { inside = 0; close(out); next }
    inside { print > out }
' "$md"
