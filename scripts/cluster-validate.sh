#!/usr/bin/env bash
# The validation of the simulator on your own machine or cluster, as one
# command (docs/guide/runtime.md, "On your own GPUs"):
#   1. communication microbenchmarks over every rank of the job (eppsim-bench
#      comm: NCCL with --backend cuda, MPI with cpu; groups of 2, 4, ... up to
#      all of them), OUT/comm.json
#   2. eppsim testbed on the validation scenarios that fit the job, the
#      largest first (it benchmarks compute, communication and the two beside
#      each other over its ranks;
#      the others reuse those benchmarks: same model, same machine). Each
#      calibrates, plans, simulates, runs the Schedule for real and validates,
#      calibrated and uncalibrated, into OUT/NAME/:
#        cuda: scenarios/validation/gpu_epp4 (4 GPUs), gpu_pp2, gpu_dp2, gpu_sp2
#        cpu:  scenarios/validation/epp4 (4 cores), pp2, dp2, sp2
#   3. with more than 4 ranks: data parallelism over all of them (dp2's model
#      and sequences a replica, one replica a rank, across nodes where there
#      are several; its own benchmarks over every rank), OUT/dpN/ (gpu_dpN on
#      cuda)
#   4. the validation table of them all (scripts/validation_table.py),
#      OUT/validation.md, also printed
# usage: scripts/cluster-validate.sh OUT [--backend cuda|cpu] [--ranks N]
#            [--ranks-per-node G] [--launcher "CMD {ranks}"] [--preset GPU]
#   --backend B         cuda (default) or cpu
#   --ranks N           ranks in the job, one a GPU or core (default: the GPUs
#                       nvidia-smi lists here, or this machine's cores)
#   --ranks-per-node G  ranks a node (default: N, one node)
#   --launcher CMD      how to start N processes, {ranks} where N goes (default:
#                       eppsim testbed's mpirun on this machine); in a Slurm
#                       job "srun --ntasks={ranks}"
#   --preset GPU        the uncalibrated model's GPU (eppsim presets; default
#                       the scenarios' H100-SXM); cuda only
# Needs eppsim, eppsim-bench and eppsim-run on PATH (or EPPSIM_BIN=BUILD_DIR),
# of a build with CUDA and NCCL for cuda; one MPI rank per GPU or core. Every
# step is bounded by STEP_LIMIT_S (default 1800 s) and logged with its exit
# status; a failed step does not stop the ones after it, and the exit status
# is 1 when any failed (2: bad arguments).
set -uo pipefail
fail() { echo "cluster-validate: $*" >&2; exit 2; }
usage() { fail "usage: scripts/cluster-validate.sh OUT [--backend cuda|cpu] [--ranks N] [--ranks-per-node G] [--launcher CMD] [--preset GPU]"; }
[ $# -ge 1 ] && [[ "$1" != --* ]] || usage
out=$1
shift
backend=cuda ranks="" per_node="" launcher="" preset=""
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case "$1" in
    --backend) backend=$2 ;;
    --ranks) ranks=$2 ;;
    --ranks-per-node) per_node=$2 ;;
    --launcher) launcher=$2 ;;
    --preset) preset=$2 ;;
    *) usage ;;
  esac
  shift 2
done
case "$backend" in
  cuda) prefix=gpu_ per_replica=32 ;;
  cpu) prefix="" per_replica=4 ; [ -z "$preset" ] || fail "--preset is for --backend cuda (the CPU scenarios' \"GPU\" is a core)" ;;
  *) fail "--backend must be cuda or cpu, got '$backend'" ;;
esac
if [ -z "$ranks" ]; then
  if [ "$backend" = cuda ]; then ranks=$(nvidia-smi --list-gpus 2>/dev/null | grep -c '^GPU'); else ranks=$(nproc); fi
  [ "$ranks" != 0 ] || fail "nvidia-smi lists no GPU here: pass --ranks N (the GPUs of the job), or --backend cpu"
fi
per_node=${per_node:-$ranks}
for value in "$ranks" "$per_node"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] || fail "--ranks and --ranks-per-node must be positive whole numbers, got '$value'"
done
[ "$ranks" -ge 2 ] || fail "needs at least 2 ranks, found $ranks (one GPU: scripts/gpu-check.sh)"
[ $((ranks % per_node)) = 0 ] || fail "--ranks $ranks is not a whole number of nodes of $per_node"
[ -z "$launcher" ] || [[ "$launcher" == *"{ranks}"* ]] || fail "--launcher must hold {ranks}, got '$launcher'"
cd "$(dirname "$0")/.."
if [ -n "${EPPSIM_BIN:-}" ]; then export PATH="$EPPSIM_BIN/sim:$EPPSIM_BIN/runtime:$PATH"; fi
for program in eppsim eppsim-bench eppsim-run; do
  command -v "$program" >/dev/null || fail "$program is not on PATH (set EPPSIM_BIN to the build folder)"
done
mkdir -p "$out"
limit=${STEP_LIMIT_S:-1800}
failed=0
step() {
  local start=$SECONDS rc
  echo "cluster-validate: $*" >&2
  timeout "$limit" "$@"
  rc=$?
  echo "cluster-validate: exit $rc after $((SECONDS - start)) s: $*" >&2
  [ "$rc" = 0 ] || failed=1
}
options=(--backend "$backend")
[ -z "$launcher" ] || options+=(--launcher "$launcher")
[ -z "$preset" ] || options+=(--set "cluster.gpu.preset=$preset")

# 1. Communication over every rank of the job.
if [ -n "$launcher" ]; then
  read -r -a launch <<<"${launcher//\{ranks\}/$ranks}"
else
  launch=(mpirun -np "$ranks")
  [ "$(id -u)" != 0 ] || launch+=(--allow-run-as-root)
fi
step "${launch[@]}" eppsim-bench comm --backend "$backend" --out "$out/comm.json"

# 2. The validation scenarios that fit, the largest first; the others reuse its benchmarks.
names=("${prefix}pp2" "${prefix}dp2" "${prefix}sp2")
[ "$ranks" -lt 4 ] || names=("${prefix}epp4" "${names[@]}")
folders=()
for name in "${names[@]}"; do
  reuse=()
  [ ${#folders[@]} = 0 ] || reuse=(--bench "${folders[0]}")
  step eppsim testbed "scenarios/validation/$name.textproto" "${options[@]}" "${reuse[@]}" -o "$out/$name"
  folders+=("$out/$name")
done

# 3. Data parallelism over every rank, across nodes where there are several.
if [ "$ranks" -gt 4 ]; then
  name=${prefix}dp$ranks
  step eppsim testbed "scenarios/validation/${prefix}dp2.textproto" "${options[@]}" \
    --set "cluster.nodes=$((ranks / per_node))" --set "cluster.gpus_per_node=$per_node" \
    --set "workload.global_batch=$((per_replica * ranks))" -o "$out/$name"
  folders+=("$out/$name")
fi

# 4. The table of what finished.
present=()
for folder in "${folders[@]}"; do [ -s "$folder/validation.json" ] && present+=("$folder"); done
if [ ${#present[@]} -gt 0 ]; then
  python3 scripts/validation_table.py "${present[@]}" | tee "$out/validation.md"
fi
exit $failed
