#include "sim/plan/layer_pieces.h"

#include <stdexcept>

#include <fmt/format.h>

#include "models/sequence_parallel_cost.h"
#include "schedule/compute_segments.h"
#include "schedule/executor/simulated_ns.h"

namespace eppsim {

namespace {

proto::Phase phase_of(Pass pass) {
  return pass == Pass::Forward ? proto::FORWARD : pass == Pass::Backward ? proto::BACKWARD : proto::RECOMPUTE;
}

proto::LayerPart to_proto(LayerPart part) {
  switch (part) {
    case LayerPart::PreAttention: return proto::PRE_ATTENTION;
    case LayerPart::Attention: return proto::ATTENTION;
    case LayerPart::PostAttention: return proto::POST_ATTENTION;
    case LayerPart::Whole: break;
  }
  return proto::LAYER_WHOLE;
}

std::uint64_t new_tokens(std::span<const Segment> segments) {
  std::uint64_t tokens = 0;
  for (const auto& s : segments) tokens += s.tokens;
  return tokens;
}

}  // namespace

proto::ComputeOp priced_compute_op(const PlanContext& sc, Pass pass, std::uint32_t stage, std::uint32_t chunk,
                                   std::uint32_t first_layer, std::uint32_t layer_count, bool lm_head,
                                   std::span<const Segment> segments, const WorkSplit& split, LayerPart part) {
  const ChunkWork work{segments, layer_count, first_layer == 0, lm_head};
  // One pricing gives FLOPs, traffic and time: the cost model's compute_time,
  // which the engines use, is this same call's time.
  const ComputeCost cost = sc.cost->compute_cost(ComputeWork{pass, work, part, split.shards});
  proto::ComputeOp op;
  op.set_phase(phase_of(pass));
  op.set_stage(stage);
  op.set_chunk(chunk);
  op.set_first_layer(first_layer);
  op.set_layer_count(layer_count);
  for (const auto& seg : segments) add_segment(op, seg);
  op.set_flops(cost.flops.total());
  op.set_memory_traffic_bytes(cost.memory_traffic.count);
  op.set_estimated_duration_ns(to_ns(cost.time.value, [&] {
    const char* pass_name = pass == Pass::Forward ? "forward" : pass == Pass::Backward ? "backward" : "recompute";
    return fmt::format("{}: plan: the {} compute of stage {}, chunk {}, layers {}-{}", sc.source, pass_name,
                       stage, chunk, first_layer, first_layer + layer_count - 1);
  }));
  op.set_includes_lm_head(lm_head);
  split.apply(op);
  op.set_layer_part(to_proto(part));
  return op;
}

std::vector<LayerPiece> ulysses_layer_pieces(const PlanContext& sc, Pass pass, std::uint32_t stage,
                                             std::uint32_t chunk, std::uint32_t layer, bool lm_head,
                                             std::span<const Segment> segments, const UlyssesGroup& sp) {
  auto compute = [&](LayerPart part) {
    return priced_compute_op(sc, pass, stage, chunk, layer, 1, lm_head, segments, sp.split, part);
  };
  if (sp.degree <= 1) return {LayerPiece{compute(LayerPart::Whole), 0, 0}};
  const auto bytes = ulysses_layer_exchanges(sc.model, new_tokens(segments), sp.degree, pass);
  if (pass == Pass::Backward) {
    return {LayerPiece{compute(LayerPart::PostAttention), sp.group, bytes[0].count},
            LayerPiece{compute(LayerPart::Attention), sp.group, bytes[1].count},
            LayerPiece{compute(LayerPart::PreAttention), 0, 0}};
  }
  return {LayerPiece{compute(LayerPart::PreAttention), sp.group, bytes[0].count},
          LayerPiece{compute(LayerPart::Attention), sp.group, bytes[1].count},
          LayerPiece{compute(LayerPart::PostAttention), 0, 0}};
}

std::vector<LayerPiece> ulysses_stage_pieces(const PlanContext& sc, Pass pass, std::uint32_t stage,
                                             std::uint32_t chunk, std::uint32_t first_layer, std::uint32_t layer_count,
                                             bool lm_head, std::span<const Segment> segments, const UlyssesGroup& sp) {
  if (layer_count == 0) return {};
  if (sp.degree <= 1) {
    return {LayerPiece{priced_compute_op(sc, pass, stage, chunk, first_layer, layer_count, lm_head, segments, sp.split),
                       0, 0}};
  }
  std::vector<LayerPiece> pieces;
  pieces.reserve(3 * layer_count);
  for (std::uint32_t i = 0; i < layer_count; ++i) {
    const std::uint32_t k = pass == Pass::Backward ? layer_count - 1 - i : i;
    const bool head = lm_head && k + 1 == layer_count;
    for (auto& p : ulysses_layer_pieces(sc, pass, stage, chunk, first_layer + k, head, segments, sp)) {
      pieces.push_back(std::move(p));
    }
  }
  return pieces;
}

OpIndex emit_pieces(ScheduleBuilder& b, std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps,
                    std::span<LayerPiece> pieces) {
  if (pieces.empty()) throw std::logic_error("emit_pieces: no pieces");
  OpIndex last = 0;
  bool first = true;
  for (auto& piece : pieces) {
    if (piece.shared == LayerPiece::kNotShared) piece.shared = b.share(piece.op);
    last = b.compute_shared(rank, stream, first ? deps : std::span<const OpIndex>(), piece.shared);
    first = false;
    if (piece.all_to_all_bytes > 0) {
      last = b.collective(rank, stream, {}, proto::ALL_TO_ALL, piece.all_to_all_group, piece.all_to_all_bytes);
    }
  }
  return last;
}

double pieces_flops(std::span<const LayerPiece> pieces) {
  double flops = 0.0;
  for (const auto& p : pieces) flops += p.op.flops();
  return flops;
}

}  // namespace eppsim
