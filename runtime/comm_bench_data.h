#pragma once
// What every backend of `eppsim-bench comm` (runtime/bench/comm_bench.h) moves
// and expects: the ops, their buffer shapes (runtime/comm_plan.h's, from
// schedule.proto's size_bytes), the values each rank sends (small integers, so
// float sums are exact) and the check of what a rank received.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/comm_kind.h"
#include "runtime/comm_plan.h"

namespace eppsim::runtime {

// One point of the benchmark on one rank: its mean time per call and whether
// what it received was right.
struct BenchPoint {
  double time_s = 0.0;
  bool correct = false;
};

// The options the MPI subcommands of eppsim-bench share; `command` ("eppsim-bench
// comm") starts the InputError messages. --backend: cpu, or cuda when this
// build has CUDA and NCCL. --ops: comma-separated names of
// models/comm_kind.h's kinds ("send-recv", "all-reduce", ...), under which the
// rows are written and `eppsim calibrate` reads them. --bytes:
// comma-separated sizes ("64KiB,1MiB").
void check_bench_backend(std::string_view command, const std::string& backend, bool cuda_built);
std::vector<CommKind> parse_bench_ops(std::string_view command, const std::string& list);
std::vector<std::uint64_t> parse_bench_sizes(const std::string& list);

// The shape of `op` of `bytes` on a group of `group_size` (send-recv: the
// message; the receiver's buffer is recv_elements = count).
CommShape bench_shape(CommKind op, std::uint64_t bytes, std::uint32_t group_size);

// What the rank at `position` sends: element i of its whole send buffer.
std::vector<float> bench_send_buffer(const CommShape& shape, std::uint32_t position);

// Whether `received` is what the rank at `position` of a group of
// `group_size` must hold after `op` (send-recv: position 1 receives).
bool bench_received_correctly(CommKind op, const CommShape& shape, std::uint32_t position, std::uint32_t group_size,
                              const std::vector<float>& received);

}  // namespace eppsim::runtime
