#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every source, build and script file names its licence in an SPDX line
# within its first three lines. Prints the files that do not; exit 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=0
while IFS= read -r f; do
  if ! head -n 3 "$f" | grep -q "SPDX-License-Identifier: BSD-3-Clause"; then
    echo "no SPDX line: $f"
    missing=1
  fi
done < <(find . \( -name '.git' -o -name 'build*' \) -prune -o -type f \
           \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.cmake' \
              -o -name '*.cmake.in' -o -name '*.pc.in' -o -name 'CMakeLists.txt' \
              -o -path './.ci/run' -o -path './Dockerfile' \
              -o -path './examples/Makefile' -o -path './man/*.1' \
              -o -path './completion/*' \) -print | sort)
exit "$missing"
