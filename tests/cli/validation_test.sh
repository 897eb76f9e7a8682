#!/usr/bin/env bash
# `eppsim validate` and `eppsim calibrate` end to end on small fixtures, and
# plots/validation.py drawing what validate wrote.
# usage: validation_test.sh EPPSIM_BINARY SOURCE_DIR
set -uo pipefail
eppsim=$(realpath "$1")
src=$(realpath "$2")
fixtures="$src/tests/cli/fixtures/validation"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0

source "$(dirname "${BASH_SOURCE[0]}")/check.sh"

# validate: the measured fixture is the simulated one 25% slower, shifted by 1 ms.
check "validate" 0 "" -- "$eppsim" validate --simulated "$fixtures/simulated.json" \
  --measured "$fixtures/measured.json" -o "$work/val"
/usr/bin/python3 - "$work/val" <<'PY' || { echo "FAIL validation.json / timeline.csv"; failures=$((failures + 1)); }
import csv, json, os, sys
d = sys.argv[1]
v = json.load(open(os.path.join(d, "validation.json")))
assert abs(v["step_time_error"] + 0.2) < 1e-12, v["step_time_error"]
assert [k["kind"] for k in v["kinds"]] == ["compute/forward", "compute/backward", "send", "recv", "collective/all-reduce"], v["kinds"]
assert all(abs(k["error"] + 0.2) < 1e-12 for k in v["kinds"])
rows = list(csv.DictReader(open(os.path.join(d, "timeline.csv"))))
assert len(rows) == 9 and rows[0]["measured_start_s"] == "0.000000000", rows[0]
PY
# Traces of different schedules: exit 2 naming both files.
sed 's/"4194304"/"2097152"/' "$fixtures/measured.json" >"$work/other.json"
check "validate different schedules" 2 "traces of different schedules: rank 0 op 3: size_bytes 4194304 vs 2097152" -- \
  "$eppsim" validate --simulated "$fixtures/simulated.json" --measured "$work/other.json" -o "$work/bad"
grep -qF "other.json" "$work/err" || { echo "FAIL different schedules: message lacks the file"; failures=$((failures + 1)); }
check "validate needs --measured" 2 "measured" -- "$eppsim" validate --simulated "$fixtures/simulated.json"

if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  check "validation plot" 0 "wrote" -- /usr/bin/python3 "$src/plots/validation.py" "$work/val"
  for f in timeline.png kinds.png; do
    [ -s "$work/val/plots/$f" ] || { echo "FAIL validation plot: plots/$f missing"; failures=$((failures + 1)); }
  done
  # Titles name scenario, strategy, model and cluster when the simulated side is a run directory.
  check "run for validation" 0 "" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/sim" \
    --set workload.global_batch=16 --outputs trace
  check "validate a run against itself" 0 "" -- "$eppsim" validate --simulated "$work/sim/trace.pb" \
    --measured "$work/sim" -o "$work/self"
  /usr/bin/python3 - "$src/plots" "$work/self" <<'PY' || { echo "FAIL validation plot titles"; failures=$((failures + 1)); }
import json, os, sys
sys.path.insert(0, sys.argv[1])
import validation
d = sys.argv[2]
v = json.load(open(os.path.join(d, "validation.json")))
what = validation.describe_validation(d, v)
title = validation.titled(what, v, "subject")
assert title.startswith("quickstart, packed-1f1b (Megatron-LM), llama2-7b on 16 x A100-80GB"), title
assert validation.describe_validation("/nonexistent", {"simulated_file": "/nonexistent/t.pb"}) is None
PY
else
  echo "FAIL python3-matplotlib is not installed (scripts/install-deps.sh installs it)"; failures=$((failures + 1))
fi

# calibrate: a comm bench with exact times gives back its latency and bandwidth.
/usr/bin/python3 - "$work/comm.json" <<'PY'
import json, sys
rows = [{"op": "all-reduce", "bytes": b, "group_size": 2, "crosses_nodes": False, "time_s": 1e-5 + b / 4e9,
         "iterations": 10, "algbw_Bps": 1.0, "busbw_Bps": 1.0, "correct": True} for b in (1024, 65536, 1048576, 16777216)]
json.dump({"eppsim_bench": 1, "kind": "comm", "backend": "cpu", "device": "test", "ranks": 2, "results": rows},
          open(sys.argv[1], "w"))
PY
check "calibrate" 0 "" -- "$eppsim" calibrate "$work/comm.json" -o "$work/calibration.json"
/usr/bin/python3 - "$work/calibration.json" <<'PY' || { echo "FAIL calibration.json"; failures=$((failures + 1)); }
import json, sys
c = json.load(open(sys.argv[1]))["collectives"][0]
assert c["kind"] == "all-reduce" and c["group_size"] == 2, c
assert abs(c["latency_s"] - 1e-5) < 1e-12 and abs(c["bandwidth_Bps"] / 4e9 - 1) < 1e-9, c
assert c["quality"]["points"] == 4 and c["quality"]["r_squared"] > 0.999999, c
PY
sed 's/"all-reduce"/"all-reduse"/' "$work/comm.json" >"$work/bad.json"
check "calibrate unknown op" 2 "bad.json: results[0].op: unknown op \"all-reduse\"" -- \
  "$eppsim" calibrate "$work/bad.json" -o "$work/c.json"
check "calibrate bad output" 2 "" -- "$eppsim" calibrate "$work/comm.json" -o "$work/c.yaml"

if [ $failures -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "validation_test: all passed"
