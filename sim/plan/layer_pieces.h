#pragma once
// Compute ops priced by the scenario's cost model, and a layer's pass as
// DeepSpeed-Ulysses runs it: pieces of the layer with the all-to-alls between
// them, for every planner that splits chunks over a sequence-parallel group.
//
// Ulysses, per layer over an SP group of degree d > 1 (sequence_parallel_cost.h
// for the sizes):
//   forward / recompute  PRE_ATTENTION, all-to-all of Q+K+V, ATTENTION,
//                        all-to-all of the output, POST_ATTENTION
//   backward             POST_ATTENTION, all-to-all of d(output), ATTENTION,
//                        all-to-all of dQ+dK+dV, PRE_ATTENTION
// Degree 1 has nothing between the parts: a pass over several layers is one
// LAYER_WHOLE op.
#include <cstdint>
#include <span>
#include <vector>

#include "models/chunk.h"
#include "models/cost_model.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/plan_context.h"
#include "proto/schedule.pb.h"

namespace eppsim {

// The compute op of `pass` over `segments` through layers first_layer ..
// first_layer + layer_count - 1 (`part` of each), with the LM head when
// `lm_head`, on a chunk split as `split` says: flops, memory traffic and the
// estimated duration are this rank's share (ComputeCostModel).
proto::ComputeOp priced_compute_op(const PlanContext& scenario, Pass pass, std::uint32_t stage,
                                   std::uint32_t chunk, std::uint32_t first_layer, std::uint32_t layer_count,
                                   bool lm_head, std::span<const Segment> segments, const WorkSplit& split = {},
                                   LayerPart part = LayerPart::Whole);

// What runs on the compute stream, in order: a compute op, then, when
// `all_to_all_bytes` > 0, an all-to-all over `all_to_all_group`.
struct LayerPiece {
  static constexpr std::uint32_t kNotShared = ~0u;
  proto::ComputeOp op;
  std::uint32_t all_to_all_group = 0;
  std::uint64_t all_to_all_bytes = 0;
  // The op's index in the Schedule's shared_computes, once emit_pieces has
  // listed it: the ranks of a group that emit the same pieces share it.
  std::uint32_t shared = kNotShared;
};

// An SP group of `degree` ranks (`group` in the Schedule) running a chunk.
struct UlyssesGroup {
  std::uint32_t group = 0;
  std::uint32_t degree = 1;
  WorkSplit split;  // the chunk's split (SEQUENCE_PARALLEL over `group`)
};

// One layer's pass, as above: one LAYER_WHOLE piece at degree 1, else three.
// `lm_head`: the layer carries the LM head (the model's last layer).
std::vector<LayerPiece> ulysses_layer_pieces(const PlanContext& scenario, Pass pass, std::uint32_t stage,
                                             std::uint32_t chunk, std::uint32_t layer, bool lm_head,
                                             std::span<const Segment> segments, const UlyssesGroup& sp);

// A stage's pass over layers first_layer .. first_layer + layer_count - 1: at
// degree 1 one LAYER_WHOLE op; else each layer's pieces, in the pass's order
// (backward: the last layer first). `lm_head` goes with the stage's last layer.
std::vector<LayerPiece> ulysses_stage_pieces(const PlanContext& scenario, Pass pass, std::uint32_t stage,
                                             std::uint32_t chunk, std::uint32_t first_layer, std::uint32_t layer_count,
                                             bool lm_head, std::span<const Segment> segments, const UlyssesGroup& sp);

// Appends `pieces` to `stream` of `rank`, the first after `deps`; returns the
// last op (the last piece's all-to-all when it has one). Lists each piece's
// work in the builder's shared computes the first time (LayerPiece::shared).
OpIndex emit_pieces(ScheduleBuilder& builder, std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps,
                    std::span<LayerPiece> pieces);

// The summed FLOPs of the pieces' compute ops (this rank's share).
double pieces_flops(std::span<const LayerPiece> pieces);

}  // namespace eppsim
