#pragma once
// The name and category of an op event in the trace exports (Chrome JSON,
// traces/chrome_trace.h; Perfetto, traces/perfetto_trace.h), one place for both.
// Names: "F c3 s1" (forward of chunk 3 on stage 1), "B c3 s1", "R c3 s1",
// "optimizer c0 s1", "send->5", "recv<-4", "all-reduce g2", "memory".
// Categories: the compute phase ("forward", "backward", "recompute",
// "optimizer", "compute") or the op kind ("send", "recv", "collective",
// "memory"; "op" for an unknown kind).
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "schedule/trace_events.h"

namespace eppsim {

// Everything an event's name and category depend on: events with equal keys
// have equal names and categories, so a writer can intern names by key and
// format each distinct name once.
struct OpEventNameKey {
  proto::OpKind kind = proto::OP_KIND_UNSPECIFIED;
  int variant = 0;           // the phase (compute) or the collective kind (collective)
  std::uint32_t first = 0;   // the chunk (compute), peer (send, recv) or group (collective)
  std::uint32_t second = 0;  // the stage (compute)
  bool operator==(const OpEventNameKey&) const = default;
};

OpEventNameKey op_event_name_key(OpEventRef event);

void append_op_event_name(fmt::memory_buffer& out, const OpEventNameKey& key);
std::string op_event_name(const OpEventNameKey& key);
inline std::string op_event_name(OpEventRef event) { return op_event_name(op_event_name_key(event)); }

std::string_view op_event_category(const OpEventNameKey& key);

}  // namespace eppsim
