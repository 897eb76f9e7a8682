#include "sim/plan/epp_checkpoint.h"

#include <algorithm>
#include <limits>

#include <gtest/gtest.h>

#include "models/transformer_spec.h"

namespace eppsim {
namespace {

const TransformerSpec& model() { return *find_model_preset("llama2-7b"); }

// A 4-slice sequence, two packed chunks and a 2-slice sequence.
std::vector<Seq1F1BChunk> chunks() {
  return {{{{8192, 0}}, 0, false},      {{{6000, 8192}}, 0, false}, {{{5000, 14192}}, 0, false},
          {{{4000, 19192}}, 0, true},   {{{3000, 0}, {2000, 0}}, 1, true}, {{{4096, 0}, {1024, 0}}, 2, true},
          {{{6000, 0}}, 3, false},      {{{4000, 6000}}, 3, true}};
}

CheckpointProblem problem(double budget_bytes, std::uint32_t stages = 4) {
  CheckpointProblem p;
  p.model = &model();
  p.shapes = stage_shapes(model(), stages);
  p.sp_degree = 8;
  p.stage_budget_bytes.assign(stages, budget_bytes);
  p.layer_forward_seconds = 1e-3;
  return p;
}

TEST(EppCheckpoint, NoRecomputationWhenEverythingFits) {
  const auto c = chunks();
  const auto plan = plan_checkpointing(problem(1e15), c, CheckpointPolicy::Adaptive);
  EXPECT_TRUE(plan.feasible);
  EXPECT_FALSE(plan.solved_by_milp);
  EXPECT_EQ(plan.solve, proto::SOLVE_NOT_NEEDED);
  EXPECT_EQ(plan.recompute_seconds, 0.0);
}

TEST(EppCheckpoint, IlpFitsEveryStageWithLessRecomputeThanFull) {
  const auto c = chunks();
  const auto full = plan_checkpointing(problem(1e15), c, CheckpointPolicy::Full);
  const auto none = plan_checkpointing(problem(1e15), c, CheckpointPolicy::None);
  // A budget between the all-checkpointed and the no-checkpoint peaks of stage 0.
  const double budget = (full.peak_activation_bytes[0] + none.peak_activation_bytes[0]) / 2;
  const auto p = problem(budget);
  const auto plan = plan_checkpointing(p, c, CheckpointPolicy::Adaptive);
  ASSERT_TRUE(plan.feasible);
  EXPECT_TRUE(plan.solved_by_milp);
  EXPECT_TRUE(plan.solve == proto::SOLVE_OPTIMAL || plan.solve == proto::SOLVE_FEASIBLE_AT_LIMIT) << plan.solve;
  EXPECT_GT(plan.recompute_seconds, 0.0);
  EXPECT_LT(plan.recompute_seconds, full.recompute_seconds);
  // Every window (not only the largest ones the ILP keeps) is within the budget.
  const auto peaks = peak_activation_bytes(p, c, plan.layers);
  for (std::uint32_t s = 0; s < 4; ++s) {
    EXPECT_LE(peaks[s], budget) << "stage " << s;
    EXPECT_NEAR(peaks[s], plan.peak_activation_bytes[s], 1.0);
  }
  // Diagonal tying: stage s's chunk in backward slot b shares its variable with
  // stage s+1's chunk in slot b+1.
  const auto position = backward_positions(c, 4);
  EXPECT_EQ(plan.diagonals.size(), c.size() + 3);
  for (std::uint32_t s = 0; s < 4; ++s) {
    for (std::uint32_t k = 0; k < c.size(); ++k) {
      EXPECT_EQ(plan.layers[s][k], std::min(plan.diagonals[position[k] + 3 - s], p.shapes[s].layer_count));
    }
  }
}

TEST(EppCheckpoint, IlpMatchesExhaustiveSearchOnASmallCase) {
  // 2 stages, 3 chunks, diagonals in [0, 16]: 4 variables, search them all.
  const std::vector<Seq1F1BChunk> c{{{{8192, 0}}, 0, false}, {{{6000, 8192}}, 0, true}, {{{5000, 0}}, 1, true}};
  auto p = problem(1e15, 2);
  const auto full = plan_checkpointing(p, c, CheckpointPolicy::Full);
  const auto none = plan_checkpointing(p, c, CheckpointPolicy::None);
  p.stage_budget_bytes = {(2 * full.peak_activation_bytes[0] + none.peak_activation_bytes[0]) / 3,
                          (full.peak_activation_bytes[1] + 2 * none.peak_activation_bytes[1]) / 3};
  const auto plan = plan_checkpointing(p, c, CheckpointPolicy::Adaptive);
  ASSERT_TRUE(plan.feasible);
  const auto position = backward_positions(c, 2);
  const std::uint32_t max_layers = p.shapes[0].layer_count;
  std::uint32_t best = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> x(4, 0);
  for (x[0] = 0; x[0] <= max_layers; ++x[0])
    for (x[1] = 0; x[1] <= max_layers; ++x[1])
      for (x[2] = 0; x[2] <= max_layers; ++x[2])
        for (x[3] = 0; x[3] <= max_layers; ++x[3]) {
          std::vector<std::vector<std::uint32_t>> layers(2, std::vector<std::uint32_t>(3));
          for (std::uint32_t s = 0; s < 2; ++s) {
            for (std::uint32_t k = 0; k < 3; ++k) layers[s][k] = x[position[k] + 1 - s];
          }
          const auto peaks = peak_activation_bytes(p, c, layers);
          const bool fits = peaks[0] <= p.stage_budget_bytes[0] && peaks[1] <= p.stage_budget_bytes[1];
          if (fits) best = std::min(best, x[0] + x[1] + x[2] + x[3]);
        }
  std::uint32_t sum = 0;
  for (auto v : plan.diagonals) sum += v;
  EXPECT_LE(sum, static_cast<std::uint32_t>(best * 1.02) + 1);
  EXPECT_GE(sum, best);
}

TEST(EppCheckpoint, InfeasibleWhenEvenFullCheckpointingOverflows) {
  const auto c = chunks();
  const auto full = plan_checkpointing(problem(1e15), c, CheckpointPolicy::Full);
  const auto plan = plan_checkpointing(problem(full.peak_activation_bytes[0] * 0.9), c, CheckpointPolicy::Adaptive);
  EXPECT_FALSE(plan.feasible);
  const auto none = plan_checkpointing(problem(full.peak_activation_bytes[0] * 1.01), c, CheckpointPolicy::None);
  EXPECT_FALSE(none.feasible);
}

}  // namespace
}  // namespace eppsim
