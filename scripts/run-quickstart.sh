#!/usr/bin/env bash
# The main job: installs what eppsim needs, builds it, runs the embedded
# quickstart scenario into ./eppsim-out/ (report.json, trace.pb, trace.json,
# CSV) and draws the timeline (eppsim-out/timeline.png).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
"$root/build/sim/eppsim" -o eppsim-out
/usr/bin/python3 "$root/plots/timeline.py" eppsim-out
