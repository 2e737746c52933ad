#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for SECONDS each, JOBS of them at a time (`make fuzz`).
#
#   tools/fuzz.sh BUILD_DIR SECONDS [JOBS]
#
# BUILD_DIR/fuzzers.txt lists one `binary=corpus` line per target (CMakeLists.txt writes it). A
# libFuzzer process uses one core, so running as many targets at once as there are cores gives each
# the same SECONDS of one core as running them one after another, in a fraction of the wall time.
# Each target reads its committed corpus (read-only) and writes new inputs to BUILD_DIR/corpus/NAME;
# its output goes to BUILD_DIR/NAME.log. A crash leaves BUILD_DIR/crashes/NAME-crash-*: the script
# prints the last 60 lines of that target's log, names every target that failed, and exits 1.
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [JOBS]" >&2
  exit 2
fi
build="$1"
seconds="$2"
jobs="${3:-$(nproc)}"
root="$(cd "$(dirname "$0")/.." && pwd)"
list="$build/fuzzers.txt"
[ -f "$list" ] || { echo "fuzz: no $list (build with -DOPENGLUE_FUZZ=ON first)" >&2; exit 2; }
mkdir -p "$build/crashes"

# One target: runs it, leaves `ok` or `failed` in BUILD_DIR/NAME.result.
run_one() {
  local name="$1" corpus="$2"
  mkdir -p "$build/corpus/$name"
  echo "== fuzzing $name for $seconds s (corpus ${corpus#"$root"/})"
  if "$build/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
       -print_final_stats=1 -artifact_prefix="$build/crashes/$name-" \
       "$build/corpus/$name" "$corpus" > "$build/$name.log" 2>&1; then
    echo ok > "$build/$name.result"
  else
    echo failed > "$build/$name.result"
  fi
}

names=()
running=0
while IFS== read -r name corpus || [ -n "$name" ]; do
  [ -n "$name" ] || continue
  names+=("$name")
  rm -f "$build/$name.result"
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  run_one "$name" "$corpus" &
  running=$((running + 1))
done < "$list"
wait

# Results in the list's order, whatever order the targets finished in.
failed=""
for name in "${names[@]}"; do
  if [ "$(cat "$build/$name.result" 2>/dev/null)" = ok ]; then
    printf '%s: ' "$name"
    grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$build/$name.log" | tr '\n' ' '
    echo
  else
    failed="$failed $name"
    echo "== $name failed; the end of $build/$name.log:"
    tail -60 "$build/$name.log"
  fi
done
if [ -n "$failed" ]; then
  echo "== fuzzers that found a crash:$failed (see $build/crashes/)"
  exit 1
fi
