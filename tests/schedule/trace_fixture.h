#pragma once
// Small hand-written Traces for the trace tools' tests (validate, diff, rank
// timelines, reading traces).
#include <cstdint>
#include <string>
#include <utility>

#include "proto/trace.pb.h"
#include "schedule/trace_events.h"

namespace eppsim::testing {

// Appends an event to t's op_events.
inline void add(proto::Trace& t, const OpEventFields& event) { add_event(*t.mutable_op_events(), event); }

// Removes t's last event (from every column).
inline void remove_last_event(proto::Trace& t) {
  proto::OpEvents kept;
  const TraceEvents events = events_of(t);
  for (int i = 0; i + 1 < events.size(); ++i) add_event(kept, fields_of(events[i]));
  *t.mutable_op_events() = std::move(kept);
}

// `e` as a message of Trace.events (the form of traces written before op_events).
inline proto::OpEvent event_message(const OpEventFields& e) {
  proto::OpEvent m;
  m.set_rank(e.rank);
  m.set_op(e.op);
  m.set_stream(e.stream);
  m.set_kind(e.kind);
  m.set_phase(e.phase);
  m.set_collective(e.collective);
  m.set_chunk(e.chunk);
  m.set_stage(e.stage);
  m.set_peer(e.peer);
  m.set_group(e.group);
  m.set_size_bytes(e.size_bytes);
  m.set_start_ns(e.start_ns);
  m.set_end_ns(e.end_ns);
  return m;
}

// `t` as traces were written before op_events: its events as messages in
// Trace.events, in order, and op_events empty.
inline proto::Trace in_event_messages(proto::Trace t) {
  for (const OpEventRef e : events_of(t)) *t.add_events() = event_message(fields_of(e));
  t.clear_op_events();
  return t;
}

// Two ranks: rank 0 forward [0, 100), send [100, 120), backward [150, 350);
// rank 1 recv [100, 120), forward [120, 220) overlapping an all-reduce
// [200, 260) on its comm stream; rank 0 joins the all-reduce at [350, 410).
// `scale` stretches every time and `offset` shifts them (a measured clock).
inline proto::Trace two_rank_trace(const std::string& engine, double scale = 1.0, std::int64_t offset = 0) {
  proto::Trace t;
  t.set_engine(engine);
  t.set_num_ranks(2);
  t.add_stream_names("compute");
  t.add_stream_names("comm");
  const auto at = [&](std::int64_t ns) { return offset + static_cast<std::int64_t>(ns * scale); };
  add(t, {.rank = 0, .op = 0, .stream = 0, .kind = proto::COMPUTE, .phase = proto::FORWARD, .start_ns = at(0),
          .end_ns = at(100)});
  add(t, {.rank = 0, .op = 1, .stream = 1, .kind = proto::SEND, .peer = 1, .size_bytes = 4096, .start_ns = at(100),
          .end_ns = at(120)});
  add(t, {.rank = 0, .op = 2, .stream = 0, .kind = proto::COMPUTE, .phase = proto::BACKWARD, .start_ns = at(150),
          .end_ns = at(350)});
  add(t, {.rank = 0, .op = 3, .stream = 1, .kind = proto::COLLECTIVE, .collective = proto::ALL_REDUCE,
          .size_bytes = 1 << 20, .start_ns = at(350), .end_ns = at(410)});
  add(t, {.rank = 1, .op = 0, .stream = 1, .kind = proto::RECV, .size_bytes = 4096, .start_ns = at(100),
          .end_ns = at(120)});
  add(t, {.rank = 1, .op = 1, .stream = 0, .kind = proto::COMPUTE, .phase = proto::FORWARD, .start_ns = at(120),
          .end_ns = at(220)});
  add(t, {.rank = 1, .op = 2, .stream = 1, .kind = proto::COLLECTIVE, .collective = proto::ALL_REDUCE,
          .size_bytes = 1 << 20, .start_ns = at(200), .end_ns = at(260)});
  add(t, {.rank = 1, .op = 3, .stream = 0, .kind = proto::MEMORY, .start_ns = at(260), .end_ns = at(260)});
  t.set_step_time_ns(static_cast<std::int64_t>(410 * scale));
  return t;
}

}  // namespace eppsim::testing
