#!/usr/bin/env bash
# Runs the libFuzzer targets (fuzz/) of an EPPSIM_FUZZ build: each first replays
# its regression inputs (tests/fuzz/regressions/TARGET/), then fuzzes for SECONDS
# from the seed corpus (written afresh by eppsim_fuzz_seeds) and its growing
# corpus. A crash, leak, sanitizer report, timeout (-timeout, seconds per input)
# or memory blow-up (-rss_limit_mb) fails the run and leaves the input in
# FINDINGS_DIR/TARGET/ (crash-*, leak-*, timeout-*, oom-*).
#
#   scripts/fuzz.sh [SECONDS [TARGET...]]     default: 20 seconds, every target
# Environment: BUILD_DIR (default build-fuzz), CORPUS_DIR (default BUILD_DIR/fuzz/corpus),
# FINDINGS_DIR (default BUILD_DIR/fuzz/findings), JOBS (targets at once, default nproc).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
seconds=${1:-20}
if [ $# -gt 0 ]; then shift; fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(scenario schedule trace chakra); fi
corpus=${CORPUS_DIR:-$build/fuzz/corpus}
findings=${FINDINGS_DIR:-$build/fuzz/findings}
logs=$build/fuzz/logs
jobs=${JOBS:-$(nproc)}
limits=(-rss_limit_mb=2048 -timeout=10)

seeds=$build/fuzz/seeds
rm -rf "$seeds"
"$build/fuzz/eppsim_fuzz_seeds" "$seeds" "$root"
mkdir -p "$logs"

fuzz_one() {
  local target=$1 binary="$build/fuzz/${1}_fuzz" log="$logs/$1.log"
  mkdir -p "$corpus/$target" "$findings/$target"
  : >"$log"
  local regressions=()
  if [ -d "$root/tests/fuzz/regressions/$target" ]; then
    mapfile -t regressions < <(find "$root/tests/fuzz/regressions/$target" -type f ! -name README.md | sort)
  fi
  if [ ${#regressions[@]} -gt 0 ]; then
    "$binary" "${limits[@]}" "${regressions[@]}" >>"$log" 2>&1 || return 1
  fi
  "$binary" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$findings/$target/" "$corpus/$target" "$seeds/$target" >>"$log" 2>&1
}

failed=()
running=0
for target in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/${target}_fuzz" ]; then echo "fuzz: no target $build/fuzz/${target}_fuzz" >&2; exit 2; fi
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  rm -f "$logs/$target.rc"
  { if fuzz_one "$target"; then echo 0; else echo 1; fi; } >"$logs/$target.rc" &
  running=$((running + 1))
done
wait
for target in "${targets[@]}"; do
  if [ "$(cat "$logs/$target.rc")" = 0 ]; then
    echo "fuzz: $target: $(grep -h -o 'stat::number_of_executed_units: *[0-9]*' "$logs/$target.log" | tail -n 1 | grep -o '[0-9]*$') inputs in ${seconds} s, no finding" >&2
  else
    failed+=("$target")
    echo "fuzz: $target FAILED (log $logs/$target.log, inputs in $findings/$target/):" >&2
    tail -n 60 "$logs/$target.log" >&2
  fi
done
[ ${#failed[@]} -eq 0 ]
