#pragma once
// `epp`: Elastic Pipeline Parallelism as InfiniPipe (arXiv 2509.21275;
// infinipipe.md) specifies it, its ablations, and `epp-flex`.
//
// Layout (as the paper): Ulysses SP of degree sp inside a node (plan.epp.sp_degree,
// default gpus_per_node), pipeline_stages stages across nodes (default the live
// nodes), and data_parallel = GPUs / (stages * sp) replicas (1 in the paper);
// rank = (stage * dp + replica) * sp + i, as seq1f1b. Sequences go to replicas
// longest-processing-time first; each replica plans on its own:
//   1. Chunks: for each slice number K of plan.epp.slice_counts, Algorithm 1
//      (epp_chunking.h) cuts and packs the replica's sequences.
//   2. Pipelines: the units (a long sequence's chunks; a batched chunk) sorted by
//      chunk count (longest sequences first) form classes of equal count; a DP
//      over the classes (Eq. 14) groups consecutive classes into 1F1B pipelines,
//        dp[j] = min_i dp[i] + T(P(i..j)),
//        T(P) = sum of its chunks' stage times + delta + T_ckpt(P),
//      delta = (stages - 1) * the mean chunk stage time (warm-up and cool-down),
//      T_ckpt from the checkpoint ILP (epp_checkpoint.h); a pipeline that does
//      not fit even fully checkpointed is infeasible. The K with the lowest
//      dp[all] is kept (ties: the smaller K).
//   3. Schedule: pipelines back to back on every stage (gradients accumulate),
//      each in seq1f1b_order (forwards in chunk order, a sequence's slices
//      backward in reverse); per (stage, chunk) the ILP's checkpointed layers
//      as a RECOMPUTE pass before the BACKWARD, and the matching memory. Each
//      pass runs the stage's layers as Ulysses does (layer_pieces.h: per layer
//      the parts split SEQUENCE_PARALLEL over the lane's SP group, with the
//      Q+K+V and output all-to-alls between them).
// Chunk times: the scenario's compute cost (forward + backward, whole model,
// a 1/sp share) plus Ulysses' two all-to-alls per layer and pass at degree sp
// (the scenario's cost model over ranks 0..sp-1); a chunk's stage time is that / stages.
//
// Memory per rank, per (stage, chunk): chunk_activation_bytes with the chunk's
// checkpointed layers, allocated at its forward (ACTIVATIONS, KV_EARLIER_SLICES
// for a split chunk's K/V, DKV_BUFFER for its dK/dV share, InfiniPipe's
// accounting) and freed after its backward, plus the backward transient around
// the backward. Model states: ZeRO-`plan.zero_stage` (0..2) over the stage's
// dp * sp ranks (the paper shards them ZeRO-3 inside the node; see
// scenarios/infinipipe/README.md). At the end, gradients are reduced over the
// stage's ranks and the optimizer steps (emit_gradient_step).
//
// Ablations (the paper's Fig. 10): `epp-no-ckpt` (no recomputation: fails when
// the batch does not fit), `epp-full-ckpt` (every layer recomputed),
// `epp-even-split` (even_chunking: equal-token slices and fixed-length packing,
// checkpointing still adaptive).
//
// `epp-flex` (beyond the paper): the same chunks and grouping, and two more
// freedoms. Per pipeline, the SP degree is chosen among the divisors of sp: a
// degree d < sp runs sp/d independent sub-pipelines side by side inside the
// stages (the pipeline's units dealt longest-processing-time first); to keep
// planning fast such a degree is only taken where it fits without
// recomputation (the full degree keeps the ILP); short-sequence pipelines then
// skip most all-to-all traffic. Its estimate counts warm-up and cool-down from
// the pipeline's first and last chunks, and a smaller degree the DP chose is
// confirmed on the scenario's engine (the pipeline alone, through the
// ScheduleEvaluator that make_planner passes) against the full degree, the
// faster kept. And consecutive pipelines of the same degree overlap: the next
// pipeline's warm-up forwards run in the previous one's cool-down (one
// seq1f1b_order over both), when the checkpoint ILP over the merged order still
// fits; otherwise they stay back to back.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/plan/epp_checkpoint.h"
#include "sim/plan/planner.h"
#include "sim/plan/seq1f1b.h"

namespace eppsim {

enum class EppVariant { Faithful, NoCheckpoint, FullCheckpoint, EvenSplit, Flex };

// "epp", "epp-no-ckpt", "epp-full-ckpt", "epp-even-split", "epp-flex".
std::string epp_strategy_name(EppVariant variant);

// One 1F1B pipeline of a replica. With sub-pipelines (epp-flex, degree < sp),
// `lanes` holds one chunk list and plan per sub-pipeline.
struct EppLane {
  std::vector<Seq1F1BChunk> chunks;
  CheckpointPlan checkpoint;
};
struct EppPipeline {
  std::uint32_t sp_degree = 1;
  std::vector<EppLane> lanes;          // sp / sp_degree of them
  bool overlaps_previous = false;      // epp-flex: merged with the previous pipeline's order
  double estimated_s = 0.0;
};
struct EppReplicaPlan {
  std::uint32_t slices = 0;            // the K kept
  std::vector<EppPipeline> pipelines;
  double estimated_step_s = 0.0;
};
struct EppPlan {
  std::uint32_t stages = 0, sp_degree = 0, data_parallel = 0;
  std::vector<EppReplicaPlan> replicas;
  // Every replica got the same lengths in the same order (a batch of
  // workload.repeats copies, repeats a multiple of the replicas): replica 0
  // was planned, the others are its copies over their own sequences, and the
  // Schedule lists replica 0's programs (schedule/identical_replicas.h).
  bool identical_replicas = false;
};

// plan.epp and plan.zero_stage, resolved and checked; shared by every variant.
struct EppOptions {
  std::uint32_t pipeline_stages = 1;  // default: the live nodes
  std::uint32_t sp_degree = 1;        // default: cluster.gpus_per_node
  std::vector<std::uint32_t> slice_counts = {1, 2, 3, 4, 6, 8};  // the K tried per replica
  double checkpoint_gap = 0.02;       // the checkpoint ILP's relative gap
  double solver_time_limit_s = 10.0;  // per checkpoint ILP
  std::uint32_t zero_stage = 0;       // 0 to 2
};

// Resolves the defaults and checks: stages at most the model's layers; SP
// dividing gpus_per_node and the model's attention and KV heads; stages x sp
// dividing the GPUs; slice counts in [1, 1024]; checkpoint_gap in [0, 1);
// solver_time_limit_s >= 0; ZeRO stage at most 2. InputError located by the
// scenario's FieldLocator.
EppOptions resolve_epp_options(const ResolvedScenario& scenario);

// The decisions of `variant` for the batch (no Schedule); InputError when a
// sequence cannot fit even with every layer checkpointed. epp-flex scores
// candidate schedules with the context's `simulate` (std::invalid_argument
// without); the other variants do not simulate.
EppPlan plan_epp(const PlanContext& scenario, const EppOptions& options, std::span<const std::uint64_t> lengths,
                 EppVariant variant);

class EppPlanner final : public Planner {
 public:
  EppPlanner(EppVariant variant, EppOptions options) : variant_(variant), options_(std::move(options)) {}
  std::string name() const override;
  proto::Schedule plan(const PlanContext& scenario, std::span<const std::uint64_t> sequence_lengths) const override;

 private:
  EppVariant variant_;
  EppOptions options_;
};

}  // namespace eppsim
