#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The first ```cpp block of docs/cpp.md is examples/cpp/lock.cpp as it is,
# so that the example the page shows is the one CI builds and runs.
#
#   test/cpp/check_doc_example.sh [SOURCE_DIR]
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
block=$(awk '/^```cpp$/ { n++; next } /^```$/ { if (n == 1) exit } n == 1' "$root/docs/cpp.md")
if [ -z "$block" ]; then
    echo "docs/cpp.md has no cpp block" >&2
    exit 1
fi
printf '%s\n' "$block" | diff -u "$root/examples/cpp/lock.cpp" - >&2 || {
    echo "docs/cpp.md's example is not examples/cpp/lock.cpp" >&2
    exit 1
}
