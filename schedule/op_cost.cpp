#include "schedule/op_cost.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "base/mix64.h"
#include "schedule/compute_segments.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

std::uint32_t shards_of(const proto::ComputeOp& c) { return c.shards() > 1 ? c.shards() : 1; }

Seconds fixed(OpView op) { return Seconds(static_cast<double>(op.fixed_duration_ns()) * 1e-9); }

}  // namespace

CommKind to_model(proto::CollectiveKind kind) {
  switch (kind) {
    case proto::ALL_REDUCE: return CommKind::AllReduce;
    case proto::ALL_GATHER: return CommKind::AllGather;
    case proto::REDUCE_SCATTER: return CommKind::ReduceScatter;
    case proto::ALL_TO_ALL: return CommKind::AllToAll;
    case proto::BROADCAST: return CommKind::Broadcast;
    default: throw std::invalid_argument(fmt::format("collective kind {} has no cost", static_cast<int>(kind)));
  }
}

CollectiveAlgorithm to_model(proto::CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case proto::RING: return CollectiveAlgorithm::Ring;
    case proto::TREE: return CollectiveAlgorithm::Tree;
    case proto::DIRECT: return CollectiveAlgorithm::Direct;
    case proto::HIERARCHICAL: return CollectiveAlgorithm::Hierarchical;
    default: return CollectiveAlgorithm::Auto;
  }
}

LayerPart to_model(proto::LayerPart part) {
  switch (part) {
    case proto::PRE_ATTENTION: return LayerPart::PreAttention;
    case proto::ATTENTION: return LayerPart::Attention;
    case proto::POST_ATTENTION: return LayerPart::PostAttention;
    default: return LayerPart::Whole;
  }
}

Pass pass_of(proto::Phase phase) {
  return phase == proto::FORWARD ? Pass::Forward : phase == proto::BACKWARD ? Pass::Backward : Pass::Recompute;
}

Seconds compute_duration(const CostModel& cost, const proto::Schedule& schedule, OpView op,
                         std::vector<Segment>& segments) {
  if (op.duration_source() == proto::DURATION_FIXED) return fixed(op);
  return compute_duration(cost, compute_of(schedule, op), segments);
}

Seconds compute_duration(const CostModel& cost, const proto::ComputeOp& c, std::vector<Segment>& segments) {
  if (c.phase() == proto::OPTIMIZER || c.phase() == proto::PHASE_UNSPECIFIED)
    return cost.optimizer_time(Bytes(c.memory_traffic_bytes()));
  read_segments(c, segments);
  ComputeWork work;
  work.pass = pass_of(c.phase());
  work.chunk = ChunkWork{segments, c.layer_count(), c.first_layer() == 0, c.includes_lm_head()};
  work.part = to_model(c.layer_part());
  work.shards = shards_of(c);
  return cost.compute_time(work);
}

bool same_compute_duration_inputs(const proto::ComputeOp& a, const proto::ComputeOp& b) {
  const auto same = [](const auto& x, const auto& y) { return std::equal(x.begin(), x.end(), y.begin(), y.end()); };
  return a.phase() == b.phase() && a.memory_traffic_bytes() == b.memory_traffic_bytes() &&
         a.layer_count() == b.layer_count() && (a.first_layer() == 0) == (b.first_layer() == 0) &&
         a.includes_lm_head() == b.includes_lm_head() && a.layer_part() == b.layer_part() &&
         shards_of(a) == shards_of(b) && same(a.segment_tokens(), b.segment_tokens()) &&
         same(a.segment_context_tokens(), b.segment_context_tokens());
}

std::uint64_t compute_duration_inputs_hash(const proto::ComputeOp& c) {
  std::uint64_t h = 0;
  const auto mix = [&h](std::uint64_t v) { h = mix64(h ^ v); };
  mix(static_cast<std::uint64_t>(c.phase()) << 32 | static_cast<std::uint32_t>(c.layer_part()));
  mix(c.memory_traffic_bytes());
  mix(std::uint64_t{c.layer_count()} << 32 | shards_of(c));
  mix(std::uint64_t{c.first_layer() == 0} << 1 | std::uint64_t{c.includes_lm_head()});
  for (const auto t : c.segment_tokens()) mix(t);
  for (const auto t : c.segment_context_tokens()) mix(t);
  return h;
}

Seconds transfer_duration(const CostModel& cost, OpView send, std::uint32_t src_rank,
                          std::uint32_t dst_rank) {
  if (send.duration_source() == proto::DURATION_FIXED) return fixed(send);
  return cost.p2p_time(src_rank, dst_rank, Bytes(send.size_bytes()));
}

Seconds collective_duration(const CostModel& cost, OpView op, std::span<const std::uint32_t> ranks) {
  if (op.duration_source() == proto::DURATION_FIXED) return fixed(op);
  return cost.collective_time(to_model(op.collective_kind()), to_model(op.algorithm()), ranks, Bytes(op.size_bytes()));
}

Seconds collective_latency(const CostModel& cost, OpView op, std::span<const std::uint32_t> ranks) {
  return cost.collective_time(to_model(op.collective_kind()), to_model(op.algorithm()), ranks, Bytes(0));
}

}  // namespace eppsim
