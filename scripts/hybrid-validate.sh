#!/usr/bin/env bash
# Hybrid emulation checked against a run of every rank (issue 44; docs/guide/
# runtime.md, "Hybrid emulation"), on this machine's CPU cores:
#   1. eppsim testbed scenarios/validation/pp4.textproto: all four ranks real
#      (benchmarks, calibration, the calibrated simulation), OUT/all/
#   2. the same Schedule with two of its ranks real, the other two timed by
#      the calibrated simulation, for each pair (0-1, 1-2, 2-3), open and
#      closed loop (eppsim testbed --bench OUT/all --real-ranks R
#      [--closed-loop]), OUT/hybrid-R-LOOP/; each hybrid trace validated
#      against the all-real one (eppsim validate), OUT/hybrid-R-LOOP/vs-all-real/
#   3. a 16,384-GPU step with ranks 0-1 real (scenarios/bench/hybrid_16k),
#      closed loop, its wall time and peak memory (/usr/bin/time -v),
#      OUT/16k/ and OUT/16k-time.txt
#   4. the table of them all (scripts/hybrid_table.py), OUT/hybrid.md, printed
# usage: scripts/hybrid-validate.sh OUT
# Needs eppsim, eppsim-run and eppsim-bench on PATH (or EPPSIM_BIN=BUILD_DIR)
# and mpirun; four ranks run at once in step 1 (two compute at a time).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/hybrid-validate.sh OUT" >&2; exit 2; }
out=$1
source_dir=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${EPPSIM_BIN:-}" ]; then
  export PATH="$EPPSIM_BIN/sim:$EPPSIM_BIN/runtime:$PATH"
fi
mkdir -p "$out"
pp4=$source_dir/scenarios/validation/pp4.textproto
eppsim testbed "$pp4" -o "$out/all"
rows=("$out/all")
for ranks in 0-1 1-2 2-3; do
  for loop in open closed; do
    dir=$out/hybrid-$ranks-$loop
    flags=()
    [ "$loop" = closed ] && flags=(--closed-loop)
    eppsim testbed "$pp4" --bench "$out/all" --real-ranks "$ranks" "${flags[@]}" -o "$dir"
    eppsim validate --simulated "$dir/measured/trace.pb" --measured "$out/all/measured/trace.pb" -o "$dir/vs-all-real"
    rows+=("$dir")
  done
done
timed=()  # GNU time (scripts/install-deps.sh installs it; a machine without it, e.g. a lent GPU host, skips the figures)
if [ -x /usr/bin/time ]; then
  timed=(/usr/bin/time -v -o "$out/16k-time.txt")
else
  echo "no /usr/bin/time: wall time and peak memory not measured" > "$out/16k-time.txt"
fi
"${timed[@]}" eppsim testbed "$source_dir/scenarios/bench/hybrid_16k.textproto" \
  --bench "$out/all" --real-ranks 0-1 --closed-loop -o "$out/16k"
python3 "$source_dir/scripts/hybrid_table.py" "${rows[@]}" | tee "$out/hybrid.md"
