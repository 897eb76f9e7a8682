#pragma once
// DeepSpeed's ZeRO-3 execution, layer by layer, for planners whose ranks hold
// 1/N of every parameter (ulysses, flexsp).
//
// Before a layer runs, its weights are all-gathered over the N ranks; after its
// backward, its gradients are reduce-scattered. A visit is one layer in one
// pass: a forward visits layers 0..L-1, a backward L-1..0, and visits are
// numbered 0, 1, 2, ... over the whole step. Weights are spread evenly over the
// layers (embedding and head included), so the bytes over a whole pass are the
// model's.
//
// Prefetch (plan.zero3.prefetch_depth, d >= 0, default 1): gathers run on their
// own stream, in visit order, into d + 1 gathered-layer buffers. The gather of
// visit v may start once visit v-1-d has ended (its last compute; its gather
// when it ran nothing), whose buffer it reuses; visits 0..d gather at once.
//   d = 0  on demand: a layer's gather starts when the previous layer is done,
//          so every gather is exposed (DeepSpeed when its prefetch trace is
//          invalid, below);
//   d = 1  one layer ahead: gather v overlaps visit v-1's compute, and only the
//          first gather of a step is exposed when the network keeps up;
//   d > 1  further ahead: more buffers, more slack when gathers are uneven.
// Reduce-scatters run on a third stream, so they never hold a gather back.
//
// Groups that change every micro-batch (flexsp): DeepSpeed prefetches by a
// trace of the module order it recorded on earlier steps and invalidates that
// trace when the order changes, fetching on demand then (DeepSpeed issue #4808,
// PR #873); if SP groups changing every micro-batch are such a change, its
// gathers are on demand. With plan.zero3.prefetch_survives_group_changes false
// the flexsp planner runs at depth 0 (effective_prefetch_depth). The default is
// true: FlexSP's released runtime (Hetu-Galvatron) does not shard with
// DeepSpeed but with PyTorch FSDP (galvatron/core/parallel.py: FULL_SHARD,
// limit_all_gathers, FSDP's default backward prefetch), whose prefetch follows
// no DeepSpeed trace and does not depend on the SP groups. Static groups
// (ulysses) always keep the configured depth.
//
// Gradients are reduce-scattered in plan.zero3.reduce_scatter_dtype: "bf16"
// (2 bytes per parameter) or "fp32" (4); unset, the model's training precision
// (model.bytes_per_element), as DeepSpeed's communication_data_type defaults
// to the training dtype (bf16 when bf16 is enabled: DeepSpeed PR #3370, which
// fixed issue #2071, where bf16 training had communicated in fp32), and as
// Hetu-Galvatron's FSDP reduces in bf16 unless --reduce_in_fp32).
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "models/chunk.h"
#include "sim/plan/layer_pieces.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/plan_context.h"
#include "proto/schedule.pb.h"

namespace eppsim {

// plan.zero3, resolved and checked (InputError located by the scenario's FieldLocator).
struct Zero3Options {
  std::uint32_t prefetch_depth = 1;
  bool prefetch_survives_group_changes = true;
  double reduce_scatter_bytes_per_element = 0.0;  // 0: the model's bytes_per_element
};
Zero3Options resolve_zero3_options(const ResolvedScenario& scenario);

// The depth a planner runs at: 0 (on demand) when its SP groups change every
// micro-batch and the prefetch trace does not survive that; else prefetch_depth.
std::uint32_t effective_prefetch_depth(const Zero3Options& options, bool groups_change);

// What one layer visit moves, whole-layer sizes: the weights a gather
// assembles (each rank contributes 1/N) and the gradients a reduce-scatter
// reduces (in the reduce-scatter dtype).
struct Zero3LayerBytes {
  std::uint64_t weights = 0;
  std::uint64_t gradients = 0;
};
// The model's weights at training precision and its gradients at the
// reduce-scatter dtype, each spread evenly over its layers.
Zero3LayerBytes zero3_layer_bytes(const TransformerSpec& model, const Zero3Options& options);

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
  // `bytes`: each layer's (with one rank, nothing is gathered or reduced);
  // `prefetch_depth`: d above.
  Zero3LayerProgram(ScheduleBuilder& builder, std::uint32_t rank, const Zero3Setup& setup, Zero3LayerBytes bytes,
                    std::uint32_t prefetch_depth);

  // One layer visit: the gather, then `pieces` on the compute stream (a layer's
  // Ulysses pieces, layer_pieces.h, or a recompute's and a backward's), then,
  // with `reduce_gradients`, the reduce-scatter of the layer's gradients.
  void visit(std::span<LayerPiece> pieces, bool reduce_gradients);
  // The ops the step's end waits for: the last compute and the last reduce.
  std::vector<OpIndex> tail() const;

  const Zero3LayerBytes& layer_bytes() const { return bytes_; }

 private:
  ScheduleBuilder& builder_;
  std::uint32_t rank_;
  Zero3Setup setup_;
  Zero3LayerBytes bytes_;
  std::uint32_t depth_;
  // The op that ends each of the last depth + 1 visits, oldest first (its last
  // compute, or its gather when it ran nothing): the next gather reuses the
  // oldest one's buffer once the deque is full.
  std::deque<std::optional<OpIndex>> ended_;
  std::optional<OpIndex> last_compute_, last_reduce_;
};

// The planners' estimate of one layer's ZeRO-3 gather and reduce-scatter over
// the scenario's usable ranks, priced by the scenario's cost model
// (PlanContext::cost, CollectiveAlgorithm::Auto).
struct Zero3LayerSeconds {
  double gather = 0.0;
  double reduce_scatter = 0.0;
};
Zero3LayerSeconds zero3_layer_seconds(const PlanContext& scenario, const Zero3LayerBytes& bytes);

// The planners' estimate of one micro-batch (a forward and a backward over
// `layers` layers) whose compute and all-to-alls take `compute_s` on the
// slowest rank, under ZeRO-3 at `prefetch_depth`:
//   d >= 1  max(compute_s, 2L gathers + L reduce-scatters) + 1 gather + 1 reduce-scatter
//           (gathers hide behind compute but the first; a micro-batch whose
//           traffic outlasts its compute waits for it; the last reduce-scatter shows)
//   d = 0   max(compute_s + 2L gathers, 2L gathers + L reduce-scatters) + 1 reduce-scatter
//           (every gather is exposed)
double zero3_micro_batch_seconds(const Zero3LayerSeconds& zero, std::uint32_t layers, double compute_s,
                                 std::uint32_t prefetch_depth);

// Memory of a rank under ZeRO-3 sequence parallelism (ulysses, flexsp): its
// 1/N of the model states, the gathered-layer buffers (prefetch_depth + 1 of
// the configured depth: the buffers the framework is set up with), and activations linear
// in the tokens of its group, divided by the group's degree.
// With cost_model.flexsp_preset (flexsp_preset.h): FlexSP's measured constants,
// as the paper's DeepSpeed and FlexSP runs share them: MS = params * 16 / N and
// gamma bytes per token (FlexSP's own activation checkpointing, whose time its
// fitted compute already holds), no separate buffer. Without it:
// memory_model.h and activation_memory.h: states, prefetch_depth + 1 layers'
// weights (or the embedding, if larger) in flight, and per token the kept activations
// plus the backward's transient, with every layer checkpointed when
// `full_recompute`, else with the MLP block of `recomputed_mlp_layers` layers
// checkpointed (memory_model.h's saving each, and one block's set live again
// while its layer's backward runs).
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
Zero3Memory zero3_memory(const PlanContext& scenario, bool full_recompute, const Zero3Options& zero3,
                         std::uint32_t recomputed_mlp_layers = 0);

}  // namespace eppsim
