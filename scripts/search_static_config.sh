#!/usr/bin/env bash
# The fastest static Megatron-LM layout (pipeline stages x tensor x context
# parallel, full recomputation) of a scenario's packed-1f1b that fits its memory
# limit on the scenario's batch: how the settings in scenarios/flexsp/ were chosen.
#   bash scripts/search_static_config.sh scenarios/flexsp/gpt67b_192k.textproto
# Prints one line per layout that fits (step time in seconds), then the best.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario="${1:?usage: scripts/search_static_config.sh SCENARIO}"
eppsim="${EPPSIM:-build/sim/eppsim}"
out="$(mktemp -d)"
trap 'rm -rf "${out}"' EXIT
best="" best_s=""
for pp in 1 2 4; do
  for tp in 2 4 8; do
    for cp in 1 2 4 8 16; do
      (( tp * cp <= 16 )) || continue
      step=$("${eppsim}" run "${scenario}" --set plan.strategy=packed-1f1b --set plan.packed_1f1b.pipeline_stages=${pp} \
               --set plan.packed_1f1b.tensor_parallel=${tp} --set plan.packed_1f1b.context_parallel=${cp} \
               --set plan.packed_1f1b.full_recompute=true -o "${out}" 2>/dev/null | awk '/step time/ {print $3}') || continue
      [[ -n "${step}" ]] || continue
      echo "pipeline_stages ${pp} tensor_parallel ${tp} context_parallel ${cp}: ${step} s"
      if [[ -z "${best_s}" ]] || python3 -c "import sys; sys.exit(0 if ${step} < ${best_s} else 1)"; then
        best="pipeline_stages ${pp} tensor_parallel ${tp} context_parallel ${cp}" best_s="${step}"
      fi
    done
  done
done
[[ -n "${best}" ]] || { echo "search_static_config: no layout fits" >&2; exit 1; }
echo "best: ${best} (${best_s} s)"
