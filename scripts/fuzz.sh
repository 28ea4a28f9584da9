#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fuzz every target for SECONDS each (default 30): build them with clang,
# libFuzzer, ASan and UBSan in build-fuzz/, run them two at a time on
# working copies of their corpora (test/fuzz/ is never written to), and fail
# when one finds a crash, a leak, undefined behaviour, a broken check or a
# hang, printing the path of the input that does it. See docs/fuzzing.md.
#
# Environment: FUZZ_JOBS (targets run at once, default 2), FUZZ_TARGETS
# (default: all), FUZZ_BUILD_DIR (default build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
case "$seconds" in
  '' | *[!0-9]* | 0) echo "usage: $0 [SECONDS]" >&2; exit 64 ;;
esac
jobs="${FUZZ_JOBS:-2}"
build="${FUZZ_BUILD_DIR:-build-fuzz}"
read -r -a targets <<< "${FUZZ_TARGETS:-config cli_parsers replies node_url}"

# The longest input worth trying, per target: configs and reply streams are
# small; a command-line argument or a URL is shorter still.
max_len() {
  case "$1" in
    cli_parsers | node_url) echo 512 ;;
    *) echo 4096 ;;
  esac
}

cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DREDLOCK_FUZZ=ON -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_DEMO=OFF -DREDLOCK_WERROR=ON \
  -DCMAKE_RULE_MESSAGES=OFF \
  >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
rm -rf "$artifacts"
mkdir -p "$artifacts"

# Findings are fatal: UBSan stops at the first (the code is built with
# -fno-sanitize-recover=all), LeakSanitizer runs after each input.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

run_target() {
  local t="$1"
  mkdir -p "$work/$t" "$artifacts/$t"
  # New inputs go to the first directory, a copy; the rest are read only.
  cp -R "test/fuzz/corpus/$t/." "$work/$t/"
  cp -R "test/fuzz/regressions/$t/." "$work/$t/" 2>/dev/null || true
  local dict=()
  [ -f "test/fuzz/$t.dict" ] && dict=("-dict=test/fuzz/$t.dict")
  local status=0
  "$build/test/fuzz/fuzz_$t" "$work/$t" "${dict[@]}" \
    -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t/" \
    > "$artifacts/$t.log" 2>&1 || status=$?
  echo "$status" > "$artifacts/$t.status"
}

# Run the targets, at most $jobs at a time.
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    sleep 1
  done
  echo "fuzzing $t for ${seconds}s"
  run_target "$t" &
done
wait

failed=0
for t in "${targets[@]}"; do
  if [ "$(cat "$artifacts/$t.status" 2>/dev/null)" = 0 ]; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$artifacts/$t.log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$artifacts/$t.log")
    echo "$t: ok, ${execs:-?} inputs (${rate:-?}/s)"
  else
    failed=1
    echo "$t: FAILED; the last lines of $artifacts/$t.log:"
    tail -n 40 "$artifacts/$t.log" | sed 's/^/    /'
    for f in "$artifacts/$t"/*; do
      [ -e "$f" ] || continue
      case "$(basename "$f")" in slow-unit-*) continue ;; esac
      echo "    reproducer: $f"
      echo "    (run: $build/test/fuzz/fuzz_$t $f)"
    done
  fi
done
exit "$failed"
