#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The layers of src/ (docs/design.md, "Layers"): a file includes headers of
# its own folder and of the folders below it, never of one above. Fails,
# naming each include that goes up, and on a folder of src/ that has no
# place in the order below.
#
#   scripts/check-layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Bottom to top, as docs/design.md draws them.
layers=(util config wire context master round lock client)

declare -A rank
for i in "${!layers[@]}"; do
  rank[${layers[$i]}]=$i
done

bad=0
for dir in src/*/; do
  folder=$(basename "$dir")
  if [ -z "${rank[$folder]+set}" ]; then
    echo "check-layers: src/$folder/ has no place among the layers (${layers[*]})" >&2
    bad=1
  fi
done

# One awk over every file (a grep and a loop per file took 4 s of CPU).
awk -v order="${layers[*]}" '
  BEGIN { n = split(order, names, " "); for (i = 1; i <= n; i++) rank[names[i]] = i }
  /^#include "[a-z_]*\/[a-z_]*\.h"/ {
    split(FILENAME, path, "/"); from = path[2]
    header = $0; sub(/^#include "/, "", header); sub(/".*/, "", header)
    to = header; sub(/\/.*/, "", to)
    if ((from in rank) && (to in rank) && rank[to] > rank[from]) {
      printf "check-layers: %s:%d includes %s: %s/ is below %s/\n", FILENAME, FNR, header, from, to > "/dev/stderr"
      bad = 1
    }
  }
  END { exit bad }' src/*/*.[ch] || bad=1
exit $bad
