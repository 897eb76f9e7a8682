#!/usr/bin/env bash
# Reruns a paper reproduction: its study's sweep (scenarios/studies/SET/sweep.textproto:
# every scenario of scenarios/SET/ x the systems, with the modelling effects switched on
# in turn), then writes scenarios/studies/SET/results.csv and scenarios/SET/RESULTS.md
# (our numbers beside the paper's). The same as `/usr/bin/python3 scripts/study.py SET`.
#   bash scripts/reproduce.sh flexsp [OUT_DIR]
# Needs a built tree (scripts/build.sh; EPPSIM names another eppsim); OUT_DIR defaults to
# eppsim-out/studies/SET, the sweep's folder (its report.html is the sweep's page).
set -euo pipefail
cd "$(dirname "$0")/.."
set_name="${1:?usage: scripts/reproduce.sh SET [OUT_DIR] (SET: infinipipe or flexsp)}"
[[ -f "scenarios/${set_name}/paper.json" ]] || { echo "reproduce: scenarios/${set_name}/paper.json not found" >&2; exit 2; }
exec /usr/bin/python3 scripts/study.py "${set_name}" --out "${2:-eppsim-out/studies/${set_name}}"
