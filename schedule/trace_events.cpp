#include "schedule/trace_events.h"

#include <fmt/format.h>

#include "base/errors.h"

namespace eppsim {

proto::OpKind event_kind(OpView op) {
  switch (op.code()) {
    case proto::OP_COMPUTE: return proto::COMPUTE;
    case proto::OP_SEND: return proto::SEND;
    case proto::OP_RECV: return proto::RECV;
    case proto::OP_COLLECTIVE: return proto::COLLECTIVE;
    case proto::OP_ALLOCATE:
    case proto::OP_FREE: return proto::MEMORY;
    default: return proto::OP_KIND_UNSPECIFIED;
  }
}

OpEventFields fields_of(OpEventRef e) {
  return OpEventFields{e.rank(),  e.op(),   e.stream(), e.kind(),       e.phase(),    e.collective(), e.chunk(),
                       e.stage(), e.peer(), e.group(),  e.size_bytes(), e.start_ns(), e.end_ns()};
}

void add_event(proto::OpEvents& c, const OpEventFields& e) {
  c.add_rank(e.rank);
  c.add_op(e.op);
  c.add_stream(e.stream);
  c.add_kind(e.kind);
  c.add_phase(e.phase);
  c.add_collective(e.collective);
  c.add_chunk(e.chunk);
  c.add_stage(e.stage);
  c.add_peer(e.peer);
  c.add_group(e.group);
  c.add_size_bytes(e.size_bytes);
  c.add_start_ns(e.start_ns);
  c.add_end_ns(e.end_ns);
}

void reserve_events(proto::OpEvents& c, int events) {
  const int n = c.rank_size() + events;
  c.mutable_rank()->Reserve(n);
  c.mutable_op()->Reserve(n);
  c.mutable_stream()->Reserve(n);
  c.mutable_kind()->Reserve(n);
  c.mutable_phase()->Reserve(n);
  c.mutable_collective()->Reserve(n);
  c.mutable_chunk()->Reserve(n);
  c.mutable_stage()->Reserve(n);
  c.mutable_peer()->Reserve(n);
  c.mutable_group()->Reserve(n);
  c.mutable_size_bytes()->Reserve(n);
  c.mutable_start_ns()->Reserve(n);
  c.mutable_end_ns()->Reserve(n);
}

void check_event_columns(const proto::Trace& trace, std::string_view where) {
  const auto& c = trace.op_events();
  const int n = c.rank_size();
  const auto check = [&](std::string_view field, int size) {
    if (size != n) {
      throw InputError(fmt::format("{}: op_events.{}: must have one entry per event ({}, as op_events.rank), got {}",
                                   where, field, n, size));
    }
  };
  check("op", c.op_size());
  check("stream", c.stream_size());
  check("kind", c.kind_size());
  check("phase", c.phase_size());
  check("collective", c.collective_size());
  check("chunk", c.chunk_size());
  check("stage", c.stage_size());
  check("peer", c.peer_size());
  check("group", c.group_size());
  check("size_bytes", c.size_bytes_size());
  check("start_ns", c.start_ns_size());
  check("end_ns", c.end_ns_size());
}

void convert_event_messages(proto::Trace& trace, std::string_view where) {
  if (trace.events_size() == 0) return;
  if (trace.op_events().rank_size() > 0) {
    throw InputError(fmt::format("{}: events: a trace lists its events in op_events or, as traces written before "
                                 "op_events did, in events, not both",
                                 where));
  }
  auto& columns = *trace.mutable_op_events();
  reserve_events(columns, trace.events_size());
  for (const auto& e : trace.events()) {
    add_event(columns, OpEventFields{e.rank(), e.op(), e.stream(), e.kind(), e.phase(), e.collective(), e.chunk(),
                                     e.stage(), e.peer(), e.group(), e.size_bytes(), e.start_ns(), e.end_ns()});
  }
  trace.clear_events();
}

std::vector<std::uint32_t> listed_ranks(const proto::Trace& trace) {
  if (trace.traced_ranks_size() > 0) return {trace.traced_ranks().begin(), trace.traced_ranks().end()};
  std::vector<std::uint32_t> every(trace.num_ranks());
  for (std::uint32_t r = 0; r < trace.num_ranks(); ++r) every[r] = r;
  return every;
}

ListedRanks::ListedRanks(const proto::Trace& trace) : ranks_(listed_ranks(trace)), every_(trace.traced_ranks_size() == 0) {
  if (every_) return;
  listed_.assign(trace.num_ranks(), false);
  for (const auto r : ranks_) {
    if (r < listed_.size()) listed_[r] = true;
  }
}

}  // namespace eppsim
