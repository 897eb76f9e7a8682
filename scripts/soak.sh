#!/usr/bin/env bash
# A long soak of eppsim's invariants over random scenarios (scripts/soak.py says
# which): N cases (default 10000) on every core; a failing case is copied to
# tests/soak/regressions/soak-SEED-CASE.textproto, the summary written to soak.json.
#   scripts/soak.sh [N [soak.py options...]]      e.g. scripts/soak.sh 10000 --seed 3
# Needs a built tree (scripts/build.sh; EPPSIM names another eppsim).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cases=${1:-10000}
if [ $# -gt 0 ]; then shift; fi
exec /usr/bin/python3 "$root/scripts/soak.py" --eppsim "${EPPSIM:-$root/build/sim/eppsim}" --cases "$cases" \
  --jobs "$(nproc)" --regressions "$root/tests/soak/regressions" --out soak.json "$@"
