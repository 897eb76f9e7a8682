#pragma once
// How every planner estimates work before its Schedule exists: the scenario's
// cost model pricing a chunk as the Schedule will run it, so a plan is chosen
// by the same prices the engines time it with.
//
// A chunk's model time on one GPU of a sequence-parallel group of degree d:
//   forward + backward (+ a recompute forward) of every layer over all the
//   chunk's segments, one compute per pass (ComputeWork over the whole model,
//   embedding and LM head included, this GPU's 1/d share), then, for d > 1,
//   the two all-to-alls per layer and pass the Schedule runs
//   (sequence_parallel_cost.h's ulysses_layer_time), over ranks 0..d-1: a
//   node-aligned group, as the planners place every group.
// Replica balancing (the pipelines' data-parallel split) weighs each sequence
// by one whole-model forward of it on one GPU.
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "models/chunk.h"
#include "models/cost_model.h"
#include "models/transformer_spec.h"
#include "sim/plan/packing.h"

namespace eppsim {

class PlanEstimate {
 public:
  // `model` and `cost` must outlive the estimate.
  PlanEstimate(const TransformerSpec& model, const CostModel& cost) : model_(model), cost_(cost) {}

  // The chunk's model time, as above; `recompute` adds the recompute forward
  // (and its all-to-alls). Cached per (degree, recompute, segments).
  double chunk_seconds(std::span<const Segment> segments, std::uint32_t degree, bool recompute = false) const;
  double segment_seconds(const Segment& segment, std::uint32_t degree) const {
    return chunk_seconds(std::span<const Segment>(&segment, 1), degree);
  }
  // One layer's forward over `segments` on one GPU of a degree-d group: no
  // embedding, no LM head, no all-to-all.
  double layer_forward_seconds(std::span<const Segment> segments, std::uint32_t degree) const;
  // The recompute of `part` of `layers` layers over `segments` on one GPU of a
  // degree-d group (no all-to-all: a part after attention needs none), e.g.
  // FlexSP's checkpointed MLP blocks. Cached per (degree, part, layers, segments).
  double part_recompute_seconds(std::span<const Segment> segments, std::uint32_t degree, LayerPart part,
                                std::uint32_t layers) const;
  // Sequences to `replicas` data-parallel replicas, longest processing time
  // first, each weighed by one whole-model forward on one GPU.
  Bins balance_replicas(std::span<const std::uint64_t> lengths, std::uint32_t replicas) const;

 private:
  const TransformerSpec& model_;
  const CostModel& cost_;
  // (degree, recompute, tokens and context of each segment) -> seconds
  mutable std::map<std::vector<std::uint64_t>, double> chunk_cache_;
  // (degree, part, layers, tokens and context of each segment) -> seconds
  mutable std::map<std::vector<std::uint64_t>, double> part_cache_;
};

}  // namespace eppsim
