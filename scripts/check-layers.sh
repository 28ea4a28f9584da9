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

for file in src/*/*.[ch]; do
  folder=$(basename "$(dirname "$file")")
  [ -n "${rank[$folder]+set}" ] || continue
  while IFS=: read -r line text; do
    header=${text#\#include \"}
    header=${header%%\"*}
    to=${header%%/*}
    [ -n "${rank[$to]+set}" ] || continue
    if [ "${rank[$to]}" -gt "${rank[$folder]}" ]; then
      echo "check-layers: $file:$line includes $header: $folder/ is below $to/" >&2
      bad=1
    fi
  done < <(grep -n '^#include "[a-z_]*/[a-z_]*\.h"' "$file" || true)
done
exit $bad
