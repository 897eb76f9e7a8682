#!/usr/bin/env bash
# scripts/cluster-validate.sh's plumbing, without GPUs or MPI: eppsim,
# eppsim-bench and eppsim-run are stand-ins that log their arguments (and
# eppsim testbed writes a small validation.json of each kind), so the test
# checks which commands run in which order with which options, the launcher's
# {ranks}, the reuse of the first loop's benchmarks, the data-parallel run over
# every rank, the table, and the refusals of bad arguments.
# usage: cluster_validate_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
script=$source_dir/scripts/cluster-validate.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin/sim" "$work/bin/runtime"
log=$work/commands.log
cat > "$work/bin/sim/eppsim" <<STANDIN
#!/usr/bin/env bash
echo "eppsim \$*" >> "$log"
out=""
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
mkdir -p "\$out/uncalibrated"
for side in "" uncalibrated/; do
  echo '{"measured_engine": "cuda", "simulated_step_time_s": 2.1, "measured_step_time_s": 2.0, "measured_step_time_min_s": 1.9, "measured_step_time_max_s": 2.2}' > "\$out/\${side}validation.json"
done
STANDIN
for program in eppsim-bench eppsim-run; do
  printf '#!/usr/bin/env bash\necho "%s $* (RANKS=${RANKS:-})" >> "%s"\n' "$program" "$log" > "$work/bin/runtime/$program"
done
chmod +x "$work/bin/sim/eppsim" "$work/bin/runtime/"*
export EPPSIM_BIN=$work/bin

fail() { echo "FAIL $*"; echo "--- commands:"; cat "$log" 2>/dev/null; exit 1; }

# 8 ranks on 2 nodes of 4, started by a launcher: the NCCL benchmark over all
# 8, epp4 first (it benchmarks), pp2, dp2 and sp2 reusing its benchmarks, then
# dp8 over both nodes.
table=$(bash "$script" "$work/out" --ranks 8 --ranks-per-node 4 --launcher "env RANKS={ranks}" --preset H200 2>"$work/err") ||
  fail "exit $?: $(cat "$work/err")"
expected="eppsim-bench comm --backend cuda --out $work/out/comm.json (RANKS=8)
eppsim testbed scenarios/validation/gpu_epp4.textproto --backend cuda --launcher env RANKS={ranks} --set cluster.gpu.preset=H200 -o $work/out/gpu_epp4
eppsim testbed scenarios/validation/gpu_pp2.textproto --backend cuda --launcher env RANKS={ranks} --set cluster.gpu.preset=H200 --bench $work/out/gpu_epp4 -o $work/out/gpu_pp2
eppsim testbed scenarios/validation/gpu_dp2.textproto --backend cuda --launcher env RANKS={ranks} --set cluster.gpu.preset=H200 --bench $work/out/gpu_epp4 -o $work/out/gpu_dp2
eppsim testbed scenarios/validation/gpu_sp2.textproto --backend cuda --launcher env RANKS={ranks} --set cluster.gpu.preset=H200 --bench $work/out/gpu_epp4 -o $work/out/gpu_sp2
eppsim testbed scenarios/validation/gpu_dp2.textproto --backend cuda --launcher env RANKS={ranks} --set cluster.gpu.preset=H200 --set cluster.nodes=2 --set cluster.gpus_per_node=4 --set workload.global_batch=256 -o $work/out/gpu_dp8"
[ "$(cat "$log")" = "$expected" ] || fail "commands differ: $(diff <(echo "$expected") "$log")"
[ "$(grep -c '| calibrated |' <<<"$table")" = 5 ] && [ "$(grep -c '| uncalibrated |' <<<"$table")" = 5 ] ||
  fail "table: $table"
grep -q "^| gpu_dp8 | " <<<"$table" || fail "no gpu_dp8 row: $table"
cmp -s <(echo "$table") "$work/out/validation.md" || fail "OUT/validation.md is not the printed table"

# 2 CPU ranks, mpirun by default: pp2 benchmarks, no epp4, no dpN.
rm "$log"
bash "$script" "$work/cpu" --backend cpu --ranks 2 >/dev/null 2>"$work/err" || fail "cpu: exit $?: $(cat "$work/err")"
grep -q "^eppsim-bench comm --backend cpu --out $work/cpu/comm.json" "$log" || fail "cpu: no comm benchmark"
[ "$(grep -c '^eppsim testbed' "$log")" = 3 ] || fail "cpu: not 3 loops"
grep -q "^eppsim testbed scenarios/validation/pp2.textproto --backend cpu -o $work/cpu/pp2$" "$log" || fail "cpu: pp2 first, benchmarking"
grep -q "^eppsim testbed scenarios/validation/sp2.textproto --backend cpu --bench $work/cpu/pp2 -o $work/cpu/sp2$" "$log" ||
  fail "cpu: sp2 reusing pp2's benchmarks"

# A loop that fails: the others still run, the exit status is 1.
sed -i 's/^out=""$/[[ "$*" != *sp2* ]] || exit 1\nout=""/' "$work/bin/sim/eppsim"
rm "$log"
status=0
bash "$script" "$work/failing" --backend cpu --ranks 2 >/dev/null 2>"$work/err" || status=$?
[ "$status" = 1 ] || fail "a failed loop: exit $status"
grep -q "cluster-validate: exit 1 after .* s: eppsim testbed scenarios/validation/sp2" "$work/err" || fail "the failure is not logged"
[ "$(grep -c '| calibrated |' "$work/failing/validation.md")" = 2 ] || fail "the table of what finished"

# Bad arguments: exit 2, one line naming the option.
refused() {
  local expected=$1 status=0 message
  shift
  message=$(bash "$script" "$@" 2>&1 >/dev/null) || status=$?
  [ "$status" = 2 ] && [[ "$message" == *"$expected"* ]] || fail "$*: exit $status: $message"
}
refused "usage: scripts/cluster-validate.sh OUT" --ranks 4
refused "--backend must be cuda or cpu, got 'tpu'" "$work/x" --backend tpu
refused "needs at least 2 ranks, found 1" "$work/x" --ranks 1
refused "--ranks 6 is not a whole number of nodes of 4" "$work/x" --ranks 6 --ranks-per-node 4
refused "must be positive whole numbers, got 'two'" "$work/x" --ranks two
refused "--launcher must hold {ranks}, got 'srun'" "$work/x" --ranks 2 --launcher srun
refused "--preset is for --backend cuda" "$work/x" --backend cpu --preset H200
refused "usage:" "$work/x" --ranks
echo "PASS cluster-validate"
