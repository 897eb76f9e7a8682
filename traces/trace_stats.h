#pragma once
// What the trace tools (eppsim validate, eppsim diff) compute from a Trace's
// events: kind labels, the fields two events of one op differ in, busy time as
// a union of intervals, each rank's events (traces/op_event_join.h matches
// two traces' events by op).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/trace.pb.h"
#include "schedule/trace_events.h"
#include "schedule/trace_parts.h"

namespace eppsim {

// The first field in which two events of the same op differ (kind, phase,
// collective, peer, group, size_bytes), as "FIELD a vs b"; empty when none.
std::string event_difference(const OpEventFields& a, const OpEventFields& b);

// The kind label of an event: "compute/forward", "send", "collective/all-reduce", "memory", ...
std::string op_kind_label(const OpEventFields& event);
// Orders kind labels: compute by phase, send, recv, collectives by kind, memory.
std::pair<int, int> op_kind_order(const OpEventFields& event);

// Total length of the union of [start, end) intervals.
std::int64_t union_ns(std::vector<std::pair<std::int64_t, std::int64_t>> spans);

// What one visit of a trace's parts gives the trace tools.
struct TraceTally {
  // The earliest start of any event (0 for a trace without events).
  std::int64_t earliest_start_ns = 0;
  // Per rank of the trace: its events.
  std::vector<std::uint64_t> events_per_rank;
  // Per rank: busy time, the union of the rank's non-memory events' intervals
  // over every stream; the trace's busy figures (RankBusy.busy_ns, the same
  // union counted as the ops ran) when it lists them. Held: an interval (16
  // bytes) per event of a trace without busy figures.
  std::vector<std::int64_t> busy_ns;
};

// Tallies `trace`, calling `each(event)` for every event on the way (when
// given). InputError "NAME: events: rank R op O is outside the trace's N
// ranks" for an event of a rank past num_ranks.
TraceTally tally_trace(const TraceParts& trace, const std::function<void(const OpEventFields&)>& each = {});
// What a tally holds per byte of a trace file (an interval of 16 bytes per
// event of some 25 bytes there), for TraceFile's memory guard.
inline constexpr double kTraceTallyBytesPerTraceByte = 0.7;

}  // namespace eppsim
