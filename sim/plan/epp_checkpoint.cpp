#include "sim/plan/epp_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/activation_memory.h"
#include "sim/plan/milp.h"

namespace eppsim {

namespace {
// Branch-and-bound nodes per ILP: a deterministic bound on work (the time limit
// is only a safety net); the all-checkpointed warm start is always a fallback.
constexpr int kNodeLimit = 200;
}  // namespace

ChunkMemoryLine chunk_memory_line(const CheckpointProblem& problem, std::uint32_t stage, const Seq1F1BChunk& chunk) {
  const StageShape& shape = problem.shapes[stage];
  ActivationChunk act;
  act.segments = chunk.segments;
  act.prefix_tokens = chunk.last_slice ? 0 : chunk.tokens();
  act.layer_count = shape.layer_count;
  act.includes_lm_head = shape.last;
  const ActivationOptions options{problem.sp_degree, LogitsMemory::FusedInPlace};
  const ActivationLinearForm form = chunk_activation_linear_form(*problem.model, act, options);
  return ChunkMemoryLine{form.intercept_bytes, form.saving_per_checkpointed_layer_bytes};
}

std::vector<std::uint32_t> backward_positions(std::span<const Seq1F1BChunk> chunks, std::uint32_t stages) {
  std::vector<std::uint32_t> position(chunks.size(), 0);
  std::uint32_t next = 0;
  for (const auto& [forward, k] : seq1f1b_order(0, stages, chunks)) {
    if (!forward) position[k] = next++;
  }
  return position;
}

std::vector<double> peak_activation_bytes(const CheckpointProblem& problem, std::span<const Seq1F1BChunk> chunks,
                                          const std::vector<std::vector<std::uint32_t>>& layers) {
  const auto stages = static_cast<std::uint32_t>(problem.shapes.size());
  std::vector<double> peaks(stages, 0.0);
  for (std::uint32_t s = 0; s < stages; ++s) {
    std::vector<std::uint32_t> live;
    for (const auto& [forward, k] : seq1f1b_order(s, stages, chunks)) {
      if (!forward) {
        live.erase(std::find(live.begin(), live.end(), k));
        continue;
      }
      live.push_back(k);
      double bytes = 0.0;
      for (auto i : live) {
        const ChunkMemoryLine line = chunk_memory_line(problem, s, chunks[i]);
        bytes += line.intercept_bytes - layers[s][i] * line.saving_per_layer_bytes;
      }
      peaks[s] = std::max(peaks[s], bytes);
    }
  }
  return peaks;
}

CheckpointPlan plan_checkpointing(const CheckpointProblem& problem, std::span<const Seq1F1BChunk> chunks,
                                  CheckpointPolicy policy) {
  const auto stages = static_cast<std::uint32_t>(problem.shapes.size());
  const auto n = static_cast<std::uint32_t>(chunks.size());
  std::uint32_t max_layers = problem.shapes.empty() ? 0 : problem.shapes[0].layer_count;
  for (const auto& s : problem.shapes) max_layers = std::min(max_layers, s.layer_count);
  const std::vector<std::uint32_t> position = backward_positions(chunks, stages);
  const std::uint32_t diagonals = n + stages - 1;
  auto diagonal = [&](std::uint32_t stage, std::uint32_t k) { return position[k] + (stages - 1 - stage); };

  // Lines per stage and chunk, and the windows (after each forward) per stage.
  std::vector<std::vector<ChunkMemoryLine>> lines(stages, std::vector<ChunkMemoryLine>(n));
  std::vector<std::vector<std::vector<std::uint32_t>>> windows(stages);
  for (std::uint32_t s = 0; s < stages; ++s) {
    for (std::uint32_t k = 0; k < n; ++k) lines[s][k] = chunk_memory_line(problem, s, chunks[k]);
    // Only the largest windows matter: the live set right before each run of
    // backwards (memory only grows between them, and every chunk's term is >= 0).
    std::vector<std::uint32_t> live;
    bool grew = false;
    for (const auto& [forward, k] : seq1f1b_order(s, stages, chunks)) {
      if (forward) {
        live.push_back(k);
        grew = true;
      } else {
        if (grew) windows[s].push_back(live);
        grew = false;
        live.erase(std::find(live.begin(), live.end(), k));
      }
    }
    if (grew) windows[s].push_back(live);
  }
  auto evaluate = [&](const std::vector<std::uint32_t>& x, CheckpointPlan* plan) {
    plan->layers.assign(stages, std::vector<std::uint32_t>(n, 0));
    plan->peak_activation_bytes.assign(stages, 0.0);
    bool fits = true;
    double layer_sum = 0.0;
    for (std::uint32_t s = 0; s < stages; ++s) {
      for (std::uint32_t k = 0; k < n; ++k) {
        plan->layers[s][k] = std::min(x[diagonal(s, k)], problem.shapes[s].layer_count);
        layer_sum += plan->layers[s][k];
      }
      for (const auto& window : windows[s]) {
        double bytes = 0.0;
        for (auto k : window) bytes += lines[s][k].intercept_bytes - plan->layers[s][k] * lines[s][k].saving_per_layer_bytes;
        plan->peak_activation_bytes[s] = std::max(plan->peak_activation_bytes[s], bytes);
      }
      if (plan->peak_activation_bytes[s] > problem.stage_budget_bytes[s]) fits = false;
    }
    plan->diagonals = x;
    plan->recompute_seconds = problem.layer_forward_seconds * layer_sum;
    plan->feasible = fits;
  };

  CheckpointPlan none, full;
  evaluate(std::vector<std::uint32_t>(diagonals, 0), &none);
  evaluate(std::vector<std::uint32_t>(diagonals, max_layers), &full);
  switch (policy) {
    case CheckpointPolicy::None: return none;
    case CheckpointPolicy::Full: return full;
    case CheckpointPolicy::Adaptive: break;
  }
  if (none.feasible || !full.feasible) return none.feasible ? none : full;

  // The ILP over the diagonals; rows only for windows that can break the budget.
  Milp milp;
  for (std::uint32_t d = 0; d < diagonals; ++d) milp.add_variable(0.0, max_layers, problem.layer_forward_seconds, true);
  for (std::uint32_t s = 0; s < stages; ++s) {
    for (const auto& window : windows[s]) {
      double intercept = 0.0;
      std::vector<std::pair<int, double>> coeffs;
      for (auto k : window) {
        intercept += lines[s][k].intercept_bytes;
        const int column = static_cast<int>(diagonal(s, k));
        const double slope = lines[s][k].saving_per_layer_bytes;
        auto it = std::find_if(coeffs.begin(), coeffs.end(), [&](const auto& c) { return c.first == column; });
        if (it == coeffs.end()) coeffs.emplace_back(column, slope); else it->second += slope;
      }
      const double need = intercept - problem.stage_budget_bytes[s];  // bytes checkpointing must free
      if (need <= 0.0) continue;
      // Scaled to GiB so CBC's tolerances suit the coefficients.
      constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
      for (auto& c : coeffs) c.second /= kGiB;
      milp.add_row(std::move(coeffs), need / kGiB, Milp::kInfinity);
    }
  }
  const std::vector<double> warm(diagonals, static_cast<double>(max_layers));
  const auto result = milp.solve(problem.time_limit_s, problem.relative_gap, warm, kNodeLimit, false);
  CheckpointPlan plan;
  std::vector<std::uint32_t> x(diagonals, max_layers);
  if (result.has_solution()) {
    for (std::uint32_t d = 0; d < diagonals; ++d) x[d] = static_cast<std::uint32_t>(std::lround(result.values[d]));
  }
  evaluate(x, &plan);
  if (!plan.feasible) {  // rounding at the edge of a budget: fall back to the safe plan
    full.solve = proto::SOLVE_FELL_BACK;
    return full;
  }
  plan.solved_by_milp = true;
  plan.solve = result.has_solution() ? solve_status(result.status) : proto::SOLVE_FELL_BACK;
  return plan;
}

}  // namespace eppsim
