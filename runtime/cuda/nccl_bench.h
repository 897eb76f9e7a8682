#pragma once
// `eppsim-bench comm --backend cuda`: one point of the benchmark with NCCL on
// the GPU of this rank, on an NCCL communicator over the members of `comm`
// (bootstrapped through it), timed with CUDA events around `iterations` calls
// on one stream after `warmup` calls; buffers and checks as
// runtime/comm_bench_data.h; and the same op as a window of communication
// beside compute (eppsim-bench interference). Built only with CUDA and NCCL.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/comm_bench_data.h"
#include "runtime/comm_window.h"
#include "runtime/step_clock.h"

namespace eppsim::runtime {

// Selects this rank's GPU (runtime/cuda/nccl_util.h) and returns its index:
// collective over the world, once, before any measure_nccl or window.
int nccl_bench_setup();

BenchPoint measure_nccl(CommKind op, MPI_Comm comm, std::uint64_t bytes, int iterations, int warmup);

// `eppsim-bench interference --backend cuda`: the CommWindow
// (runtime/comm_window.h) of `op` of `bytes` over the members of `comm`,
// on a communicator and a stream of its own, the same buffers and check as
// measure_nccl; its calls enqueued at once between CUDA events, its end mapped
// onto `clock` (which must outlive it). Collective over `comm`.
std::unique_ptr<CommWindow> make_nccl_window(CommKind op, MPI_Comm comm, std::uint64_t bytes, const StepClock& clock);

// "NVIDIA H100 80GB HBM3": the name of this rank's GPU.
std::string nccl_device_name();

}  // namespace eppsim::runtime
