#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configure and build into build/ (extra arguments go to cmake's configure).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j "$(nproc)"
