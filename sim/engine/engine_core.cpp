#include "sim/engine/engine_core.h"

#include <algorithm>

#include <fmt/format.h>

#include "schedule/identical_replicas.h"

namespace eppsim {

std::uint64_t simulation_memory_bytes(const proto::Schedule& schedule, const TraceSelection& trace,
                                      std::uint64_t state_bytes_per_op) {
  constexpr std::uint64_t kSpanBytes = 16, kEventBytes = 64, kRankBytes = 1024;
  std::uint64_t ops = 0, most = 0;
  for (const auto& program : schedule.programs()) {
    const auto n = static_cast<std::uint64_t>(program.code_size());
    ops += n;
    most = std::max(most, n);
  }
  std::uint64_t bytes = ops * state_bytes_per_op + static_cast<std::uint64_t>(schedule.programs_size()) * kRankBytes;
  if (!trace.op_events) return bytes;
  // A rank of a replica simulated through another's keeps its source's events.
  const std::vector<std::uint32_t> source = source_ranks(schedule);
  const auto events_of_rank = [&](std::uint32_t r) {
    return r < source.size() ? static_cast<std::uint64_t>(schedule.programs(static_cast<int>(source[r])).code_size()) : 0;
  };
  std::uint64_t kept = 0;
  if (trace.ranks.empty() && !trace.slowest_rank) {
    for (std::uint32_t r = 0; r < source.size(); ++r) kept += events_of_rank(r);
  }
  for (const auto r : trace.ranks) kept += events_of_rank(r);
  if (trace.slowest_rank) kept += most;
  return bytes + ops * kSpanBytes + kept * kEventBytes;
}

ExecutorOptions simulated_core_options(std::size_t max_blocked_ops_reported, const TraceSelection& trace) {
  ExecutorOptions o;
  o.max_blocked_ops_reported = max_blocked_ops_reported;
  o.record_op_events = trace.op_events;
  o.record_memory_samples = trace.op_events;
  if (trace.op_events) {
    o.traced_ranks = trace.ranks;
    o.trace_slowest_rank = trace.slowest_rank;
  }
  return o;
}

std::string simulation_progress(const ExecutorCore& core, double now_s, double elapsed_s) {
  const double done = static_cast<double>(core.ops_done());
  return fmt::format("{:.3f} s simulated, {:.0f} of {} ops, {:.2f} M ops/s", now_s, done, core.ops_total(),
                     done / std::max(elapsed_s, 1e-9) / 1e6);
}

}  // namespace eppsim
