#pragma once
// Small Schedules the runtime's tests run (built with tests/traces's
// HandSchedule, plus the header's tiny model and real compute shapes so that
// the kernels of runtime/cpu/ can run them too), and the sanity checks every
// measured Trace must pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "tests/schedule/schedule_fixture.h"
#include "schedule/program_ops.h"
#include "schedule/schedule_schema.h"
#include "proto/trace.pb.h"
#include "schedule/trace_events.h"

namespace eppsim::runtime::testing {

using eppsim::testing::HandSchedule;

// A transformer small enough that a layer of 32 tokens takes microseconds.
inline void set_tiny_model(proto::Schedule& s) {
  auto* h = s.mutable_header();
  h->set_schema_version(kScheduleSchemaVersion);
  h->set_producer("runtime tests");
  auto* m = h->mutable_model();
  m->set_name("tiny");
  m->set_layers(2);
  m->set_hidden_size(64);
  m->set_attention_heads(4);
  m->set_kv_heads(4);
  m->set_ffn_hidden_size(256);
  m->set_vocab_size(128);
  m->set_position_embeddings(1024);
  m->set_bytes_per_element(4);
}

// The work of one layer of `stage` over 32 tokens.
inline proto::ComputeOp layer_work(proto::Phase phase, std::uint32_t stage, std::uint32_t chunk) {
  proto::ComputeOp c;
  c.set_phase(phase);
  c.set_stage(stage);
  c.set_chunk(chunk);
  c.set_first_layer(stage);
  c.set_layer_count(1);
  c.add_segment_tokens(32);
  c.add_segment_context_tokens(0);
  return c;
}

// A COMPUTE op running it.
inline std::uint32_t layer(HandSchedule& h, std::uint32_t rank, std::uint32_t stream, proto::Phase phase,
                           std::uint32_t stage, std::uint32_t chunk, std::initializer_list<std::uint32_t> deps = {}) {
  return h.compute(rank, stream, deps, layer_work(phase, stage, chunk));
}

enum Stream : std::uint32_t { kCompute = 0, kSend = 1, kRecv = 2 };

// Two pipeline stages, two micro-batches (forwards, then backwards), with
// activations and gradients of 256 KiB between them (past MPI's eager limit)
// and the stages' activation memory allocated and freed.
inline proto::Schedule pipeline_schedule() {
  HandSchedule h(2, {"compute", "send", "recv"});
  set_tiny_model(h.schedule());
  constexpr std::uint64_t kBytes = 256 * 1024;
  // Stage 0.
  h.memory(0, kCompute, true, 1 << 20);
  const auto f0 = layer(h, 0, kCompute, proto::FORWARD, 0, 0);
  h.send(0, kSend, 1, kBytes, 0, {f0});
  const auto f1 = layer(h, 0, kCompute, proto::FORWARD, 0, 1);
  h.send(0, kSend, 1, kBytes, 1, {f1});
  const auto g0 = h.recv(0, kRecv, 1, kBytes, 100);
  const auto g1 = h.recv(0, kRecv, 1, kBytes, 101);
  layer(h, 0, kCompute, proto::BACKWARD, 0, 0, {g0});
  const auto b1 = layer(h, 0, kCompute, proto::BACKWARD, 0, 1, {g1});
  h.memory(0, kCompute, false, 1 << 20, {b1});
  // Stage 1.
  h.memory(1, kCompute, true, 1 << 20);
  const auto a0 = h.recv(1, kRecv, 0, kBytes, 0);
  const auto a1 = h.recv(1, kRecv, 0, kBytes, 1);
  layer(h, 1, kCompute, proto::FORWARD, 1, 0, {a0});
  const auto d0 = layer(h, 1, kCompute, proto::BACKWARD, 1, 0);
  h.send(1, kSend, 0, kBytes, 100, {d0});
  layer(h, 1, kCompute, proto::FORWARD, 1, 1, {a1});
  const auto d1 = layer(h, 1, kCompute, proto::BACKWARD, 1, 1);
  h.send(1, kSend, 0, kBytes, 101, {d1});
  h.memory(1, kCompute, false, 1 << 20, {d1});
  return h.schedule();
}

// Data parallelism on two ranks: forward, backward, the gradients' all-reduce
// (1 MiB) overlapping a second backward, an all-gather on a group that lists
// the ranks the other way round, and the optimizer.
inline proto::Schedule allreduce_schedule() {
  HandSchedule h(2, {"compute", "comm"});
  set_tiny_model(h.schedule());
  const auto dp = h.group({0, 1});
  const auto reversed = h.group({1, 0});
  for (std::uint32_t r = 0; r < 2; ++r) {
    layer(h, r, 0, proto::FORWARD, 0, 0);
    const auto b0 = layer(h, r, 0, proto::BACKWARD, 0, 0);
    const auto ar = h.collective(r, 1, dp, 1 << 20, proto::ALL_REDUCE, {b0});
    layer(h, r, 0, proto::BACKWARD, 0, 1);
    const auto ag = h.collective(r, 1, reversed, 64 * 1024, proto::ALL_GATHER, {ar});
    auto optimizer = layer_work(proto::OPTIMIZER, 0, 0);
    optimizer.set_memory_traffic_bytes(1 << 20);
    h.compute(r, 0, {ar, ag}, optimizer);
  }
  return h.schedule();
}

// Three ranks; the all-reduce of group {0, 1, 2} after each rank's layer,
// rank 2 running two layers before it.
inline proto::Schedule three_rank_allreduce() {
  HandSchedule h(3);
  set_tiny_model(h.schedule());
  const auto all = h.group({0, 1, 2});
  for (std::uint32_t r = 0; r < 3; ++r) {
    const auto f = layer(h, r, 0, proto::FORWARD, 0, 0);
    const auto f2 = r == 2 ? layer(h, r, 0, proto::FORWARD, 0, 1, {f}) : f;
    h.collective(r, 1, all, 1 << 20, proto::ALL_REDUCE, {f2});
  }
  return h.schedule();
}

// Rank 1 waits for a message rank 0 never sends.
inline proto::Schedule lonely_recv_schedule() {
  HandSchedule h(2, {"compute", "comm"});
  set_tiny_model(h.schedule());
  layer(h, 0, 0, proto::FORWARD, 0, 0);
  const auto r = h.recv(1, 1, 0, 4096, 7);
  layer(h, 1, 0, proto::FORWARD, 1, 0, {r});
  return h.schedule();
}

// The checks every measured trace of `schedule` must pass: every op present
// once with its kind, ends after starts, stream order and dependencies
// respected on each rank (exactly: one clock), and across ranks (within
// `tolerance_ns`, the clock offsets' uncertainty) a RECV ends after its SEND
// started and the SEND after its RECV started (rendezvous), and a collective
// ends after every member started it.
inline void expect_sane_trace(const proto::Schedule& schedule, const proto::Trace& trace, std::int64_t tolerance_ns = 2'000'000) {
  ASSERT_EQ(trace.num_ranks(), schedule.num_ranks());
  std::map<std::pair<std::uint32_t, std::uint32_t>, OpEventRef> events;
  std::int64_t first = INT64_MAX, last = INT64_MIN;
  for (const OpEventRef e : events_of(trace)) {
    EXPECT_TRUE(events.emplace(std::pair(e.rank(), e.op()), e).second) << "rank " << e.rank() << " op " << e.op() << " twice";
    EXPECT_LE(e.start_ns(), e.end_ns()) << "rank " << e.rank() << " op " << e.op();
    first = std::min(first, e.start_ns());
    last = std::max(last, e.end_ns());
  }
  EXPECT_EQ(first, 0);
  EXPECT_EQ(trace.step_time_ns(), last - first);
  EXPECT_GT(trace.step_time_ns(), 0);
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<OpEventRef>> sends, recvs;
  std::map<std::uint32_t, std::vector<std::vector<OpEventRef>>> collectives;  // group -> per rank
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    std::map<std::uint32_t, OpEventRef> stream_last;
    std::map<std::uint32_t, std::uint32_t> issued;  // group -> collectives so far on this rank
    for (const OpView op : ops_of(schedule, r)) {
      const std::uint32_t i = op.index();
      const auto it = events.find({r, i});
      ASSERT_NE(it, events.end()) << "rank " << r << " op " << i << " missing from the trace";
      const OpEventRef e = it->second;
      EXPECT_EQ(e.kind(), event_kind(op)) << "rank " << r << " op " << i;
      if (const auto prev = stream_last.find(op.stream()); prev != stream_last.end()) {
        EXPECT_GE(e.start_ns(), prev->second.end_ns())
            << "rank " << r << " op " << i << " starts before op " << prev->second.op() << " of its stream ended";
      }
      stream_last.insert_or_assign(op.stream(), e);
      for (const auto d : op.deps()) {
        EXPECT_GE(e.start_ns(), events.at({r, d}).end_ns()) << "rank " << r << " op " << i << " starts before its dep " << d;
      }
      if (op.is_send()) sends[{r, op.peer(), op.tag()}].push_back(e);
      if (op.is_recv()) recvs[{op.peer(), r, op.tag()}].push_back(e);
      if (op.is_collective()) {
        auto& per_rank = collectives[op.group()];
        per_rank.resize(schedule.num_ranks());
        per_rank[r].push_back(e);
      }
    }
  }
  for (const auto& [key, rs] : recvs) {
    const auto& ss = sends[key];
    ASSERT_EQ(ss.size(), rs.size());
    for (std::size_t k = 0; k < rs.size(); ++k) {
      EXPECT_GE(rs[k].end_ns() + tolerance_ns, ss[k].start_ns()) << "a RECV ended before its SEND started";
      EXPECT_GE(ss[k].end_ns() + tolerance_ns, rs[k].start_ns()) << "a SEND ended before its RECV started";
    }
  }
  for (const auto& [group, per_rank] : collectives) {
    const auto& members = schedule.groups(static_cast<int>(group)).ranks();
    const std::size_t instances = per_rank[members[0]].size();
    for (std::size_t k = 0; k < instances; ++k) {
      for (const auto a : members) {
        for (const auto b : members) {
          EXPECT_GE(per_rank[a][k].end_ns() + tolerance_ns, per_rank[b][k].start_ns())
              << "collective " << k << " of group " << group << " ended on rank " << a << " before rank " << b << " started it";
        }
      }
    }
  }
}

}  // namespace eppsim::runtime::testing
