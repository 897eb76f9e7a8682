#!/usr/bin/env bash
# Reruns a paper reproduction: every scenario of scenarios/SET/ through
# `eppsim compare` with the strategies scenarios/SET/paper.json lists, then
# writes scenarios/SET/RESULTS.md (our numbers beside the paper's) and a bar chart
# per scenario (OUT_DIR/SCENARIO/compare.png). With an "ablation" in paper.json,
# it also reruns every scenario once per ablation step (the step's --set
# overrides, effects switched on in turn) into OUT_DIR/ablation/STEP/SCENARIO,
# and RESULTS.md shows how each speedup moves.
#   bash scripts/reproduce.sh flexsp [OUT_DIR]
# Needs a built tree (scripts/build.sh); OUT_DIR defaults to eppsim-out/reproduce-SET.
set -euo pipefail
cd "$(dirname "$0")/.."
set_name="${1:?usage: scripts/reproduce.sh SET [OUT_DIR] (SET: a folder of scenarios/ with a paper.json)}"
dir="scenarios/${set_name}"
[[ -f "${dir}/paper.json" ]] || { echo "reproduce: ${dir}/paper.json not found" >&2; exit 2; }
out="${2:-eppsim-out/reproduce-${set_name}}"
eppsim="${EPPSIM:-build/sim/eppsim}"
[[ -x "${eppsim}" ]] || { echo "reproduce: ${eppsim} not built; run scripts/build.sh" >&2; exit 2; }
strategies="$(python3 -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["strategies"]))' "${dir}/paper.json")"
for scenario in $(python3 -c 'import json,sys; print(" ".join(r["scenario"] for r in json.load(open(sys.argv[1]))["rows"]))' "${dir}/paper.json"); do
  echo "reproduce: ${scenario}" >&2
  # trace.pb only: the Chrome JSON and CSVs of 9 strategies x 6 settings take gigabytes.
  "${eppsim}" compare "${dir}/${scenario}.textproto" --strategies "${strategies}" --outputs trace -o "${out}/${scenario}" >&2
  /usr/bin/python3 plots/compare.py "${out}/${scenario}" >&2  # speedups against the first strategy
done
# One line per ablation step: its index, then its overrides as --set arguments.
ablation="$(python3 -c '
import json, sys
paper = json.load(open(sys.argv[1]))
for i, step in enumerate(paper.get("ablation", {}).get("steps", [])):
    print(i, " ".join("--set " + s for s in step["set"]))
' "${dir}/paper.json")"
if [[ -n "${ablation}" ]]; then
  ablation_strategies="$(python3 -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["ablation"]["strategies"]))' "${dir}/paper.json")"
  while read -r step sets; do
    for scenario in $(python3 -c 'import json,sys; print(" ".join(r["scenario"] for r in json.load(open(sys.argv[1]))["rows"]))' "${dir}/paper.json"); do
      echo "reproduce: ablation step ${step}, ${scenario}" >&2
      # shellcheck disable=SC2086  # the overrides are words by design
      "${eppsim}" compare "${dir}/${scenario}.textproto" --strategies "${ablation_strategies}" --outputs none ${sets} \
        -o "${out}/ablation/${step}/${scenario}" >&2
    done
  done <<< "${ablation}"
fi
python3 scripts/reproduction_table.py "${dir}/paper.json" "${out}" "${dir}/RESULTS.md"
echo "reproduce: wrote ${dir}/RESULTS.md" >&2
