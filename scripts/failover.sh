#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run the failover suite: five local masters, contending clients, seeded
# faults, then the checker's verdict (see docs/failover.md).
#
#   scripts/failover.sh                 # the short run CI does (45 s)
#   scripts/failover.sh --long          # 10 minutes
#   scripts/failover.sh --unsafe        # restarts without persistence: shows why the rule exists
#   scripts/failover.sh --empty-restarts          # restarted at once, no delay, the clients' rule on
#   scripts/failover.sh --empty-restarts --unsafe # the same, masters declared durable: the rule off
#   scripts/failover.sh --seed 1234     # replay a fault schedule
#   scripts/failover.sh --slots 2       # a counting semaphore: at most 2 holders
#
# Other arguments go to redlock-failover (--seconds N, --json, --log FILE).
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
seconds=45
for a in "$@"; do
  case "$a" in
    --long) seconds=600 ;;
    *) args+=("$a") ;;
  esac
done
scripts/deps.sh
scripts/build.sh >/dev/null
exec build/test/failover/redlock-failover --seconds "$seconds" "${args[@]}"
