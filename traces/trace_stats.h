#pragma once
// What the trace tools (eppsim validate, eppsim diff, rank timelines) compute
// from a Trace's events: events by op, kind labels, busy time as a union of
// intervals.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/trace.pb.h"
#include "schedule/trace_events.h"

namespace eppsim {

using OpKey = std::pair<std::uint32_t, std::uint32_t>;  // (rank, op index)

// The events of a trace by (rank, op). Throws InputError "NAME: events: ..."
// for a rank outside the trace or an op that appears twice.
std::map<OpKey, OpEventRef> events_by_op(const proto::Trace& trace, std::string_view name);

// The first field in which two events of the same op differ (kind, phase,
// collective, peer, group, size_bytes), as "FIELD a vs b"; empty when none.
std::string event_difference(OpEventRef a, OpEventRef b);

// The kind label of an event: "compute/forward", "send", "collective/all-reduce", "memory", ...
std::string op_kind_label(OpEventRef event);
// Orders kind labels: compute by phase, send, recv, collectives by kind, memory.
std::pair<int, int> op_kind_order(OpEventRef event);

// The earliest start of any event (0 for an empty trace).
std::int64_t earliest_start_ns(const proto::Trace& trace);

// Total length of the union of [start, end) intervals.
std::int64_t union_ns(std::vector<std::pair<std::int64_t, std::int64_t>> spans);

// Busy time per rank: the union of the rank's non-memory events' intervals
// over every stream; the trace's busy figures (RankBusy.busy_ns, the same
// union counted as the ops ran) when it lists them.
std::vector<std::int64_t> busy_ns_per_rank(const proto::Trace& trace);

}  // namespace eppsim
