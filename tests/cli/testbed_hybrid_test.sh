#!/usr/bin/env bash
# `eppsim testbed --real-ranks` end to end (hybrid emulation, issue 44): the
# 4-rank pipeline of scenarios/validation/pp4.textproto with ranks 1 and 2 run
# for real on this machine's CPU cores and ranks 0 and 3 re-timed from their
# progress by the calibrated simulation (closed loop), reusing the benchmarks
# of testbed_pp2 (same model).
# Checks the files, that the measured trace is a hybrid one holding every
# rank's events, that validation.json marks the virtual ranks, and that the
# step is within a loose bound of the simulated one (a broken loop, not 5%:
# docs/guide/runtime.md reports the figures).
# usage: testbed_hybrid_test.sh EPPSIM SOURCE_DIR BENCH_DIR
set -euo pipefail
eppsim=$1 source_dir=$2 bench_dir=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
loop_dir=$out/tb
"$eppsim" testbed "$source_dir/scenarios/validation/pp4.textproto" --real-ranks 1-2 --closed-loop --bench "$bench_dir" \
  -o "$loop_dir" > "$out/stdout.txt"
grep -q "hybrid: ranks 1-2 real, the other 2 virtual (closed loop)" "$out/stdout.txt" ||
  { echo "FAIL the summary does not say the run was hybrid: $(cat "$out/stdout.txt")"; exit 1; }
grep -q "^  machine      compute .* after the run against its benchmark" "$out/stdout.txt" ||
  { echo "FAIL the summary does not say how far the machine moved: $(cat "$out/stdout.txt")"; exit 1; }
for f in calibration.textproto simulated/trace.pb simulated/schedule.pb measured/trace.pb validation.json timeline.csv \
         bench/compute-after.json bench/drift.json; do
  [ -s "$loop_dir/$f" ] || { echo "FAIL missing $f"; exit 1; }
done
[ ! -e "$loop_dir/uncalibrated" ] || { echo "FAIL a hybrid loop wrote uncalibrated/"; exit 1; }
/usr/bin/python3 - "$loop_dir/validation.json" "$loop_dir/timeline.csv" <<'PY'
import csv, json, sys
v = json.load(open(sys.argv[1]))
print(f"hybrid: simulated {v['simulated_step_time_s']:.4f} s, measured {v['measured_step_time_s']:.4f} s, "
      f"error {100 * v['step_time_error']:+.1f}%")
assert v["real_ranks"] == [1, 2], v.get("real_ranks")
assert [r.get("virtual_rank", False) for r in v["per_rank"]] == [True, False, False, True], v["per_rank"]
ranks = {int(row["rank"]) for row in csv.DictReader(open(sys.argv[2]))}
assert ranks == {0, 1, 2, 3}, ranks
assert abs(v["step_time_error"]) < 0.5, v["step_time_error"]
PY
