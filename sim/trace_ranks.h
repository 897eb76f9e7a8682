#pragma once
// Ranks of interest: whose op events a run's trace keeps (`--trace-ranks`).
// The report always covers every rank (the trace lists every rank's busy
// figures and memory peak); the op-level outputs (trace.pb, trace.json,
// ops.csv, memory.csv) hold the kept ranks' events.
//
//   all    every rank's events
//   auto   one rank of each pipeline stage (the lowest that computes it), one
//          of each size of communication group (the first member of the
//          first group of that size: an SP group, a data-parallel group, ...),
//          every rank a simulated fault strikes, and the slowest rank (whose
//          ops end last; the busiest of those)
//   LIST   the ranks listed, e.g. 0,3,7-9
// By default a run keeps every rank's events up to kMaxDefaultTracedOps ops in
// its Schedule, and auto's ranks past it, saying so in its summary and its
// report (Report.trace_ranks).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/report.pb.h"
#include "proto/schedule.pb.h"
#include "sim/engine/engine_core.h"
#include "sim/engine/fault_plan.h"

namespace eppsim {

// Past this many ops, a run keeps auto's ranks unless told otherwise: some
// 4 GB of Chrome trace, and more than Perfetto's UI opens.
inline constexpr std::uint64_t kMaxDefaultTracedOps = 4'000'000;

struct TraceRanks {
  enum class Mode { Default, All, Auto, Listed };
  Mode mode = Mode::Default;
  std::string listed;  // Mode::Listed: the list as given, checked against the Schedule's ranks
  bool operator==(const TraceRanks&) const = default;
};

// `--trace-ranks` text: "all", "auto" or a list of ranks. InputError naming
// the option for an empty value (the list itself is checked when the
// Schedule's ranks are known).
TraceRanks parse_trace_ranks(std::string_view text);

// auto's ranks before the run (the slowest is known only after it),
// ascending: see above.
std::vector<std::uint32_t> ranks_of_interest(const proto::Schedule& schedule, const FaultPlan* faults);

// The trace selection for `ranks` on `schedule` (op events assumed wanted),
// and in `coverage` what the report says of it (empty ranks: every rank).
// Mode::Default keeps every rank's events up to `max_default_ops` ops.
TraceSelection select_trace_ranks(const TraceRanks& ranks, const proto::Schedule& schedule, const FaultPlan* faults,
                                  proto::TraceCoverage* coverage, std::uint64_t max_default_ops = kMaxDefaultTracedOps);

}  // namespace eppsim
