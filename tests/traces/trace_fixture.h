#pragma once
// Small hand-written Traces for the trace tools' tests (validate, diff, rank
// timelines, reading traces).
#include <cstdint>
#include <string>

#include "traces/trace.pb.h"

namespace eppsim::testing {

inline proto::OpEvent* add(proto::Trace& t, std::uint32_t rank, std::uint32_t op, std::uint32_t stream, proto::OpKind kind,
                    std::int64_t start_ns, std::int64_t end_ns) {
  auto* e = t.add_events();
  e->set_rank(rank);
  e->set_op(op);
  e->set_stream(stream);
  e->set_kind(kind);
  e->set_start_ns(start_ns);
  e->set_end_ns(end_ns);
  return e;
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
  add(t, 0, 0, 0, proto::COMPUTE, at(0), at(100))->set_phase(proto::FORWARD);
  auto* send = add(t, 0, 1, 1, proto::SEND, at(100), at(120));
  send->set_peer(1);
  send->set_size_bytes(4096);
  add(t, 0, 2, 0, proto::COMPUTE, at(150), at(350))->set_phase(proto::BACKWARD);
  auto* ar0 = add(t, 0, 3, 1, proto::COLLECTIVE, at(350), at(410));
  ar0->set_collective(proto::ALL_REDUCE);
  ar0->set_size_bytes(1 << 20);
  auto* recv = add(t, 1, 0, 1, proto::RECV, at(100), at(120));
  recv->set_size_bytes(4096);
  add(t, 1, 1, 0, proto::COMPUTE, at(120), at(220))->set_phase(proto::FORWARD);
  auto* ar1 = add(t, 1, 2, 1, proto::COLLECTIVE, at(200), at(260));
  ar1->set_collective(proto::ALL_REDUCE);
  ar1->set_size_bytes(1 << 20);
  add(t, 1, 3, 0, proto::MEMORY, at(260), at(260));
  t.set_step_time_ns(static_cast<std::int64_t>(410 * scale));
  return t;
}

}  // namespace eppsim::testing
