#!/usr/bin/env bash
# The eppsim-bench command: subcommands, exit codes and the BENCH.json it writes.
# usage: eppsim_bench_test.sh EPPSIM_BENCH_BINARY
set -uo pipefail
bench=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0

source "$(dirname "${BASH_SOURCE[0]}")/../cli/check.sh"

cat >"$work/tiny.textproto" <<'SCENARIO'
name: "bench-tiny"
model { layers: 2 hidden_size: 64 attention_heads: 4 kv_heads: 2 ffn_hidden_size: 128 vocab_size: 512 ffn_kind: SWIGLU }
cluster {
  nodes: 1
  gpus_per_node: 1
  gpu { preset: "A100-80GB" }
  intra_node { bandwidth: "300GB/s" latency: "2us" }
  inter_node { bandwidth: "200Gbps" latency: "5us" }
}
workload { lengths { distribution: "wikipedia" } global_batch: 4 max_length: 64 over_max_length: TRUNCATE }
plan { strategy: "packed-1f1b" packed_1f1b { pipeline_stages: 1 micro_batch_tokens: 64 } }
SCENARIO

check "no subcommand" 2 "a command is required" -- "$bench"
check "unknown subcommand" 2 "unknown command 'nope'" -- "$bench" nope
check "bad option" 2 "--repeats: expected a whole number" -- \
  "$bench" compute --scenario "$work/tiny.textproto" --backend cpu --out "$work/b.json" --repeats x
check "missing scenario" 2 "missing.textproto" -- \
  "$bench" compute --scenario "$work/missing.textproto" --backend cpu --out "$work/b.json"
check "compute" 0 "" -- "$bench" compute --scenario "$work/tiny.textproto" --backend cpu --out "$work/b.json" --repeats 1
grep -q '"kind": "compute"' "$work/b.json" || { echo "FAIL compute: BENCH.json lacks its kind"; failures=$((failures + 1)); }
# Default grid for max_length 64: s = 64, c in {0, 64, 128}, forward and backward.
layers=$(grep -c '"kernel": "layer"' "$work/b.json")
[ "$layers" -eq 6 ] || { echo "FAIL compute: $layers layer rows, expected 6"; failures=$((failures + 1)); }

if [ $failures -ne 0 ]; then echo "$failures failures"; exit 1; fi
echo "eppsim-bench: all checks passed"
