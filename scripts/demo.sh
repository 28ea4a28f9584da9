#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Set everything up and run the demo: install what building and running need
# (not the test tools: scripts/test.sh adds those), build, then run five
# local Redis masters with workers contending for one lock while masters
# are killed, stopped and brought back.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --run
scripts/build.sh
exec build/demo/redlock-demo
