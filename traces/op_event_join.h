#pragma once
// Two traces' op events matched by op (rank, op index), for `eppsim diff` and
// `eppsim validate`, however large the traces: each is read a part at a time
// (schedule/trace_parts.h), in batches of ranks whose events fit half the
// memory the limit leaves (base/memory_limit.h; one batch unless the traces
// outgrow it), each batch sorted by op and walked in step. What is held is a
// record of each event of a batch (OpEventFields, 64 bytes), never a trace.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "schedule/trace_events.h"
#include "schedule/trace_parts.h"
#include "traces/trace_stats.h"

namespace eppsim {

// One side of the join: its trace, its tally (traces/trace_stats.h) and how a
// difference names it ("the base", or the file).
struct JoinSide {
  const TraceParts& trace;
  const TraceTally& tally;
  std::string_view label;
};

// Calls `matched(a, b)` for each op of both traces in (rank, op) order, up to
// the first op that one of them lacks or whose events differ
// (event_difference), and returns that difference in words ("rank 3 op 7 is
// in LABEL only", "rank 3 op 7: size_bytes 5 vs 6"); empty when both list the
// same ops alike. Both traces must have the same num_ranks. InputError
// "NAME: events: rank R op O appears twice" for an op listed twice.
// `batch_events`: the most events of both traces a batch holds (0: from the
// memory limit).
std::string join_op_events(const JoinSide& a, const JoinSide& b,
                           const std::function<void(const OpEventFields&, const OpEventFields&)>& matched,
                           std::uint64_t batch_events = 0);

}  // namespace eppsim
