#include "sim/engine/engine_core.h"

#include <algorithm>

#include <fmt/format.h>

namespace eppsim {

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
