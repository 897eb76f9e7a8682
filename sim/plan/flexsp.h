#pragma once
// `flexsp` (FlexSP, arXiv 2412.01523; flexsp.md section 1): every step,
//  1. Sequence Blaster: sort the batch descending, try m = m0 .. m0 + extra
//     micro-batches (m0 = ceil(tokens / (C*N))), cut the sorted list into m
//     consecutive chunks by a DP minimising the largest token sum, and keep the
//     m whose sum of micro-batch makespans is smallest (micro-batches run one
//     after the other with gradient accumulation).
//  2. Per micro-batch, carve the N GPUs into power-of-two Ulysses SP groups
//     (degrees summing to N, each >= d_min(s) of its sequences) and assign every
//     sequence to one group, minimising the slowest group's time under the
//     per-GPU token capacity C. Solved as FlexSP's bucketed min-makespan MILP
//     (section 1.4) by CBC:
//       buckets  lengths cut into <= max_buckets contiguous buckets by a DP
//                minimising padding; a bucket is priced at its longest length;
//       slots    N/d slots of each degree d, pruned as FlexSP does (with d_max the
//                largest d_min and c_max the sequences needing it, a degree
//                d < d_max gets (N - d_max*c_max)/d slots);
//       columns  A[k,p] integer (bucket-k sequences in slot p), u[p] binary (slot
//                used), M (makespan);
//       rows     sum_p A[k,p] = |bucket k|; sum_k len_k*A[k,p] <= C*d_p*u[p];
//                sum_k t(k,d_p)*A[k,p] + beta*u[p] <= M; sum_k A[k,p] >= u[p];
//                sum_p d_p*u[p] = N;
//       symmetry slots of one degree are identical, so they are ordered: used
//                before unused (u[p] >= u[p+1]) and by load (load[p] >= load[p+1]);
//       bound    M >= an area bound (GPU-seconds / N + beta, and the longest
//                sequence's best time), so CBC can prove the gap early;
//       warm     FlexSP's greedy per degree d (only d-slots, longest first, each
//                to the emptiest group that fits) on the real lengths; the best
//                one seeds CBC and is kept if CBC does not beat it;
//       limits   plan.flexsp.solver_node_limit branch-and-bound nodes (default
//                500: deterministic, the same plan on any machine), the
//                relative gap, and solver_time_limit_s (default 10 s, FlexSP's)
//                as a safety net.
//     Real sequences are then dealt to the slots' bucket counts (longest first,
//     to the least-loaded slot with room for that bucket) and the plan's
//     makespan is re-evaluated on real lengths.
//     To keep planning fast, micro-batch counts are compared on the greedy
//     plans (per micro-batch max(makespan, the layer-wise ZeRO-3 traffic) plus
//     its first gather and last reduce-scatter, zero3_layer_seconds); the MILP
//     refines the micro-batches of the chosen count only.
//  Cost model: with cost_model.flexsp_preset (gpt-7b/13b/30b) the paper's
//  constants and measured BW(d) table as a cost model (FlexSpPresetCost,
//  flexsp_preset.h) over the scenario's, as FlexSP's own planner estimates;
//  otherwise the scenario's cost model (PlanContext::cost):
//  compute (forward + backward, whole model, a 1/d share) plus ulysses_layer_time per
//  layer and pass over a node-aligned group of d ranks, and no per-group constant.
//  The greedy and the MILP add up per-sequence times (FlexSP's linear model); the
//  plans are then compared (greedy against MILP, micro-batch counts against each
//  other) on each group's time priced whole, as the Schedule runs it: its
//  sequences as one packed micro-batch, one compute over all of them and the
//  all-to-alls of all their tokens, so that a cost model with per-micro-batch or
//  per-kernel costs or shape effects steers the choice as it scores the result.
//  Every estimate is rounded to 2^-40 s, so that sums are exact and the MILP
//  sees the same coefficients whatever order or rounding produced them.
//  Memory: zero3_memory (zero3_layers.h), FlexSP's MS and gamma with the preset;
//  C = (planning limit - states - gathered-weight buffer) / activation bytes per
//  token, the planning limit being plan.flexsp.planning_memory_cap when set (FlexSP's
//  released runtime plans within 28 GiB whatever the GPU has), else the scenario's
//  memory limit. The Schedule's memory is still checked against the memory limit.
//  ZeRO-3: the groups change every micro-batch; with
//  plan.zero3.prefetch_survives_group_changes false every gather is on demand
//  (zero3_layers.h, depth 0), in the Schedule and in the Sequence Blaster's
//  estimate; by default (true, as FlexSP's FSDP runtime) at plan.zero3.prefetch_depth.
//
// The Schedule, per micro-batch (groups re-formed each micro-batch; largest
// degree first on consecutive ranks, so power-of-two groups align to nodes):
//   every rank of a group: allocate activations; the forward layer by layer and
//                then the backward in reverse (per layer its Ulysses pieces,
//                layer_pieces.h: compute ops split SEQUENCE_PARALLEL over the
//                group with the group's sequences as segments, and the two
//                all-to-alls between them), with ZeRO-3's
//                layer-wise weight gathers and gradient reduce-scatters over all
//                N ranks (zero3_layers.h, at effective_prefetch_depth(zero3,
//                true)); with plan.flexsp.recomputed_mlp_fraction, k layers
//                0..k-1 recompute their POST_ATTENTION part before their
//                backward and keep less (zero3_memory), and the greedy, the
//                MILP and the comparisons price that recompute; free
//                activations. The N-rank
//                collectives synchronise the groups layer by layer, as FlexSP
//                runs its groups under one ZeRO-3 engine.
//   then the optimizer on each rank's 1/N shard.
// Streams: "compute" (compute, all-to-alls and memory ops, as Ulysses'
// all-to-alls block the layer), "zero-gather", "zero-reduce".
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/plan/flexsp_partition.h"
#include "sim/plan/planner.h"
#include "sim/plan/zero3_layers.h"

namespace eppsim {

struct FlexSpGroup {
  std::uint32_t degree = 0;
  std::uint32_t first_rank = 0;
  std::vector<std::uint32_t> sequences;  // indices into the batch
  double time_s = 0.0;                   // planner's estimate
};

struct FlexSpMicroBatch {
  std::vector<FlexSpGroup> groups;  // descending degree, consecutive ranks
  double makespan_s = 0.0;
  bool solved_by_milp = false;      // the MILP beat the greedy warm start
  // How its MILP ended: not needed (the greedy plan met the lower bound),
  // optimal, feasible at the node or time limit, or fell back to the greedy plan.
  proto::SolveStatus solve = proto::SOLVE_NOT_NEEDED;
};

struct FlexSpPlan {
  std::vector<FlexSpMicroBatch> micro_batches;
  std::uint64_t token_capacity = 0;  // C, tokens per GPU
  double step_time_s = 0.0;          // sum of micro-batch makespans (planner's model)
};

// plan.flexsp, resolved and checked.
struct FlexSpOptions {
  double time_limit_s = 10.0;   // per micro-batch MILP
  std::uint32_t extra = 4;      // micro-batch counts tried beyond the least
  std::uint32_t max_buckets = 16;
  double gap = 0.01;            // the MILP's relative optimality gap
  std::uint32_t node_limit = 500;
  // plan.flexsp.planning_memory_cap: the memory per GPU the groups' activations
  // are planned within (FlexSP's released runtime: 28 GiB, kFlexSpMemoryCap);
  // unset: the scenario's memory limit (GPU memory x plan.memory_fraction).
  std::optional<Bytes> planning_memory_cap;
  // round(plan.flexsp.recomputed_mlp_fraction x layers): the first layers whose MLP block is
  // checkpointed (its activations not kept, a RECOMPUTE of the POST_ATTENTION
  // part before the layer's backward), in the memory each group plans within,
  // the times it is planned by, and the Schedule.
  std::uint32_t recomputed_mlp_layers = 0;
  Zero3Options zero3;  // plan.zero3 (zero3_layers.h)
};

// The memory the groups are planned within: planning_memory_cap, else the
// scenario's memory limit.
Bytes flexsp_planning_limit(const PlanContext& scenario, const FlexSpOptions& options);

// Resolves the defaults (0 means the default) and checks each option's range
// and that the usable GPUs are 1 or even. InputError located by the scenario's
// FieldLocator.
FlexSpOptions resolve_flexsp_options(const ResolvedScenario& scenario);

class FlexSpPlanner final : public Planner {
 public:
  explicit FlexSpPlanner(FlexSpOptions options) : options_(options) {}
  std::string name() const override { return "flexsp"; }
  proto::Schedule plan(const PlanContext& scenario, std::span<const std::uint64_t> sequence_lengths) const override;

 private:
  FlexSpOptions options_;
};

// The planning decisions alone. Throws InputError when a sequence cannot fit.
FlexSpPlan plan_flexsp(const PlanContext& scenario, const FlexSpOptions& options,
                       std::span<const std::uint64_t> sequence_lengths);

}  // namespace eppsim
