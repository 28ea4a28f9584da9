#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every source, build and script file names its licence in an SPDX line
# within its first three lines. Prints the files that do not; exit 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."

# One awk over every file (a head and a grep per file took 9 s of CPU);
# it checks its list of files at the end, so that an empty one counts.
find . \( -name '.git' -o -name 'build*' \) -prune -o -type f \
       \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.cmake' \
          -o -name '*.cmake.in' -o -name '*.pc.in' -o -name 'CMakeLists.txt' \
          -o -path './.ci/run' -o -path './Dockerfile' \
          -o -path './examples/Makefile' -o -path './man/*.1' \
          -o -path './completion/*' \) -print0 | sort -z |
  xargs -0 awk '
    FNR <= 3 && /SPDX-License-Identifier: BSD-3-Clause/ { named[FILENAME] = 1 }
    END {
      for (i = 1; i < ARGC; i++)
        if (!(ARGV[i] in named)) { print "no SPDX line: " ARGV[i]; missing = 1 }
      exit missing
    }' || exit 1
