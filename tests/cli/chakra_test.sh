#!/usr/bin/env bash
# `eppsim export chakra`, `eppsim sim` of a Chakra prefix and `eppsim replay`, end to end.
# usage: chakra_test.sh EPPSIM_BINARY SOURCE_DIR SHARED_DATA_DIR
set -uo pipefail
eppsim=$(realpath "$1")
src=$(realpath "$2")
data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0

source "$(dirname "${BASH_SOURCE[0]}")/check.sh"
ring8="$src/scenarios/bench/ring8.textproto"
step() { grep -o '"step_time_s": [0-9.e+-]*' "$1"; }

check "run ring8" 0 "" -- "$eppsim" run "$ring8" -o "$work/run"
# Export the schedule as a Chakra trace; sim reads the prefix back: the same step.
check "export chakra" 0 "comm_groups.json" -- "$eppsim" export chakra "$work/run/schedule.pb" -o "$work/et/ring8"
for f in ring8.0.et ring8.7.et ring8.comm_groups.json; do
  [ -s "$work/et/$f" ] || { echo "FAIL export chakra: $f missing"; failures=$((failures + 1)); }
done
check "sim chakra prefix" 0 "" -- "$eppsim" sim "$work/et/ring8" --cluster "$ring8" -o "$work/sim-et"
[ "$(step "$work/run/report.json")" = "$(step "$work/sim-et/report.json")" ] || {
  echo "FAIL sim of the exported Chakra trace: step time differs from run"; failures=$((failures + 1)); }
# Replay on the recorded cluster: the same step (recorded compute, re-simulated network).
check "replay" 0 "" -- "$eppsim" replay "$work/run/trace.pb" --cluster "$ring8" -o "$work/replay"
for f in report.json trace.pb schedule.pb; do
  [ -s "$work/replay/$f" ] || { echo "FAIL replay: $f missing"; failures=$((failures + 1)); }
done
check "replay, faster network, flow" 0 "" -- "$eppsim" replay "$work/run/trace.pb" --cluster "$ring8" \
  --set cluster.topology.torus.link.bandwidth=100GB/s --engine flow -o "$work/replay-fast"
grep -q '"engine": "flow"' "$work/replay-fast/report.json" || { echo "FAIL replay --engine flow"; failures=$((failures + 1)); }
check "replay, bad compute" 2 "--compute: unknown value 'x'" -- "$eppsim" replay "$work/run/trace.pb" --cluster "$ring8" --compute x
check "sim, not a prefix" 2 "nope" -- "$eppsim" sim "$work/nope" --cluster "$ring8" -o "$work/z"
# A truncated rank file names the file and the byte.
head -c 100 "$work/et/ring8.3.et" >"$work/et/ring8.3.et.tmp" && mv "$work/et/ring8.3.et.tmp" "$work/et/ring8.3.et"
check "sim, truncated" 2 "ring8.3.et: byte" -- "$eppsim" sim "$work/et/ring8" --cluster "$ring8" -o "$work/z"

# ASTRA-sim's example traces, when ../shared/data is beside the checkout.
if [ -d "$data/chakra" ]; then
  check "sim all_reduce" 0 "" -- "$eppsim" sim "$data/chakra/all_reduce_8npus_1MB/all_reduce" --cluster "$ring8" -o "$work/ar"
  check "replay custom ring, flow" 0 "" -- "$eppsim" replay "$data/chakra/custom_ring_allreduce_8npus_1MB/custom_allreduce" \
    --cluster "$ring8" --engine flow -o "$work/cr"
else
  echo "skip: $data/chakra is absent (../shared/data beside the checkout)"
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
