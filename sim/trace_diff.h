#pragma once
// `eppsim diff BASE NEW [-o DIR] [--top N]`: what changed between two traces
// (trace files or run directories; schedule/trace_file.h), e.g. one Schedule on
// two clusters, two engines, or before and after a change to a planner:
// the step time; per kind of op, the summed durations; per rank, busy and idle
// time; the (rank, kind) pairs whose time grew most; and, when both traces ran
// the same Schedule (same ranks and ops: validate's rule), the ops whose
// duration grew most. DIR/diff.json (proto/diff.proto).
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "proto/diff.pb.h"
#include "proto/trace.pb.h"
#include "schedule/trace_parts.h"

namespace eppsim {

// `top` bounds both top lists. The traces' names (their files) are the
// output's. Each trace is visited twice, a part at a time: tallied
// (traces/trace_stats.h), then joined with the other by op
// (traces/op_event_join.h).
proto::TraceDiff diff_traces(const TraceParts& base, const TraceParts& changed, std::size_t top = 10);
proto::TraceDiff diff_traces(const proto::Trace& base, const proto::Trace& changed, std::string_view base_name,
                             std::string_view changed_name, std::size_t top = 10);
proto::TraceDiff diff_trace_files(const std::filesystem::path& base, const std::filesystem::path& changed,
                                  std::size_t top = 10);

// A few lines for the terminal: step times, per-kind changes, the top regressions.
std::string diff_summary(const proto::TraceDiff& diff);

}  // namespace eppsim
