#!/usr/bin/env bash
# The CUDA backend on one GPU (runtime/README.md, "On a GPU"), every step
# bounded, its exit status logged, its files in OUT:
#   - the CUDA tests: the reference attention kernel and cuDNN's flash
#     attention against the double-precision reference, the queue with both
#   - eppsim-bench compute with flash attention on gpu1 (TinyLlama-shaped
#     1.1B) and on gpu1_llama7b (Llama 2 7B layers), and the reference kernel
#     on a few of gpu1's shapes beside it
#   - both steps for real: mpirun -np 1 eppsim-run SCHEDULE --backend cuda
#   - NCCL on a one-rank communicator: its collectives, and in all-to-all a
#     send to itself (eppsim-bench comm --backend cuda at 1 rank)
#   - hybrid emulation: one real rank of a 64-GPU Schedule of gpu1's model
#     (scenarios/validation/gpu_hybrid64), the other 63 re-timed by the
#     simulation calibrated on this GPU (eppsim testbed --real-ranks 0
#     --closed-loop, on the benchmarks above)
#   - the CPU validation on 4 MPI ranks of the host's cores
#     (scripts/cluster-validate.sh --backend cpu: epp4, pp2, dp2, sp2, each
#     benchmarked, calibrated, simulated, run and validated, and the table),
#     then hybrid emulation against all-real runs (scripts/hybrid-validate.sh:
#     pp4 with 2 of its 4 ranks real, and a 16,384-GPU step with 2 real ranks)
#   - PyTorch's GEMMs and SDPA on gpu1's shapes, where python3 has torch
# usage: scripts/gpu-check.sh OUT
#   needs eppsim, eppsim-bench, eppsim-run, the runtime_cuda_* tests and mpirun
#   on PATH (a build with CUDA and cuDNN; on a machine without our libraries,
#   `source KIT/env.sh` of scripts/gpu-kit.sh first).
# Afterwards, where eppsim is built (runtime/README.md has the numbers):
#   eppsim calibrate OUT/compute_gpu1.json -o cal.textproto
#   eppsim sim OUT/gpu1_schedule.pb --cluster GPU1_WITH_CALIBRATION -o sim
#   eppsim validate --simulated sim/trace.pb --measured OUT/measured_gpu1.pb -o val
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUT}
cd "$(dirname "$0")/.."
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
step() {
  local limit=$1 start=$SECONDS rc
  shift
  timeout "$limit" "$@"
  rc=$?
  echo "gpu-check: $* -> exit $rc ($((SECONDS - start)) s)" >&2
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >&2
echo "gpu-check: $(nproc) cores; python3 $(python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' 2>&1)" >&2

step 120 runtime_cuda_compute_test --gtest_output="json:$out/cuda_test.json"
step 120 runtime_cudnn_attention_test --gtest_output="json:$out/cudnn_test.json"

# name, then eppsim-bench compute's grid options (gpu1: the default grid)
run_model() {
  local name=$1
  shift
  step 60 eppsim plan "scenarios/validation/$name.textproto" -o "$out/${name}_schedule.pb"
  step 240 eppsim-bench compute --scenario "scenarios/validation/$name.textproto" --backend cuda --attention flash \
    "$@" --out "$out/compute_$name.json"
  step 120 mpirun -np 1 eppsim-run "$out/${name}_schedule.pb" --backend cuda --attention flash \
    -o "$out/measured_$name.pb" --steps 5
}
run_model gpu1
step 60 mpirun -np 1 eppsim-bench comm --backend cuda --bytes 4KiB,1MiB,64MiB --iterations 5 --warmup 2 \
  --out "$out/comm_nccl_1rank.json"
mkdir -p "$out/hybrid64_bench"
cp "$out/compute_gpu1.json" "$out/hybrid64_bench/compute.json"
cp "$out/comm_nccl_1rank.json" "$out/hybrid64_bench/comm.json"
step 180 eppsim testbed scenarios/validation/gpu_hybrid64.textproto --backend cuda --real-ranks 0 --closed-loop \
  --bench "$out/hybrid64_bench" -o "$out/hybrid64"
run_model gpu1_llama7b --tokens 512,2048,8192,16384 --packed 256,1024
step 120 eppsim-bench compute --scenario scenarios/validation/gpu1.textproto --backend cuda --attention reference \
  --tokens 512,2048,8192 --context 0 --packed 256 --out "$out/compute_gpu1_reference.json"

# The CPU validation on 4 of the host's cores, quieter than a 2-core VM:
# epp4 (which benchmarks), then pp2, dp2 and sp2, and their table.
step 360 bash scripts/cluster-validate.sh "$out/validation-cpu" --backend cpu --ranks 4
step 240 bash scripts/hybrid-validate.sh "$out/hybrid-cpu"

if python3 -c "import torch" 2>/dev/null; then
  step 120 python3 scripts/torch_reference.py "$out/torch_reference.json"
fi
