#pragma once
// One point of `eppsim-bench comm` (runtime/bench/comm_bench.h), shared with
// `eppsim-bench interference` (runtime/bench/interference_bench.h), which
// times the same communication alone before it times it beside compute.
#include <mpi.h>

#include <cstdint>
#include <string>

#include "runtime/comm_bench_data.h"

namespace eppsim::runtime {

// `iterations` back-to-back blocking calls of `op` of `bytes` over the members
// of `comm` after `warmup` calls and a barrier: this rank's mean time per call
// and whether it received the right data. backend "cpu": MPI on host buffers,
// steady_clock; "cuda" (builds with NCCL): runtime/cuda/nccl_bench.h.
// Throws InputError when a count exceeds what one MPI call moves.
BenchPoint measure_comm(const std::string& backend, CommKind op, MPI_Comm comm, std::uint64_t bytes, int iterations,
                        int warmup);

// Whether the members of `comm` span more than one node (collective over `comm`).
bool group_crosses_nodes(MPI_Comm comm);

}  // namespace eppsim::runtime
