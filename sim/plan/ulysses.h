#pragma once
// `ulysses` and `ulysses-adaptive`: DeepSpeed-Ulysses sequence parallelism over
// ZeRO-3 (flexsp.md sections 2 and 6).
//
// `ulysses`, at SP degree d (plan.ulysses.sp_degree, default gpus_per_node):
//   - The N usable GPUs form N/d SP groups of d consecutive ranks (node-aligned
//     when d <= gpus_per_node). ZeRO-3 shards the model states over all N GPUs:
//     16 bytes/param / N per GPU.
//   - Per-GPU memory: zero3_memory (zero3_layers.h): model states, the
//     gathered-layer buffers, and activations linear in the tokens (kept plus
//     the backward transient; every layer checkpointed with
//     plan.ulysses.full_recompute; FlexSP's measured gamma with cost_model.flexsp_preset). A
//     group's token capacity is
//       capacity = floor(packing_fill * (memory_limit - fixed) * d / a)
//     with a the bytes per token at degree 1.
//   - The batch's sequences are packed best-fit-decreasing into micro-batches of
//     that capacity; the micro-batches are dealt to the groups longest-processing-
//     time first by estimated cost; each group runs its micro-batches in
//     decreasing estimated cost. A sequence longer than the capacity is an
//     InputError naming its length, the degree and the capacity.
//   - ZeRO-3 collectives span all N ranks, so every group runs the same number of
//     micro-batch slots m = the most any group has; a group with fewer runs empty
//     slots (the collectives only), as DeepSpeed pads with empty micro-batches.
//   - Per slot, on each rank, ZeRO-3 layer by layer (zero3_layers.h): the
//     forward visits layers 0..L-1, the backward L-1..0 (recompute then backward
//     per layer with full_recompute); each visit gathers the layer's weights on
//     the "zero-gather" stream (prefetched plan.zero3.prefetch_depth layers
//     ahead: static groups keep DeepSpeed's prefetch trace), runs the layer as
//     Ulysses' pieces on the compute stream (layer_pieces.h: compute split
//     SEQUENCE_PARALLEL over the SP group, the Q+K+V and output all-to-alls
//     between them, blocking it),
//     and after a backward reduce-scatters the layer's gradients on
//     "zero-reduce". Activations are allocated before the forward and freed
//     after the backward. After the last slot, the optimizer runs on the rank's
//     1/N shard (no gather after it: ZeRO-3).
//   - Degree 1 has no all-to-alls; N = 1 has no ZeRO collectives.
//
// `ulysses-adaptive`: for each global batch, every power-of-two degree d with
// d | N and ulysses_degree_fits (heads and KV heads divisible) whose plan fits
// memory is planned; the plan with the smallest estimated step time is kept
// (ties: the smaller degree). The estimate follows the lockstep structure:
//   sum over slots of max(max over groups of the slot's compute + all-to-all
//   time (the scenario's cost model, PlanContext::cost), the slot's layer-wise ZeRO-3
//   traffic) + its first gather and last reduce-scatter (zero3_layer_seconds,
//   zero3_micro_batch_seconds) + optimizer.
// The schedule's strategy is "ulysses-adaptive"; the chosen degree is in the
// group names ("ulysses sp_degree 8 group 0").
#include <cstdint>
#include <span>
#include <string_view>

#include "sim/plan/planner.h"
#include "sim/plan/zero3_layers.h"

namespace eppsim {

// plan.ulysses, resolved and checked.
struct UlyssesOptions {
  std::uint32_t sp_degree = 1;  // "ulysses" only (0 in the scenario means gpus_per_node)
  double packing_fill = 0.9;    // 0 in the scenario means 0.9
  bool full_recompute = false;
  Zero3Options zero3;           // plan.zero3 (zero3_layers.h)
};

// "ulysses": sp_degree a power of two dividing the usable GPUs and the model's
// attention and KV heads, plus the checks of resolve_ulysses_adaptive_options.
UlyssesOptions resolve_ulysses_options(const ResolvedScenario& scenario);
// "ulysses-adaptive" (the degree is chosen per batch; sp_degree is ignored):
// packing_fill in (0, 1]. InputError located by the scenario's FieldLocator.
UlyssesOptions resolve_ulysses_adaptive_options(const ResolvedScenario& scenario);

class UlyssesPlanner final : public Planner {
 public:
  explicit UlyssesPlanner(UlyssesOptions options) : options_(options) {}
  std::string name() const override { return "ulysses"; }
  proto::Schedule plan(const PlanContext& scenario, std::span<const std::uint64_t> sequence_lengths) const override;

 private:
  UlyssesOptions options_;
};

class UlyssesAdaptivePlanner final : public Planner {
 public:
  explicit UlyssesAdaptivePlanner(UlyssesOptions options) : options_(options) {}
  std::string name() const override { return "ulysses-adaptive"; }
  proto::Schedule plan(const PlanContext& scenario, std::span<const std::uint64_t> sequence_lengths) const override;

 private:
  UlyssesOptions options_;
};

// The Ulysses schedule at `sp_degree` under `options` (its sp_degree unused),
// with `strategy` as the schedule's strategy name. Sets *estimated_step_s (when
// given) to the closed-form estimate above. Throws InputError for a degree that
// does not suit the cluster or the model, or a batch that does not fit.
proto::Schedule plan_ulysses(const PlanContext& scenario, const UlyssesOptions& options,
                             std::span<const std::uint64_t> sequence_lengths, std::uint32_t sp_degree,
                             std::string_view strategy, double* estimated_step_s = nullptr);

// Tokens one SP group of `sp_degree` GPUs may hold per micro-batch (packing_fill
// applied). Throws InputError when the model states alone do not fit.
std::uint64_t ulysses_group_capacity(const PlanContext& scenario, const UlyssesOptions& options,
                                     std::uint32_t sp_degree);

}  // namespace eppsim
