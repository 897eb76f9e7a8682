#pragma once
// Stage-aware chunk-level adaptive checkpointing (InfiniPipe section III-C-3;
// infinipipe.md section 3): how many layers of each chunk each stage
// checkpoints (whole-layer recompute) so that every stage stays under its
// memory budget with the least recomputation.
//
// Memory. Chunk k on stage s keeps, from its forward to its backward,
// chunk_activation_bytes (activation_memory.h) with c checkpointed layers:
// linear, I[s][k] - c * F[s][k] (chunk_activation_linear_form: K/V of split
// chunks and their dK/dV counted for the whole residency, InfiniPipe's
// accounting). Stage s runs its chunks in seq1f1b_order; after each forward the
// chunks forwarded and not yet backwarded (the window W_s(t)) must fit:
//   sum_{k in W_s(t)} (I[s][k] - F[s][k] * ckpt(s,k)) <= budget[s]
// budget[s] = memory limit - model states - the largest backward transient.
//
// Diagonal tying (Eqs. 15-16): recomputation on stage s delays its backward
// slot b, and the delay reaches stage s+1 at slot b+1 for free, so
// ckpt(s,k) = x[b(k) + (stages - 1 - s)] with b(k) chunk k's position in the
// backward order (the same on every stage): n + stages - 1 integer variables
// in [0, fewest layers of a stage].
//
// ILP (Eq. 20): minimise F_hat * sum x (F_hat: one layer's forward of an
// average chunk) subject to every window, solved by CBC (milp.h) to a relative
// gap (2% by default, as the paper) with the all-checkpointed plan as warm
// start. When no checkpointing fits, no ILP runs; when even checkpointing every
// layer does not fit, the plan is infeasible.
#include <cstdint>
#include <span>
#include <vector>

#include "models/transformer_spec.h"
#include "sim/plan/packed_1f1b.h"
#include "sim/plan/seq1f1b.h"

namespace eppsim {

enum class CheckpointPolicy {
  Adaptive,  // the ILP
  None,      // no recomputation (epp-no-ckpt): infeasible when it does not fit
  Full,      // every layer of every chunk on every stage (epp-full-ckpt)
};

struct CheckpointProblem {
  const TransformerSpec* model = nullptr;
  std::vector<StageShape> shapes;                 // one per stage
  std::uint32_t sp_degree = 1;                    // activations are sharded over it
  std::vector<double> stage_budget_bytes;         // per stage, for activations
  double layer_forward_seconds = 0.0;             // F_hat
  double time_limit_s = 10.0;
  double relative_gap = 0.02;
};

struct CheckpointPlan {
  bool feasible = false;
  std::vector<std::vector<std::uint32_t>> layers;  // [stage][chunk]: checkpointed layers
  std::vector<std::uint32_t> diagonals;            // the tied variables x
  double recompute_seconds = 0.0;                  // F_hat * sum over stages and chunks of layers
  bool solved_by_milp = false;                     // the ILP ran (not the trivial cases)
  // How the ILP ended: not needed (a trivial case), optimal, feasible at its
  // limit, or fell back to checkpointing every layer.
  proto::SolveStatus solve = proto::SOLVE_NOT_NEEDED;
  // Largest window sum per stage under the plan (bytes), for tests and reports.
  std::vector<double> peak_activation_bytes;
};

// The intercept and slope of chunk `chunk` on stage `stage` (for tests).
struct ChunkMemoryLine {
  double intercept_bytes = 0.0;
  double saving_per_layer_bytes = 0.0;
};
ChunkMemoryLine chunk_memory_line(const CheckpointProblem& problem, std::uint32_t stage, const Seq1F1BChunk& chunk);

// Position of each chunk in the backward order of seq1f1b_order.
std::vector<std::uint32_t> backward_positions(std::span<const Seq1F1BChunk> chunks, std::uint32_t stages);

// The largest sum over stage s's windows (every forward of seq1f1b_order) of
// chunk_memory_line under `layers[s][k]` checkpointed layers, per stage.
std::vector<double> peak_activation_bytes(const CheckpointProblem& problem, std::span<const Seq1F1BChunk> chunks,
                                          const std::vector<std::vector<std::uint32_t>>& layers);

CheckpointPlan plan_checkpointing(const CheckpointProblem& problem, std::span<const Seq1F1BChunk> chunks,
                                  CheckpointPolicy policy);

}  // namespace eppsim
