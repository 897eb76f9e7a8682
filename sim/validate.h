#pragma once
// `eppsim validate --simulated TRACE --measured TRACE [-o DIR]`: a simulated
// Trace against a measured one of the same Schedule (ops matched by rank and
// op index).
//
// DIR/validation.json (proto/validation.proto):
//   step_time_error   (simulated - measured) / measured of the traces' step times
//   kinds             per kind of op (compute by phase, send, recv, each
//                     collective kind): busy time summed over every op of the
//                     kind on every rank, each side, and its relative error
//   per_rank          each rank's busy time (the union of its ops' intervals
//                     over all streams) and idle time (step time - busy), each side
// DIR/timeline.csv, one row per matched op (memory ops included), each side's
// times measured from that trace's earliest op start, so the two timelines
// are aligned at their beginnings:
//   rank,op,stream,kind,simulated_start_s,simulated_end_s,measured_start_s,measured_end_s
// plots/validation.py draws both.
//
// Traces of different schedules (rank counts, or ops that differ in presence,
// kind, phase, collective, peer, group or size) are an InputError naming both
// files and the first difference.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/trace.pb.h"
#include "schedule/trace_parts.h"
#include "proto/validation.pb.h"

namespace eppsim {

struct TimelineRow {
  std::uint32_t rank = 0;
  std::uint32_t op = 0;
  std::string stream;
  std::string kind;  // as in validation.json's kinds; "memory" for memory ops
  std::int64_t simulated_start_ns = 0, simulated_end_ns = 0;
  std::int64_t measured_start_ns = 0, measured_end_ns = 0;
};

struct ValidationResult {
  proto::Validation validation;
  std::vector<TimelineRow> timeline;  // by rank, then op index
};

// The core: `timeline_row` gets each matched op's row, by rank then op
// index. Each trace is visited twice, a part at a time: tallied
// (traces/trace_stats.h), then joined with the other by op
// (traces/op_event_join.h). The traces' names (their files) are the
// messages' and validation.json's.
proto::Validation validate_traces(const TraceParts& simulated, const TraceParts& measured,
                                  const std::function<void(const TimelineRow&)>& timeline_row);
// Traces in memory, the rows kept.
ValidationResult validate_traces(const proto::Trace& simulated, const proto::Trace& measured,
                                 std::string_view simulated_name, std::string_view measured_name);
// `eppsim validate`: reads both traces (trace files or run directories:
// schedule/trace_file.h) a part at a time, validates them, and writes
// DIR/validation.json and DIR/timeline.csv (its rows as the ops are matched),
// each atomically, neither when the traces are bad input.
proto::Validation validate_trace_files(const std::filesystem::path& simulated, const std::filesystem::path& measured,
                                       const std::filesystem::path& dir);

// DIR/validation.json and DIR/timeline.csv of a result in memory, each written atomically.
void write_validation(const ValidationResult& result, const std::filesystem::path& dir);
// A few lines for the terminal: step times and error, the per-kind errors.
std::string validation_summary(const proto::Validation& validation);

}  // namespace eppsim
