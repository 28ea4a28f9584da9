#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Usage: scripts/ctest-digest.sh LOG...
# Prints, for each test that ctest reported failed in LOG (output of
# `ctest --output-on-failure`), its name and what its output says went
# wrong: Criterion's failed assertions with their messages, sanitizer and
# timeout lines, at most 30 lines a test. CI prints it last, so that a
# failure's cause is in the last screen of a long log.
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: $0 LOG..." >&2; exit 64; }
awk '
  function flush() {
    if (name != "") {
      print "--- " name
      if (n == 0) print "    (no assertion in its output; the full log has it)"
      for (i = 1; i <= n; i++) print "    " kept[i]
    }
    name = ""
    n = 0
    after = 0
  }
  function keep(line) { if (n < 30) kept[++n] = line }
  # A test ends: its verdict line, then its output if it failed.
  /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
    flush()
    if ($0 ~ /\*\*\*|Failed|Timeout|Exception|Not Run/ && $0 !~ / Passed /) {
      name = $0
      sub(/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: /, "", name)
      gsub(/ \.\.\.+/, "", name)
    }
    next
  }
  /^ *Start +[0-9]+: / || /^[0-9]+% tests passed/ { flush(); next }
  name == "" { next }
  {
    line = $0
    sub(/^  /, "", line) # CI indents the logs it prints
    if (line ~ /^\[----\] *$/ || line ~ /^\[(RUN |PASS|SKIP)\]/) next
    if (line ~ /Assertion Failed|\[FAIL\]|CRASH|Timed out|Timeout|Sanitizer|runtime error|Segmentation|Aborted|Synthesis|error:|FAILED/ || after > 0) {
      keep(line)
      after = (line ~ /Assertion Failed/) ? 3 : after - 1
    }
  }
  END { flush() }
' "$@"
