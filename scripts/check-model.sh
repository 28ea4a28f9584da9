#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Check the Promela models in model/ with spin: each must verify without
# error, and each known-wrong variant (a -D flag the model documents) must
# be caught, so that the check is known to be able to fail.
#
#   scripts/check-model.sh [WORKDIR]
#
# model/multi_acquire.pml: several resources all or nothing: no resource
# held twice, no deadlock between {a,b} and {b,a}.
# model/notify_wait.pml: never two holders; no waiter left waiting for a
# notification that cannot come. Exhaustive for 3 masters and 2 clients
# (about 50,000 states, well under a second); 3 clients exceed 4 GB of states.
# model/reentrant.pml: the reentrant lock's hash of holds: holds of one
# owner only, a release removes its own hold alone, the key goes with its
# last hold. Exhaustive for 3 masters, two holds of one owner and one other
# client (about 4 million states, 10 s, 380 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
src="$PWD"

command -v spin >/dev/null || { echo "check-model: spin is not installed (scripts/deps.sh)" >&2; exit 1; }
cc=${CC:-cc}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
trap '[ -n "${1:-}" ] || rm -rf "$work"' EXIT

# verify MODEL EXPECT [SPIN_FLAGS...]: EXPECT is "pass" or "caught".
verify() {
  local model=$1 expect=$2
  shift 2
  local dir
  dir="$work/$(basename "$model" .pml)${1:+-${1#-D}}"
  mkdir -p "$dir"
  cp "$src/$model" "$dir/"
  (
    cd "$dir"
    spin "$@" -a "$(basename "$model")" >spin.log
    "$cc" -O2 -w -DSAFETY -DMEMLIM=2048 -o pan pan.c
    ./pan -m100000 >pan.log 2>&1 || true
  )
  local log="$dir/pan.log"
  grep -q 'reached -DMEMLIM bound\|max search depth too small' "$log" &&
    { echo "check-model: $model $*: search incomplete" >&2; cat "$log" >&2; exit 1; }
  local errors
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$log")
  local states
  states=$(sed -n 's/^ *\([0-9e.+]*\) states, stored.*/\1/p' "$log")
  case "$expect" in
    pass)
      [ "$errors" = 0 ] || { echo "check-model: $model $*: $errors error(s)" >&2; cat "$log" >&2; exit 1; }
      echo "check-model: $model $*: verified ($states states, no error)" ;;
    caught)
      [ "${errors:-0}" -gt 0 ] ||
        { echo "check-model: $model $*: the wrong variant was not caught" >&2; cat "$log" >&2; exit 1; }
      echo "check-model: $model $*: wrong variant caught ($(grep -m1 '^pan:1:' "$log"))" ;;
  esac
}

verify model/notify_wait.pml pass
verify model/notify_wait.pml caught -DSUBSCRIBE_AFTER_ATTEMPT
verify model/notify_wait.pml caught -DCOVERAGE_CHECKED_ONCE
verify model/notify_wait.pml caught -DFORGET_AT_WAIT
verify model/notify_wait.pml caught -DQUORUM=1
verify model/multi_acquire.pml pass
verify model/multi_acquire.pml caught -DKEY_BY_KEY
verify model/multi_acquire.pml caught -DQUORUM=1
verify model/reentrant.pml pass
verify model/reentrant.pml caught -DCOUNTER
verify model/reentrant.pml caught -DOWNER_BLIND
verify model/reentrant.pml caught -DPLAIN_IGNORES_HASH
verify model/reentrant.pml caught -DDELETE_WHOLE_KEY
verify model/reentrant.pml caught -DLAST_HOLD_KEEPS_KEY
verify model/reentrant.pml caught -DEXTEND_KEEPS_DEADLINE
verify model/reentrant.pml caught -DQUORUM=1
