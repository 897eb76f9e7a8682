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

namespace eppsim {

// `top` bounds both top lists. The names are the traces' files, for the output.
proto::TraceDiff diff_traces(const proto::Trace& base, const proto::Trace& changed, std::string_view base_name,
                             std::string_view changed_name, std::size_t top = 10);
proto::TraceDiff diff_trace_files(const std::filesystem::path& base, const std::filesystem::path& changed,
                                  std::size_t top = 10);

// A few lines for the terminal: step times, per-kind changes, the top regressions.
std::string diff_summary(const proto::TraceDiff& diff);

}  // namespace eppsim
