#pragma once
// DeepSpeed's ZeRO-3 execution, layer by layer, for planners whose ranks hold
// 1/N of every parameter (ulysses, flexsp).
//
// Before a layer runs, its weights are all-gathered over the N ranks; after its
// backward, its gradients are reduce-scattered. Gathers run on their own stream
// and prefetch: the gather of a layer visit may start as soon as the compute of
// the visit two before it has finished (two gathered-layer buffers, one in use
// and one being filled), so gathers overlap the previous layer's compute and
// only the first one of a step is exposed when the network keeps up.
// Reduce-scatters run on a third stream, so they never hold a gather back.
// A visit is one layer in one pass: a forward visits layers 0..L-1, a backward
// L-1..0. Weights are spread evenly over the layers (embedding and head
// included), so the bytes over a whole pass are the model's.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "models/chunk.h"
#include "sim/plan/layer_pieces.h"
#include "sim/plan/schedule_builder.h"
#include "traces/scenario.h"
#include "traces/schedule.pb.h"

namespace eppsim {

// The streams ("compute", "zero-gather", "zero-reduce") and the two groups
// over ranks 0..N-1 (one for gathers, one for reduce-scatters: collectives of
// one group match in program order, and the two kinds run on separate streams).
struct Zero3Setup {
  std::uint32_t compute = 0, gather = 0, reduce = 0;
  std::uint32_t gather_group = 0, reduce_group = 0;
  std::uint32_t world_size = 1;
};
Zero3Setup add_zero3(ScheduleBuilder& builder, std::uint32_t world_size);

// One rank's program under ZeRO-3. Every rank of the world group must make the
// same sequence of visits (a rank with nothing to run still gathers and
// reduces: the collectives span all N ranks).
class Zero3LayerProgram {
 public:
  // `model_weight_bytes`: the whole model's weights at training precision
  // (with one rank, nothing is gathered or reduced).
  Zero3LayerProgram(ScheduleBuilder& builder, std::uint32_t rank, const Zero3Setup& setup,
                    std::uint64_t model_weight_bytes, std::uint32_t layers);

  // One layer visit: the gather, then `pieces` on the compute stream (a layer's
  // Ulysses pieces, layer_pieces.h, or a recompute's and a backward's), then,
  // with `reduce_gradients`, the reduce-scatter of the layer's gradients.
  void visit(std::span<const LayerPiece> pieces, bool reduce_gradients);
  // The ops the step's end waits for: the last compute and the last reduce.
  std::vector<OpIndex> tail() const;

  std::uint64_t layer_weight_bytes() const { return layer_weight_bytes_; }

 private:
  ScheduleBuilder& builder_;
  std::uint32_t rank_;
  Zero3Setup setup_;
  std::uint64_t layer_weight_bytes_;
  // The op that ends each of the last two visits (its last compute, or its
  // gather when it ran nothing): the next gather reuses the older one's buffer.
  std::optional<OpIndex> ended_[2];
  std::optional<OpIndex> last_compute_, last_reduce_;
};

// The planners' estimate of one layer's ZeRO-3 gather and reduce-scatter over
// the scenario's usable ranks, priced by the scenario's cost model
// (ResolvedScenario::cost, CollectiveAlgorithm::Auto) for the whole model's
// `model_weight_bytes` spread over `layers`.
struct Zero3LayerSeconds {
  double gather = 0.0;
  double reduce_scatter = 0.0;
};
Zero3LayerSeconds zero3_layer_seconds(const ResolvedScenario& scenario, std::uint64_t model_weight_bytes,
                                      std::uint32_t layers);

// Memory of a rank under ZeRO-3 sequence parallelism (ulysses, flexsp): its
// 1/N of the model states, the gathered-layer buffers, and activations linear
// in the tokens of its group, divided by the group's degree.
// With cost_model.flexsp_preset (flexsp_preset.h): FlexSP's measured constants,
// as the paper's DeepSpeed and FlexSP runs share them: MS = params * 16 / N and
// gamma bytes per token (FlexSP's own activation checkpointing, whose time its
// fitted compute already holds), no separate buffer. Without it:
// memory_model.h and activation_memory.h: states, two layers' weights
// (or the embedding, if larger) in flight, and per token the kept activations
// plus the backward's transient, with every layer checkpointed when
// `full_recompute`.
struct Zero3Memory {
  std::uint64_t state_bytes = 0;
  std::uint64_t gather_buffer_bytes = 0;
  double activation_bytes_per_token = 0.0;  // at degree 1
  bool flexsp_measured = false;

  std::uint64_t fixed_bytes() const { return state_bytes + gather_buffer_bytes; }
  std::uint64_t activation_bytes(std::uint64_t tokens, std::uint32_t degree) const;
  // Tokens a degree-d group holds within `limit` bytes per GPU, times `fill`
  // (0 when the fixed part alone exceeds it).
  std::uint64_t capacity(std::uint64_t limit, std::uint32_t degree, double fill = 1.0) const;
};
Zero3Memory zero3_memory(const ResolvedScenario& scenario, bool full_recompute);

}  // namespace eppsim
