#pragma once
// What the simulated engines (analytic, flow) share around the executor core
// they run on: the core's options for a simulated run, and the progress line
// they update as ops finish.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "schedule/executor/executor_core.h"

namespace eppsim {

// What a simulated run's trace keeps: with `op_events`, the events of the ops
// of `ranks` and, with `slowest_rank`, of the slowest rank (neither: every
// rank's; ExecutorOptions::traced_ranks) and their memory samples; without,
// per-rank busy times and memory peaks, which is all a report reads.
struct TraceSelection {
  bool op_events = true;
  std::vector<std::uint32_t> ranks;
  bool slowest_rank = false;
};

// The memory a simulation of `schedule` takes beyond the Schedule: the
// engine's `state_bytes_per_op` for every op, 1 KiB for every rank (its
// figures in the trace and the report) and, with op events, each op's
// span (16 bytes) and each kept event's columns (64 bytes; the slowest rank
// counted as the rank with the most ops; a rank of a replica simulated
// through another's, schedule/identical_replicas.h, with its source's).
std::uint64_t simulation_memory_bytes(const proto::Schedule& schedule, const TraceSelection& trace,
                                      std::uint64_t state_bytes_per_op);

// The core's options for a simulated run: at most `max_blocked_ops_reported`
// ops named when a Schedule deadlocks, and the trace `trace` selects.
ExecutorOptions simulated_core_options(std::size_t max_blocked_ops_reported, const TraceSelection& trace);

// The progress line's text at simulated time `now_s`, `elapsed_s` of wall time in:
// "1.234 s simulated, 5000 of 80000 ops, 2.50 M ops/s".
std::string simulation_progress(const ExecutorCore& core, double now_s, double elapsed_s);

}  // namespace eppsim
