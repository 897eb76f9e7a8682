#!/usr/bin/env bash
# `eppsim testbed SCENARIO` end to end on this machine's CPU ranks: benchmark,
# calibrate, plan, simulate, mpirun eppsim-run, validate; then the plot of
# simulated against measured. Checks the files and that the simulated step is
# within a loose bound of the measured one (the README reports the errors; CI
# machines are noisy, so the bound here catches a broken loop, not 5%).
# usage: testbed_test.sh EPPSIM SOURCE_DIR SCENARIO
set -euo pipefail
eppsim=$1 source_dir=$2 scenario=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$eppsim" testbed "$source_dir/$scenario" -o "$out/tb"
for f in bench/compute.json bench/comm.json calibration.textproto simulated/report.json simulated/schedule.pb \
         simulated/trace.pb measured/trace.pb validation.json timeline.csv; do
  [ -s "$out/tb/$f" ] || { echo "FAIL missing $f"; exit 1; }
done
/usr/bin/python3 "$source_dir/plots/validation.py" "$out/tb" >/dev/null 2>&1
[ -s "$out/tb/plots/timeline.png" ] || { echo "FAIL no plots/timeline.png"; exit 1; }
/usr/bin/python3 - "$out/tb/validation.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
error = v["step_time_error"]
print(f"simulated {v['simulated_step_time_s']:.4f} s, measured {v['measured_step_time_s']:.4f} s, error {100 * error:+.1f}%")
assert v["ranks"] == 2, v["ranks"]
assert v["measured_engine"] == "cpu", v["measured_engine"]
assert abs(error) < 0.5, f"step-time error {error:+.3f} beyond the loose bound of 50%"
PY
# The README's row for this scenario (scripts/validation_table.py): step and compute errors.
row=$(/usr/bin/python3 "$source_dir/scripts/validation_table.py" "$out/tb" | tail -n 1)
echo "$row"
[[ "$row" == "| tb | "*" s | "*"% | "*"% | "*"% |" ]] || { echo "FAIL validation_table row: $row"; exit 1; }
echo "PASS testbed $scenario"
