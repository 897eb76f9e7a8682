#include "sim/plan/zero3_layers.h"

#include <array>
#include <numeric>

#include <fmt/format.h>

#include "models/compute_cost.h"
#include "sim/engine/network_model.h"

namespace eppsim {

proto::ComputeOp layer_compute_op(const ResolvedScenario& sc, Pass pass, std::uint32_t chunk, std::uint32_t shards,
                                  std::span<const Segment> segments, std::uint32_t layer) {
  const bool last = layer + 1 == sc.model.layers;
  const ChunkWork work{segments, 1, layer == 0, last};
  const ComputeCost cost = sc.compute_cost->cost(pass, work);
  proto::ComputeOp op;
  op.set_phase(pass == Pass::Forward ? proto::FORWARD : pass == Pass::Backward ? proto::BACKWARD : proto::RECOMPUTE);
  op.set_stage(0);
  op.set_chunk(chunk);
  op.set_first_layer(layer);
  op.set_layer_count(1);
  for (const auto& seg : segments) {
    auto* s = op.add_segments();
    s->set_tokens(seg.tokens);
    s->set_context_tokens(seg.context_tokens);
  }
  op.set_flops(cost.flops.total() / shards);
  op.set_memory_traffic_bytes(cost.memory_traffic.count / shards);
  op.set_estimated_duration_ns(static_cast<std::int64_t>(cost.time.value / shards * 1e9 + 0.5));
  op.set_includes_lm_head(last);
  op.set_shards(shards);
  return op;
}

Zero3Setup add_zero3(ScheduleBuilder& builder, std::uint32_t world_size) {
  Zero3Setup s;
  s.compute = builder.stream("compute");
  s.gather = builder.stream("zero-gather");
  s.reduce = builder.stream("zero-reduce");
  s.world_size = world_size;
  std::vector<std::uint32_t> all(world_size);
  std::iota(all.begin(), all.end(), 0u);
  s.gather_group = builder.add_group(fmt::format("zero-3 weight gathers ({} ranks)", world_size), all);
  s.reduce_group = builder.add_group(fmt::format("zero-3 gradient reduce-scatters ({} ranks)", world_size), all);
  return s;
}

Zero3LayerProgram::Zero3LayerProgram(ScheduleBuilder& builder, std::uint32_t rank, const Zero3Setup& setup,
                                     std::uint64_t model_weight_bytes, std::uint32_t layers)
    : builder_(builder),
      rank_(rank),
      setup_(setup),
      layer_weight_bytes_(model_weight_bytes / std::max<std::uint32_t>(layers, 1)) {}

void Zero3LayerProgram::visit(std::span<const LayerPiece> pieces, bool reduce_gradients) {
  std::optional<OpIndex> gathered;
  if (setup_.world_size > 1) {
    std::vector<OpIndex> deps;
    if (ended_[0]) deps.push_back(*ended_[0]);  // the buffer it fills is free again
    gathered = builder_.collective(rank_, setup_.gather, deps, proto::ALL_GATHER, setup_.gather_group,
                                   layer_weight_bytes_ / setup_.world_size);
  }
  std::optional<OpIndex> end = gathered;
  bool first = true;
  for (const auto& piece : pieces) {
    std::vector<OpIndex> deps;
    if (first && gathered) deps.push_back(*gathered);
    first = false;
    end = builder_.compute(rank_, setup_.compute, deps, piece.op);
    if (piece.all_to_all_bytes > 0) {
      end = builder_.collective(rank_, setup_.compute, {}, proto::ALL_TO_ALL, piece.all_to_all_group,
                                piece.all_to_all_bytes);
    }
    last_compute_ = end;
  }
  if (reduce_gradients && setup_.world_size > 1) {
    std::vector<OpIndex> deps;
    if (end) deps.push_back(*end);
    last_reduce_ = builder_.collective(rank_, setup_.reduce, deps, proto::REDUCE_SCATTER, setup_.reduce_group,
                                      layer_weight_bytes_);
  }
  ended_[0] = ended_[1];
  ended_[1] = end;
}

std::vector<OpIndex> Zero3LayerProgram::tail() const {
  std::vector<OpIndex> out;
  if (last_compute_) out.push_back(*last_compute_);
  if (last_reduce_) out.push_back(*last_reduce_);
  if (ended_[1] && !last_compute_) out.push_back(*ended_[1]);
  return out;
}

Zero3LayerSeconds zero3_layer_seconds(const ResolvedScenario& sc, std::uint64_t model_weight_bytes,
                                      std::uint32_t layers) {
  const std::uint32_t n = sc.usable_gpus();
  Zero3LayerSeconds out;
  if (n <= 1) return out;
  std::vector<std::uint32_t> node_of_rank(n);
  for (std::uint32_t r = 0; r < n; ++r) node_of_rank[r] = sc.node_of_rank(r);
  const SimpleClusterNetwork network(sc.cluster.intra_node, sc.cluster.inter_node, node_of_rank);
  std::vector<std::uint32_t> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0u);
  const std::uint64_t layer_bytes = model_weight_bytes / std::max<std::uint32_t>(layers, 1);
  out.gather = network.collective_time(proto::ALL_GATHER, proto::ALGORITHM_AUTO, ranks, Bytes(layer_bytes / n)).value;
  out.reduce_scatter =
      network.collective_time(proto::REDUCE_SCATTER, proto::ALGORITHM_AUTO, ranks, Bytes(layer_bytes)).value;
  return out;
}

}  // namespace eppsim
