#pragma once
// `eppsim-bench comm --backend cuda`: one point of the benchmark with NCCL on
// the GPU of this rank, on an NCCL communicator over the members of `comm`
// (bootstrapped through it), timed with CUDA events around `iterations` calls
// on one stream after `warmup` calls; buffers and checks as
// runtime/bench/comm_bench_data.h. Built only with CUDA and NCCL.
#include <mpi.h>

#include <cstdint>
#include <string>

#include "runtime/bench/comm_bench_data.h"

namespace eppsim::runtime {

// Selects this rank's GPU (runtime/cuda/nccl_util.h): collective over the
// world, once, before any measure_nccl.
void nccl_bench_setup();

BenchPoint measure_nccl(BenchOp op, MPI_Comm comm, std::uint64_t bytes, int iterations, int warmup);

// "NVIDIA H100 80GB HBM3": the name of this rank's GPU.
std::string nccl_device_name();

}  // namespace eppsim::runtime
