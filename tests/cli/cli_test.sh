#!/usr/bin/env bash
# End-to-end checks of the eppsim command: outputs, exit codes and messages.
# usage: cli_test.sh EPPSIM_BINARY SOURCE_DIR
set -uo pipefail
eppsim=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0

source "$(dirname "${BASH_SOURCE[0]}")/check.sh"

# The bare command compares epp with its baselines on the embedded showcase, into ./eppsim-out.
(cd "$work" && "$eppsim" >"$work/bare.out" 2>"$work/bare.err")
status=$?
if [ $status -ne 0 ]; then echo "FAIL bare eppsim: exit $status"; cat "$work/bare.err"; failures=$((failures + 1)); fi
for f in compare.json compare.csv; do
  [ -s "$work/eppsim-out/$f" ] || { echo "FAIL bare eppsim: eppsim-out/$f missing"; failures=$((failures + 1)); }
done
for s in packed-1f1b ulysses seq1f1b flexsp epp; do
  for f in report.json timings.json scenario.textproto trace.pb trace.json ops.csv memory.csv ranks.csv schedule.pb; do
    [ -s "$work/eppsim-out/$s/$f" ] || { echo "FAIL bare eppsim: eppsim-out/$s/$f missing"; failures=$((failures + 1)); }
  done
  grep -q "^  $s " "$work/bare.out" || { echo "FAIL bare eppsim: no $s row in the table"; failures=$((failures + 1)); }
done
for system in Megatron-LM DeepSpeed-Ulysses Seq1F1B FlexSP InfiniPipe; do
  grep -q " $system " "$work/bare.out" || { echo "FAIL bare eppsim: $system not named"; failures=$((failures + 1)); }
done
# The embedded copy is the shipped file: its epp run gives the same report.
check "run showcase" 0 "" -- "$eppsim" run "$src/scenarios/showcase.textproto" -o "$work/showcase"
if ! cmp -s "$work/eppsim-out/epp/report.json" "$work/showcase/report.json"; then
  echo "FAIL embedded and shipped showcase differ"; failures=$((failures + 1))
fi

check "run quickstart" 0 "" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/run"
# Same inputs and seed, same outputs byte for byte.
check "run again" 0 "" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/again"
for f in report.json scenario.textproto trace.pb trace.json ops.csv memory.csv ranks.csv schedule.pb; do
  cmp -s "$work/run/$f" "$work/again/$f" || { echo "FAIL $f differs between identical runs"; failures=$((failures + 1)); }
done
# timings.json: the wall-clock facts, beside the deterministic report.
/usr/bin/python3 - "$work/run/timings.json" "$work/run/report.json" <<'PY' || { echo "FAIL timings.json"; failures=$((failures + 1)); }
import json, sys
t = json.load(open(sys.argv[1]))
assert sorted(t) == ["estimated_peak_bytes", "peak_rss_bytes", "peak_rss_forked_bytes", "plan_time_s", "simulation_time_s",
                     "write_time_s"], t
assert all(isinstance(v, (int, float)) and v >= 0 for v in t.values()), t
assert t["peak_rss_bytes"] > 1e6 and t["estimated_peak_bytes"] > 1e6, t
r = json.load(open(sys.argv[2]))
assert not any(k in r for k in t), "report.json holds a timing"
assert r["plan"]["reproduces"] == "Megatron-LM" and r["plan"]["ranks"] == r["ranks"], r["plan"]
PY
grep -q "^  plan         4 stages x 1 SP x 4 DP = 16 ranks" "$work/out" || { echo "FAIL run: no plan line in the summary"; failures=$((failures + 1)); }

# A run replaces its directory as a whole, and only a directory eppsim wrote.
touch "$work/run/stale.csv"
check "run over a run" 0 "" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/run" --outputs none
for f in stale.csv trace.pb ops.csv; do
  [ ! -e "$work/run/$f" ] || { echo "FAIL run over a run left $f"; failures=$((failures + 1)); }
done
mkdir -p "$work/mine" && touch "$work/mine/notes.txt"
check "run into someone's folder" 2 "mine: holds files eppsim did not write (no .eppsim-output in it)" -- \
  "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/mine"
[ -e "$work/mine/notes.txt" ] || { echo "FAIL run into someone's folder removed it"; failures=$((failures + 1)); }
check "run into a file" 2 "notes.txt: exists and is not a directory" -- \
  "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/mine/notes.txt"
check "run into the current directory" 2 "is the current directory or one of its parents" -- \
  "$eppsim" run "$src/scenarios/quickstart.textproto" -o .
check "run again with every output" 0 "" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/run"

# Waits (up to 60 s) for a run in the background to log that it simulates.
wait_until_simulating() {
  for _ in $(seq 3000); do grep -q "\[info sim\] simulating" "$1" && return; sleep 0.02; done
}

# SIGTERM mid-run (its planner and engine check for it): exit 143, the
# directory keeps the previous complete run, no staging directory is left. The
# victim simulates for 1.8 s in a Release build on a 2-core machine (plan 1.6 s);
# the signal comes once it has started simulating, not after a fixed sleep, which
# a faster engine or machine would outrun.
md5_before=$(md5sum < "$work/run/report.json")
"$eppsim" run "$src/scenarios/showcase.textproto" -o "$work/run" --set workload.global_batch=8192 \
  --set cluster.nodes=64 --outputs none >"$work/killed.out" 2>"$work/killed.err" &
victim=$!
wait_until_simulating "$work/killed.err"
# While it runs, it holds the directory's lock.
check "second run into a locked directory" 2 "run: another eppsim run (pid $victim) is writing it" -- \
  "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/run"
kill -TERM $victim
wait $victim
status=$?
[ $status -eq 143 ] || { echo "FAIL SIGTERM: exit $status, expected 143"; cat "$work/killed.err"; failures=$((failures + 1)); }
grep -q "interrupted by SIGTERM: the output directory keeps what it held before" "$work/killed.err" ||
  { echo "FAIL SIGTERM: no message"; cat "$work/killed.err"; failures=$((failures + 1)); }
[ "$(md5sum < "$work/run/report.json")" = "$md5_before" ] || { echo "FAIL SIGTERM: the previous run changed"; failures=$((failures + 1)); }
[ -z "$(ls -A "$work" | grep eppsim-partial)" ] || { echo "FAIL SIGTERM: staging left"; ls -A "$work"; failures=$((failures + 1)); }

# SIGINT mid-simulation (a planned 2048-sequence batch, 3.7 M ops, 0.34 s of
# engine in a Release build: the signal comes once the engine logs that its
# event loop starts, and the loop, which checks for it, stops at once; a signal
# while the engine validates and prices ends the run with nothing to keep):
# exit 130, the directory keeps its previous run, and the trace of what
# finished so far lies beside it, readable by export and refused by diff.
check "plan a long step" 0 "" -- "$eppsim" plan "$src/scenarios/showcase.textproto" -o "$work/big.pb" \
  --set workload.global_batch=2048 --set cluster.nodes=16
"$eppsim" sim "$work/big.pb" --cluster "$src/scenarios/showcase.textproto" --set cluster.nodes=16 -o "$work/run" \
  --outputs none --log=info,engine.analytic:debug >"$work/sim-killed.out" 2>"$work/sim-killed.err" &
victim=$!
for _ in $(seq 3000); do grep -q "the event loop starts" "$work/sim-killed.err" && break; sleep 0.02; done
kill -INT $victim
wait $victim
status=$?
[ $status -eq 130 ] || { echo "FAIL SIGINT mid-step: exit $status, expected 130"; cat "$work/sim-killed.err"; failures=$((failures + 1)); }
[ "$(md5sum < "$work/run/report.json")" = "$md5_before" ] || { echo "FAIL SIGINT mid-step: the previous run changed"; failures=$((failures + 1)); }
grep -q "kept the trace of what finished so far ([0-9]* of [0-9]* ops, up to .* s simulated) in $work/run.interrupted-trace.pb" "$work/sim-killed.err" ||
  { echo "FAIL SIGINT mid-step: no partial trace message"; cat "$work/sim-killed.err"; failures=$((failures + 1)); }
check "export a partial trace" 0 "" -- "$eppsim" export chrome "$work/run.interrupted-trace.pb" -o "$work/partial.json"
check "export a partial trace to Perfetto" 0 "" -- "$eppsim" export perfetto "$work/run.interrupted-trace.pb" \
  -o "$work/partial.pftrace"
check "diff a partial trace" 2 "run.interrupted-trace.pb: incomplete: a partial trace (interrupted by SIGINT; " -- \
  "$eppsim" diff "$work/run.interrupted-trace.pb" "$work/run"
[ -z "$(ls -A "$work" | grep -e eppsim-partial -e '\.tmp')" ] || { echo "FAIL SIGINT mid-step: temporary files left"; ls -A "$work"; failures=$((failures + 1)); }
rm -f "$work/big.pb"

# plan, then sim the written schedule: the same step time.
check "plan" 0 "" -- "$eppsim" plan "$src/scenarios/quickstart.textproto" -o "$work/schedule.pb"
check "sim" 0 "" -- "$eppsim" sim "$work/schedule.pb" --cluster "$src/scenarios/quickstart.textproto" -o "$work/sim"
step() { grep -o '"step_time_s": [0-9.e+-]*' "$1"; }
[ "$(step "$work/run/report.json")" = "$(step "$work/sim/report.json")" ] || {
  echo "FAIL plan+sim step time differs from run"; failures=$((failures + 1)); }
# The flow engine runs the same schedule (SimGrid, in a child process); the report names it.
check "sim --engine flow" 0 "" -- "$eppsim" sim "$work/schedule.pb" --cluster "$src/scenarios/quickstart.textproto" \
  -o "$work/sim-flow" --engine flow
grep -q '"engine": "flow"' "$work/sim-flow/report.json" || { echo "FAIL --engine flow not in report"; failures=$((failures + 1)); }
# sim resolves no plan: a plan block it cannot use does not stop it; run still rejects it.
check "sim without a plan" 0 "" -- "$eppsim" sim "$work/schedule.pb" --cluster "$src/scenarios/quickstart.textproto" \
  -o "$work/sim-no-plan" --set plan.strategy=nope --set plan.epp.sp_degree=3
check "run with that plan" 2 "unknown strategy" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/z" \
  --set plan.strategy=nope
check "export chrome" 0 "" -- "$eppsim" export chrome "$work/run/trace.pb" -o "$work/exported.json"
cmp -s "$work/exported.json" "$work/run/trace.json" || { echo "FAIL export chrome differs from run's trace.json"; failures=$((failures + 1)); }
check "export chrome of a run directory" 0 "" -- "$eppsim" export chrome "$work/run" -o "$work/exported_dir.json"
cmp -s "$work/exported_dir.json" "$work/run/trace.json" || { echo "FAIL export chrome of a directory differs"; failures=$((failures + 1)); }
check "export chrome of a Chrome trace" 2 "a Chrome trace (for viewers such as Perfetto), which eppsim cannot read back" -- \
  "$eppsim" export chrome "$work/run/trace.json" -o "$work/x.json"
# Perfetto's format: a stream of TracePackets (Trace.packet, field 1, length-delimited) to the
# last byte, naming the ranks and the ops (tests/traces/perfetto_schema_test.py reads it with
# Perfetto's own schema).
check "export perfetto" 0 "" -- "$eppsim" export perfetto "$work/run" -o "$work/exported.pftrace"
/usr/bin/python3 - "$work/exported.pftrace" "$work/partial.pftrace" <<'PY' || { echo "FAIL export perfetto: not a stream of TracePackets"; failures=$((failures + 1)); }
import sys
for path in sys.argv[1:]:
    data, at, packets = open(path, "rb").read(), 0, 0
    while at < len(data):
        assert data[at] == 0x0A, f"{path}: byte {at}: tag {data[at]}, not Trace.packet's"
        at, length, shift = at + 1, 0, 0
        while True:
            length |= (data[at] & 0x7F) << shift
            at, shift = at + 1, shift + 7
            if data[at - 1] < 0x80:
                break
        at += length
        packets += 1
    assert at == len(data) and packets > 10, f"{path}: {packets} packets, ending at {at} of {len(data)} bytes"
    names = [b"rank 0", b"F c"] if path.endswith("exported.pftrace") else [b"rank 0", b"step incomplete"]
    assert all(name in data for name in names), f"{path}: does not name {names}"
PY
check "export timeline" 0 "" -- "$eppsim" export timeline "$work/run/trace.pb" -o "$work/rank_timeline.csv"
head -1 "$work/rank_timeline.csv" | grep -qx "rank,start_s,end_s,state" || { echo "FAIL export timeline header"; failures=$((failures + 1)); }
# Ranks of interest: auto keeps a rank of each stage and group size, the ranks
# the faults name and the slowest rank; replay needs every rank's events, diff
# the same ranks' in both traces.
check "run --trace-ranks auto" 0 "" -- "$eppsim" run "$src/scenarios/faults.textproto" --trace-ranks auto -o "$work/auto"
grep -qF "  trace        op events of 6 of 8 ranks (--trace-ranks auto): 0, 1, 4, 5, 6, 7" "$work/out" ||
  { echo "FAIL run --trace-ranks auto: the summary does not name the kept ranks"; failures=$((failures + 1)); }
check "export timeline of ranks of interest" 0 "" -- "$eppsim" export timeline "$work/auto" -o "$work/auto_timeline.csv"
[ "$(cut -d, -f1 "$work/auto_timeline.csv" | sed 1d | sort -un | tr '\n' ' ')" = "0 1 4 5 6 7 " ] ||
  { echo "FAIL export timeline of ranks of interest: not the kept ranks"; failures=$((failures + 1)); }
check "replay of ranks of interest" 2 "replay needs every rank's: rerun with --trace-ranks all" -- \
  "$eppsim" replay "$work/auto/trace.pb" --cluster "$src/scenarios/faults.textproto" -o "$work/auto_replay"
# A summary nobody received is a failure: stdout on a full disk exits 1 and says why.
if [ -c /dev/full ]; then
  "$eppsim" presets >/dev/full 2>"$work/full.err"
  status=$?
  if [ $status -ne 1 ] || ! grep -qx "eppsim: failure: cannot write to standard output: No space left on device" "$work/full.err"; then
    echo "FAIL presets > /dev/full: exit $status, stderr: $(cat "$work/full.err")"; failures=$((failures + 1))
  fi
fi
# The exit-status rule, as --help states it (docs/guide/commands.md): the codes above.
"$eppsim" --help | tr '\n' ' ' | grep -q "Exit status: 0 success, 2 bad input or arguments (paths included), 1 a failure of the machine or of eppsim, 130 SIGINT, 143 SIGTERM." ||
  { echo "FAIL --help does not state the exit-status rule"; failures=$((failures + 1)); }
# A run directory names its trace, Schedule and scenario at once.
check "replay of a run directory" 0 "" -- "$eppsim" replay "$work/run" --cluster "$src/scenarios/quickstart.textproto" \
  -o "$work/dir_replay"
check "run --trace-ranks past the ranks" 2 "--trace-ranks 2,8: there are ranks 0 to 7" -- \
  "$eppsim" run "$src/scenarios/faults.textproto" --trace-ranks 2,8 -o "$work/auto_bad"
check "export unknown format" 2 "export: unknown format 'svg' (known: chrome, perfetto, timeline, chakra)" -- \
  "$eppsim" export svg "$work/run/trace.pb" -o "$work/x.svg"
# diff: the quickstart against itself on a slower network.
check "run slower network" 0 "" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/slow" \
  --set cluster.inter_node.bandwidth=100Gbps --outputs trace
check "diff" 0 "" -- "$eppsim" diff "$work/run" "$work/slow/trace.pb" -o "$work/diff"
grep -q "schedule     the same" "$work/out" || { echo "FAIL diff summary"; cat "$work/out"; failures=$((failures + 1)); }
grep -q '"same_schedule": true' "$work/diff/diff.json" || { echo "FAIL diff.json"; head "$work/diff/diff.json"; failures=$((failures + 1)); }
check "diff bad top" 2 "diff: --top: must be >= 0, got -1" -- "$eppsim" diff "$work/run" "$work/slow" --top -1 -o "$work/diff"

# Overrides and help.
check "set override" 0 "" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/set" \
  --set plan.packed_1f1b.pipeline_stages=8 --set workload.global_batch=64
grep -q '"pipeline_stages": 8' "$work/set/report.json" || { echo "FAIL --set not applied"; failures=$((failures + 1)); }
# scenario.textproto is the effective scenario: the overrides applied, and it runs to the same report.
grep -q 'global_batch: 64' "$work/set/scenario.textproto" && grep -q 'pipeline_stages: 8' "$work/set/scenario.textproto" ||
  { echo "FAIL scenario.textproto lacks the --set values"; failures=$((failures + 1)); }
check "rerun scenario.textproto" 0 "" -- "$eppsim" run "$work/set/scenario.textproto" -o "$work/set-again"
cmp -s "$work/set/report.json" "$work/set-again/report.json" || { echo "FAIL scenario.textproto does not reproduce report.json"; failures=$((failures + 1)); }
cmp -s "$work/set/scenario.textproto" "$work/set-again/scenario.textproto" || { echo "FAIL scenario.textproto is not a fixed point"; failures=$((failures + 1)); }
# The shaped compute model, chosen and tuned by overrides; its step differs from the roofline's.
check "shaped compute" 0 "" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/shaped" \
  --set workload.global_batch=64 --set cost_model.compute=SHAPED --set cost_model.shaped.kernel_launch=8us --outputs none
grep -q 'compute: SHAPED' "$work/shaped/scenario.textproto" && grep -q 'kernel_launch: "8us"' "$work/shaped/scenario.textproto" ||
  { echo "FAIL shaped: scenario.textproto lacks the --set values"; failures=$((failures + 1)); }
check "roofline compute" 0 "" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/roofline" \
  --set workload.global_batch=64 --outputs none
[ "$(grep '"step_time_s"' "$work/shaped/report.json")" != "$(grep '"step_time_s"' "$work/roofline/report.json")" ] ||
  { echo "FAIL shaped: the same step time as the roofline"; failures=$((failures + 1)); }
for f in timings.json scenario.textproto; do
  [ -s "$work/sim/$f" ] || { echo "FAIL sim: $f missing"; failures=$((failures + 1)); }
done

# --log: categories and levels on stderr; a normal run logs at info.
check "plan logs at info" 0 "[info cli] planned 16 ranks" -- "$eppsim" plan "$src/scenarios/quickstart.textproto" -o "$work/logged.pb"
check "--log=warn" 0 "" -- "$eppsim" plan "$src/scenarios/quickstart.textproto" -o "$work/logged.pb" --log=warn
[ ! -s "$work/err" ] || { echo "FAIL --log=warn still logs: $(cat "$work/err")"; failures=$((failures + 1)); }
check "--log debug" 0 "[debug plan.epp] replica 0:" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/epp" \
  --strategy epp --set workload.global_batch=64 --log=plan.epp:debug
grep -q "debug plan.flexsp" "$work/err" && { echo "FAIL --log=plan.epp:debug enabled plan.flexsp"; failures=$((failures + 1)); }
grep -q "K=" "$work/out" || { echo "FAIL epp: no K in the plan summary"; failures=$((failures + 1)); }
check "--log bad level" 2 "unknown log level 'loud'" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/x" --log=plan:loud
for cmd in run compare topo plan sim export diff presets version; do check "$cmd --help" 0 "" -- "$eppsim" $cmd --help; done
check "--help" 0 "" -- "$eppsim" --help
check "presets" 0 "" -- "$eppsim" presets

# Bad input: exit 2 with a message naming the file, the field and the rule.
printf 'name: "x"\ncluster { nodez: 2 }\n' >"$work/unknown.textproto"
check "unknown field" 2 "unknown.textproto:2" -- "$eppsim" run "$work/unknown.textproto" -o "$work/x"
sed 's/bandwidth: "200Gbps"/bandwidth: "200 parsecs"/' "$src/scenarios/quickstart.textproto" >"$work/badunit.textproto"
check "bad unit" 2 "cluster.inter_node.bandwidth" -- "$eppsim" run "$work/badunit.textproto" -o "$work/x"
check "missing file" 2 "nope.textproto" -- "$eppsim" run "$work/nope.textproto"
check "unknown command" 2 "unknown command 'frobnicate' (commands: run, compare, sweep, topo, plan, sim, export, diff, replay, validate, calibrate, testbed, presets" -- "$eppsim" frobnicate
check "unknown option" 2 "run: unrecognised option '--bogus' (options: --scenario, --output" -- \
  "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/x" --bogus
check "unknown option, no command" 2 "(no command): unrecognised option '--bogus'" -- "$eppsim" -o "$work/x" --bogus
grep -q "eppsim compare SCENARIO" <("$eppsim" --help) || { echo "FAIL --help lists no compare synopsis"; failures=$((failures + 1)); }
grep -q "^usage: eppsim sim SCHEDULE --cluster SCENARIO" <("$eppsim" sim --help) || { echo "FAIL sim --help"; failures=$((failures + 1)); }
check "unknown strategy" 2 "unknown strategy" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/x" --strategy nope
check "bad override" 2 "pipeline_stagez" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/x" --set plan.packed_1f1b.pipeline_stagez=2
check "does not fit" 2 "memory limit" -- "$eppsim" run "$src/scenarios/quickstart.textproto" -o "$work/x" --set plan.packed_1f1b.micro_batch_tokens=65536 --set workload.max_length=65536
check "missing option" 2 "" -- "$eppsim" plan "$src/scenarios/quickstart.textproto"
[ ! -e "$work/x" ] || { echo "FAIL a failed run left $work/x behind"; failures=$((failures + 1)); }

# topo: the small topology study into topology.json (the contract's fields), a
# summary line per network on stdout; bad topology input exits 2 naming the field.
check "topo" 0 "" -- "$eppsim" topo "$src/scenarios/topology_small.textproto" -o "$work/topo"
if [ ! -s "$work/topo/topology.json" ]; then echo "FAIL topo: topology.json missing"; failures=$((failures + 1)); fi
for field in chips nodes links diameter_hops inter_node_diameter_hops injection_bandwidth_Bps bisection_bandwidth_Bps \
             allreduce_bandwidth_Bps alltoall_bandwidth_Bps cost_usd cost_per_injection_Bps cost_per_bisection_Bps \
             build_time_s cost_per_injection_vs_fat_tree cost_per_bisection_vs_fat_tree; do
  grep -q "\"$field\": [0-9-]" "$work/topo/topology.json" || { echo "FAIL topo: topology.json lacks $field"; failures=$((failures + 1)); }
done
grep -q "torus-3d" "$work/out" || { echo "FAIL topo: no summary on stdout"; failures=$((failures + 1)); }
check "topo failures" 0 "" -- "$eppsim" topo "$src/scenarios/railx_failures.textproto" -o "$work/topo-failures"
grep -q '"injection_lost_Bps"' "$work/topo-failures/topology.json" || { echo "FAIL topo: no failure report"; failures=$((failures + 1)); }
check "topo bad grid" 2 "cluster.topology.railx.nx" -- "$eppsim" topo "$src/scenarios/topology_small.textproto" -o "$work/y" \
  --set cluster.topology.railx.nx=8
check "topo no scenario" 2 "" -- "$eppsim" topo
# topo resolves the cluster only: a scenario with nothing else works.
sed -n '/^cluster {/,/^}/p' "$src/scenarios/quickstart.textproto" >"$work/cluster-only.textproto"
check "topo cluster only" 0 "" -- "$eppsim" topo "$work/cluster-only.textproto" -o "$work/topo-cluster-only"
[ -s "$work/topo-cluster-only/topology.json" ] || { echo "FAIL topo cluster only: no topology.json"; failures=$((failures + 1)); }
[ ! -e "$work/y" ] || { echo "FAIL a failed topo left $work/y behind"; failures=$((failures + 1)); }

# compare: every strategy on one sampled batch; compare.json is {"records": [...], "speedup": {A: {B: x}}}
# (B's step time over A's), with compare.csv, a table on stdout and a run directory per strategy.
check "compare" 0 "" -- "$eppsim" compare "$src/scenarios/quickstart.textproto" -o "$work/compare"
/usr/bin/python3 - "$work/compare/compare.json" "$work/run/report.json" <<'PY' || { echo "FAIL compare: compare.json"; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
run = json.load(open(sys.argv[2]))
names = [r["strategy"] for r in d["records"]]
assert "packed-1f1b" in names, names
assert d["speedup"]["packed-1f1b"]["packed-1f1b"] == 1
assert sorted(d["speedup"]) == sorted(names), d["speedup"]
for a in d["records"]:
    for b in d["records"]:
        x = d["speedup"][a["strategy"]][b["strategy"]]
        assert abs(x - b["step_time_s"] / a["step_time_s"]) <= 1e-12 * x, (a["strategy"], b["strategy"], x)
    assert a["tokens"] == d["records"][0]["tokens"]  # one batch for all
packed = next(r for r in d["records"] if r["strategy"] == "packed-1f1b")
assert packed["step_time_s"] == run["step_time_s"], (packed["step_time_s"], run["step_time_s"])
PY
head -1 "$work/compare/compare.csv" | grep -q '^strategy,network,step_time_s,tokens_per_s,mfu,peak_memory_bytes,bubble_share,communication_share,speedup_over_packed-1f1b' ||
  { echo "FAIL compare: compare.csv header"; failures=$((failures + 1)); }
for f in report.json timings.json scenario.textproto trace.pb trace.json ops.csv memory.csv ranks.csv schedule.pb; do
  [ -s "$work/compare/packed-1f1b/$f" ] || { echo "FAIL compare: packed-1f1b/$f missing"; failures=$((failures + 1)); }
done
grep -q "vs packed-1f1b" "$work/out" || { echo "FAIL compare: no table on stdout"; failures=$((failures + 1)); }
# Each strategy's scenario.textproto runs that strategy.
grep -q 'strategy: "flexsp"' "$work/compare/flexsp/scenario.textproto" ||
  { echo "FAIL compare: flexsp/scenario.textproto does not name flexsp"; failures=$((failures + 1)); }
check "compare again" 0 "" -- "$eppsim" compare "$src/scenarios/quickstart.textproto" -o "$work/compare-again"
for f in compare.json compare.csv flexsp/report.json flexsp/schedule.pb flexsp/scenario.textproto; do
  cmp -s "$work/compare/$f" "$work/compare-again/$f" || { echo "FAIL compare: $f differs between identical runs"; failures=$((failures + 1)); }
done
check "compare chosen" 0 "" -- "$eppsim" compare "$src/scenarios/quickstart.textproto" -o "$work/compare-one" \
  --strategies packed-1f1b --set workload.global_batch=64
grep -q '"pipeline_stages": 4' "$work/compare-one/compare.json" || { echo "FAIL compare: --strategies/--set"; failures=$((failures + 1)); }
check "compare unknown strategy" 2 "unknown strategy 'nope' (known: packed-1f1b" -- \
  "$eppsim" compare "$src/scenarios/quickstart.textproto" -o "$work/z" --strategies packed-1f1b,nope
check "compare none fits" 2 "memory limit" -- "$eppsim" compare "$src/scenarios/quickstart.textproto" -o "$work/z" \
  --strategies packed-1f1b --set plan.packed_1f1b.micro_batch_tokens=65536 --set workload.max_length=65536
[ ! -e "$work/z" ] || { echo "FAIL a failed compare left $work/z behind"; failures=$((failures + 1)); }

# The timeline plot draws a PNG from a run directory.
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  check "timeline plot" 0 "wrote" -- /usr/bin/python3 "$src/plots/timeline.py" "$work/run"
  [ -s "$work/run/timeline.png" ] || { echo "FAIL timeline.png missing"; failures=$((failures + 1)); }
  check "topology cost plot" 0 "wrote" -- /usr/bin/python3 "$src/plots/topology_cost.py" "$work/topo"
  [ -s "$work/topo/topology_cost.png" ] || { echo "FAIL topology_cost.png missing"; failures=$((failures + 1)); }
  check "compare plot" 0 "wrote" -- /usr/bin/python3 "$src/plots/compare.py" "$work/compare"
  [ -s "$work/compare/compare.png" ] || { echo "FAIL compare.png missing"; failures=$((failures + 1)); }
  check "compare plot, one strategy" 0 "wrote" -- /usr/bin/python3 "$src/plots/compare.py" "$work/compare-one"
else
  echo "FAIL python3-matplotlib is not installed (scripts/install-deps.sh installs it)"; failures=$((failures + 1))
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
