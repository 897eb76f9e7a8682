#!/usr/bin/env bash
# The main job: installs what eppsim needs, builds it, runs the bare `eppsim`
# (epp against its baselines on the embedded long-context showcase) into
# ./eppsim-out/ (compare.json, compare.csv, and a run directory per strategy:
# report.json, trace.pb, trace.json, CSV) and draws the comparison
# (eppsim-out/compare.png) and epp's pipeline timeline (eppsim-out/epp/timeline.png).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
"$root/build/sim/eppsim" -o eppsim-out
/usr/bin/python3 "$root/plots/compare.py" eppsim-out
/usr/bin/python3 "$root/plots/timeline.py" eppsim-out/epp
