#!/usr/bin/env bash
# `eppsim sweep` end to end: the same results.csv with one worker, two, and
# two processes under mpirun; resuming; a point's own error recorded; per-point
# run directories; bad sweeps refused before any point runs.
# usage: sweep_test.sh EPPSIM_BINARY SOURCE_DIR
set -uo pipefail
eppsim=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0
source "$(dirname "${BASH_SOURCE[0]}")/check.sh"
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

cp "$src/scenarios/quickstart.textproto" "$work/base.textproto"
# 2 strategies x 2 batch sizes x 2 SP degrees for ulysses (3 does not divide the heads: that point fails);
# epp ignores plan.ulysses, so its SP axis is filtered to one value.
cat >"$work/grid.textproto" <<'SWEEP'
name: "grid"
scenario: "base.textproto"
axes { fields { field: "plan.strategy" values: ["epp", "ulysses"] } }
axes { name: "batch" fields { field: "workload.global_batch" range { start: 8 stop: 16 factor: 2 } } }
axes { name: "sp" fields { field: "plan.ulysses.sp_degree" values: ["8", "3"] } }
skip { when { axis: "plan.strategy" values: "epp" } when { axis: "sp" values: "3" } }
SWEEP

check "sweep -j1" 0 "" -- "$eppsim" sweep "$work/grid.textproto" -o "$work/one" -j1
grep -q "sweep grid: 6 points (6 run now, 0 found done), 2 failed" "$work/out" || { cat "$work/out"; fail "sweep -j1 summary"; }
[ "$(wc -l <"$work/one/results.csv")" -eq 7 ] || fail "results.csv: a header and 6 rows"
head -1 "$work/one/results.csv" | grep -q "^index,plan.strategy,batch,sp,status,network,step_time_s,tokens_per_s,mfu" ||
  fail "results.csv header"
grep -q "^0,epp,8,8,ok,simple," "$work/one/results.csv" || fail "first row"
grep -q "^3,ulysses,8,3,failed,.*sp_degree" "$work/one/results.csv" || fail "the impossible point's error"
[ "$(ls "$work/one/points" | wc -l)" -eq 6 ] || fail "one file per point"

check "sweep -j2" 0 "" -- "$eppsim" sweep "$work/grid.textproto" -o "$work/two" -j2
cmp -s "$work/one/results.csv" "$work/two/results.csv" || fail "-j2 gives another results.csv"
cmp -s "$work/one/results.json" "$work/two/results.json" || fail "-j2 gives another results.json"
if command -v mpirun >/dev/null; then
  root=()
  [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
  check "mpirun -np 2 sweep" 0 "" -- mpirun "${root[@]}" --oversubscribe -x ASAN_OPTIONS=detect_leaks=0 -np 2 "$eppsim" sweep "$work/grid.textproto" \
    -o "$work/mpi" -j1
  grep -q "over 2 processes" "$work/out" || { cat "$work/out"; fail "mpirun summary"; }
  cmp -s "$work/one/results.csv" "$work/mpi/results.csv" || fail "mpirun -np 2 gives another results.csv"
fi

# Resuming: nothing to run; a lost point runs again, alone.
check "rerun" 0 "" -- "$eppsim" sweep "$work/grid.textproto" -o "$work/one"
grep -q "(0 run now, 6 found done)" "$work/out" || fail "a rerun runs nothing"
rm "$(ls -d "$work/one/points/"* | head -1)"
check "rerun after a lost point" 0 "" -- "$eppsim" sweep "$work/grid.textproto" -o "$work/one"
grep -q "(1 run now, 5 found done)" "$work/out" || fail "a rerun runs the lost point only"
cmp -s "$work/one/results.csv" "$work/two/results.csv" || fail "the resumed results differ"

# A point whose process died is recorded so, and the next run runs it again.
python3 - "$(ls -d "$work/one/points/"* | tail -1)" <<'PY'
import json, sys
point = json.load(open(sys.argv[1]))
point.pop("report", None)
point.update(error="its process ended without a result: killed by signal 9 (Killed)", rerun=True)
json.dump(point, open(sys.argv[1], "w"))
PY
check "rerun after a killed point" 0 "" -- "$eppsim" sweep "$work/grid.textproto" -o "$work/one"
grep -q "(1 run now, 5 found done), 2 failed" "$work/out" || { cat "$work/out"; fail "a killed point runs again"; }
cmp -s "$work/one/results.csv" "$work/two/results.csv" || fail "the rerun point's results differ"

# A subset of the points: the same rows as the whole sweep's (cost_rank apart: it ranks the points reported).
check "sweep --points" 0 "" -- "$eppsim" sweep "$work/grid.textproto" -o "$work/some" --points 1,4-5
grep -q "sweep grid: 3 points (3 run now" "$work/out" || { cat "$work/out"; fail "--points summary"; }
[ "$(cut -d, -f1 "$work/some/results.csv" | tr '\n' ' ')" = "index 1 4 5 " ] || fail "--points: rows 1, 4 and 5"
for i in 1 4 5; do
  [ "$(grep "^$i," "$work/some/results.csv" | cut -d, -f1-16)" = "$(grep "^$i," "$work/one/results.csv" | cut -d, -f1-16)" ] ||
    fail "--points: row $i differs from the whole sweep's"
done
check "bad --points" 2 "--points 2-9: there are points 0 to 5" -- \
  "$eppsim" sweep "$work/grid.textproto" -o "$work/bad" --points 2-9

# A base scenario per point: the scenario axis.
cp "$src/scenarios/quickstart.textproto" "$work/other.textproto"
sed -i 's/^seed: .*/seed: 7/' "$work/other.textproto"
cat >"$work/bases.textproto" <<'SWEEP'
name: "bases"
axes { name: "base" fields { field: "scenario" values: ["base.textproto", "other.textproto"] } }
axes { fields { field: "workload.global_batch" values: ["8"] } }
SWEEP
check "scenario axis" 0 "" -- "$eppsim" sweep "$work/bases.textproto" -o "$work/bases"
grep -q "^0,base,8,ok," "$work/bases/results.csv" || fail "scenario axis: row 0"
grep -q "^1,other,8,ok," "$work/bases/results.csv" || fail "scenario axis: row 1"
[ "$(ls "$work/bases/points" | wc -l)" -eq 2 ] || fail "scenario axis: two points (two keys)"

# A topo sweep: each point measures its networks, a row per point and network.
cp "$src/scenarios/topology_small.textproto" "$work/topo.textproto"
printf 'name: "nets"\ncommand: "topo"\nscenario: "topo.textproto"\n' >"$work/nets.textproto"
check "topo sweep" 0 "" -- "$eppsim" sweep "$work/nets.textproto" -o "$work/nets"
networks=$((1 + $(grep -c "compare_topologies" "$work/topo.textproto")))
[ "$(grep -c "^0,ok," "$work/nets/results.csv")" -eq "$networks" ] || fail "topo sweep: a row per network"
head -1 "$work/nets/results.csv" | grep -q "^index,status,network,kind,chips,diameter_hops," || fail "topo sweep header"
printf 'command: "simulate"\nscenario: "topo.textproto"\n' >"$work/badcommand.textproto"
check "bad command" 2 "badcommand.textproto:1: command: 'simulate' is neither \"run\" nor \"topo\"" -- \
  "$eppsim" sweep "$work/badcommand.textproto" -o "$work/bad"

# Run directories when asked.
check "sweep --outputs csv" 0 "" -- "$eppsim" sweep "$work/grid.textproto" -o "$work/runs" --outputs csv
[ "$(ls "$work/runs/runs" | wc -l)" -eq 4 ] || fail "a run directory per point that ran"
ls "$work/runs/runs/"*/ops.csv >/dev/null 2>&1 || fail "run directories hold ops.csv"

# The shipped study runs whole.
check "shipped study" 0 "" -- "$eppsim" sweep "$src/scenarios/studies/quickstart_strategies.textproto" -o "$work/study"
grep -q "15 points (15 run now, 0 found done), 0 failed" "$work/out" || { cat "$work/out"; fail "shipped study"; }

# Bad input: refused before any point runs, exit 2, the file, line and field named.
printf 'scenario: "base.textproto"\naxes { fields { field: "plan.bogus" values: "1" } }\n' >"$work/bad.textproto"
check "unknown field" 2 "bad.textproto:2: axes[0].fields[0].values: --set plan.bogus=1" -- \
  "$eppsim" sweep "$work/bad.textproto" -o "$work/bad"
[ ! -e "$work/bad" ] || fail "a refused sweep wrote its output directory"
printf 'scenario: "base.textproto"\naxes { name: "empty" }\n' >"$work/empty.textproto"
check "empty axis" 2 "empty.textproto:2: axes[0].fields: an axis needs at least one field" -- \
  "$eppsim" sweep "$work/empty.textproto" -o "$work/bad"
printf 'scenario: "base.textproto"\naxes { fields { field: "workload.global_batch" values: "lots" } }\n' >"$work/type.textproto"
check "wrong type" 2 "type.textproto:2: axes[0].fields[0].values: --set workload.global_batch=lots" -- \
  "$eppsim" sweep "$work/type.textproto" -o "$work/bad"
check "bad --outputs" 2 "--outputs" -- "$eppsim" sweep "$work/grid.textproto" -o "$work/bad" --outputs pictures
check "point past the end" 2 "--point 99: the sweep has 6 points" -- \
  "$eppsim" sweep "$work/grid.textproto" -o "$work/bad" --point 99
check "help lists sweep" 0 "" -- "$eppsim" --help
grep -q "eppsim sweep SWEEP" "$work/out" || fail "--help lacks sweep"

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
