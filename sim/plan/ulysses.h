#pragma once
// `ulysses` and `ulysses-adaptive`: DeepSpeed-Ulysses sequence parallelism over
// ZeRO-3 (flexsp.md sections 2 and 6).
//
// `ulysses`, at SP degree d (plan.ulysses.sp_degree, default gpus_per_node):
//   - The N usable GPUs form N/d SP groups of d consecutive ranks (node-aligned
//     when d <= gpus_per_node). ZeRO-3 shards the model states over all N GPUs:
//     16 bytes/param / N per GPU.
//   - Per-GPU memory: model states + a fixed gathered-weight buffer (two of the
//     largest parameter groups, a layer or the embedding, in bf16: the group in
//     use and the prefetched next one) + per micro-batch activations
//     (chunk_activation_bytes over all layers with the LM head, at degree d; every
//     layer checkpointed with plan.ulysses.full_recompute) + the backward transient
//     (chunk_backward_transient_bytes). Activations are linear in the tokens, so a
//     group's token capacity is
//       capacity = floor(packing_fill * (memory_limit - states - weight buffer) / a_d)
//     with a_d the per-GPU bytes (kept + transient) per token of the group's
//     micro-batch (= C * d * packing_fill with C the per-GPU token capacity).
//   - The batch's sequences are packed best-fit-decreasing into micro-batches of
//     that capacity; the micro-batches are dealt to the groups longest-processing-
//     time first by estimated cost; each group runs its micro-batches in
//     decreasing estimated cost. A sequence longer than the capacity is an
//     InputError naming its length, the degree and the capacity.
//   - ZeRO-3 collectives span all N ranks, so every group runs the same number of
//     micro-batch slots m = the most any group has; a group with fewer runs empty
//     slots (the collectives only), as DeepSpeed pads with empty micro-batches.
//   - Per slot, on each rank ("comm" carries collectives, "compute" compute and
//     memory ops; each op depends on the previous one of the chain):
//       all-gather weights (all N) -> forward (shards = d) -> all-to-all forward
//       (SP group) -> all-gather weights (all N) -> [recompute -> all-to-all
//       recompute] -> all-to-all backward -> backward -> reduce-scatter gradients
//       (all N)
//     Activations are allocated before the forward and freed after the backward;
//     the backward transient lives around the backward. After the last slot, the
//     optimizer runs on the rank's 1/N shard (no gather after it: ZeRO-3).
//   - Aggregation (a modelling choice): the 4 all-to-alls of each layer of a pass
//     (sequence_parallel_cost.h) are charged as ONE ALL_TO_ALL collective per
//     micro-batch and pass whose size_bytes is the per-layer buffer (sum of the 4)
//     times the layers, so the all-to-all latency is charged once per pass instead
//     of 4 * layers times, and the all-to-alls do not overlap compute (Ulysses'
//     all-to-alls block the layer in practice). Likewise the ZeRO-3 gathers and
//     reduce-scatter are one collective each for the whole model.
//   - Degree 1 has no all-to-alls; N = 1 has no ZeRO collectives.
//
// `ulysses-adaptive`: for each global batch, every power-of-two degree d with
// d | N and ulysses_degree_fits (heads and KV heads divisible) whose plan fits
// memory is planned; the plan with the smallest estimated step time is kept
// (ties: the smaller degree). The estimate follows the lockstep structure:
//   sum over slots of (max over groups of the slot's compute + all-to-all time
//   (AllToAllBandwidth::from_cluster)) + m * ZeRO collective time (ring closed
//   form over the slowest link) + optimizer.
// The schedule's strategy is "ulysses-adaptive"; the chosen degree is in the
// group names ("ulysses sp_degree 8 group 0").
#include <cstdint>
#include <span>
#include <string_view>

#include "sim/plan/planner.h"

namespace eppsim {

class UlyssesPlanner final : public Planner {
 public:
  std::string name() const override { return "ulysses"; }
  proto::Schedule plan(const ResolvedScenario& scenario, std::span<const std::uint64_t> sequence_lengths) const override;
};

class UlyssesAdaptivePlanner final : public Planner {
 public:
  std::string name() const override { return "ulysses-adaptive"; }
  proto::Schedule plan(const ResolvedScenario& scenario, std::span<const std::uint64_t> sequence_lengths) const override;
};

// The Ulysses schedule at `sp_degree` under the scenario's plan.ulysses options,
// with `strategy` as the schedule's strategy name. Sets *estimated_step_s (when
// given) to the closed-form estimate above. Throws InputError for a degree that
// does not suit the cluster or the model, or a batch that does not fit.
proto::Schedule plan_ulysses(const ResolvedScenario& scenario, std::span<const std::uint64_t> sequence_lengths,
                             std::uint32_t sp_degree, std::string_view strategy, double* estimated_step_s = nullptr);

// Tokens one SP group of `sp_degree` GPUs may hold per micro-batch (packing_fill
// applied). Throws InputError when the model states alone do not fit.
std::uint64_t ulysses_group_capacity(const ResolvedScenario& scenario, std::uint32_t sp_degree);

// The degree plan.ulysses.sp_degree names (0: gpus_per_node).
std::uint32_t ulysses_sp_degree(const ResolvedScenario& scenario);

}  // namespace eppsim
