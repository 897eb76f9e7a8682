#!/usr/bin/env bash
# The CUDA backend on one GPU (runtime/README.md, "On a GPU"): its unit tests,
# the layer, GEMM and attention benchmarks of scenarios/validation/gpu1 and of a
# Llama-2 7B layer, and the gpu1 step run for real by eppsim-run; then PyTorch's
# GEMMs and SDPA attention on the same shapes, for reference, where python3 has
# torch. Every step is bounded and reports its exit status; the files go to OUT.
# usage: scripts/gpu-check.sh OUT [SCHEDULE]
#   needs eppsim-bench, eppsim-run, runtime_cuda_compute_test and mpirun on PATH
#   (a build with CUDA: build/runtime, build/tests/runtime); SCHEDULE is gpu1's
#   Schedule, default planned here with build/sim/eppsim.
# Afterwards, where eppsim is built (see runtime/README.md for the numbers):
#   eppsim calibrate OUT/compute_gpu1.json -o cal.textproto
#   eppsim sim SCHEDULE --cluster GPU1_WITH_CALIBRATION -o sim   (cost_model { calibration_file: "cal.textproto" })
#   eppsim validate --simulated sim/trace.pb --measured OUT/measured_gpu1.pb -o val
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUT [SCHEDULE]}
cd "$(dirname "$0")/.."
mkdir -p "$out"
schedule=${2:-$out/gpu1_schedule.pb}
if [ $# -lt 2 ]; then
  build/sim/eppsim plan scenarios/validation/gpu1.textproto -o "$schedule" || exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
step() { local limit=$1; shift; timeout "$limit" "$@"; echo "gpu-check: $* -> exit $?" >&2; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >&2
step 120 runtime_cuda_compute_test --gtest_output="json:$out/cuda_test.json"
step 200 eppsim-bench compute --scenario scenarios/validation/gpu1.textproto --backend cuda --out "$out/compute_gpu1.json"
step 120 mpirun -np 1 eppsim-run "$schedule" --backend cuda -o "$out/measured_gpu1.pb" --steps 5
step 120 eppsim-bench compute --scenario scenarios/validation/gpu1.textproto --backend cuda --tokens 1000,1024,2873,3072 \
  --context 0 --out "$out/compute_gpu1_odd_tokens.json"
step 200 eppsim-bench compute --scenario scenarios/infinipipe/llama7b_48k.textproto --backend cuda \
  --tokens 1024,4096,16384,32768 --context 0 --out "$out/compute_llama2-7b.json"
if python3 -c "import torch" 2>/dev/null; then
  step 120 python3 scripts/torch_reference.py "$out/torch_reference.json"
fi
