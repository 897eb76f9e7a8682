#pragma once
// Each rank's step as a sequence of states: what the rank was doing at every
// instant from 0 to the step's end. A rank computes while any of its compute
// ops runs (recompute when that op recomputes), communicates when only
// communication runs (exposed communication), and is idle otherwise. Summed,
// the states are the report's breakdown per rank (compute, recompute,
// communication, bubble). `eppsim export timeline TRACE -o rank_timeline.csv`.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/trace.pb.h"
#include "schedule/trace_parts.h"

namespace eppsim {

enum class RankState : std::uint8_t { Compute, Recompute, Communication, Idle };
std::string_view rank_state_name(RankState state);  // "compute", "recompute", "communication", "idle"

struct RankInterval {
  std::uint32_t rank = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  RankState state = RankState::Idle;
};

// Per rank in order (the ranks whose events the trace lists: all but in a
// trace of ranks of interest, schedule/trace_events.h), its intervals in time order, adjacent ones of one state
// merged, covering [0, step end) exactly (step end: the trace's step_time_ns,
// or its latest event end when that is later).
// Calls `visit` for each interval, in the order above; holds two edges (16
// bytes each) per compute or communication event, and a part of the trace at
// a time.
void for_each_rank_interval(const TraceParts& trace, const std::function<void(const RankInterval&)>& visit);
// What that holds per byte of a trace file (an event takes some 25 bytes
// there), for TraceFile's memory guard.
inline constexpr double kRankTimelineBytesPerTraceByte = 1.5;
std::vector<RankInterval> rank_timeline(const proto::Trace& trace);

// rank,start_s,end_s,state (seconds with 9 decimals, as traces/csv_export.h);
// the file is written as the intervals come, atomically.
std::string rank_timeline_csv(const TraceParts& trace);
void write_rank_timeline_csv(const TraceParts& trace, const std::filesystem::path& path);

}  // namespace eppsim
