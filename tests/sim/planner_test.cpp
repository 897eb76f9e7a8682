// Every planner records what it decided in the schedule summary's
// PlanDecisions, consistently with the Schedule it emits.
#include "tests/sim/test_scenarios.h"
#include "sim/plan/planner.h"

#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/errors.h"
#include "sim/run.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace {

// The quickstart (16 A100s, llama2-7b, Wikipedia lengths up to 8K) with a small
// batch, `strategy` and `overrides`.
ResolvedScenario quickstart(const std::string& strategy, std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(), {"workload.global_batch=64", "plan.strategy=" + strategy});
  return testing::load_quickstart(overrides);
}

std::string system_of(const std::string& strategy) {
  if (strategy == "packed-1f1b") return "Megatron-LM";
  if (strategy.starts_with("ulysses")) return "DeepSpeed-Ulysses";
  if (strategy == "seq1f1b") return "Seq1F1B";
  if (strategy == "flexsp") return "FlexSP";
  return "InfiniPipe";
}

bool solved(proto::SolveStatus status) {
  return status == proto::SOLVE_OPTIMAL || status == proto::SOLVE_FEASIBLE_AT_LIMIT;
}

class PlanDecisionsOf : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanDecisionsOf, AreFilledAndConsistent) {
  const std::string strategy = GetParam();
  const auto sc = quickstart(strategy);
  const auto schedule = make_planner(strategy, sc)->plan(PlanContext(sc, simulated_step_seconds), sample_batch(sc));
  const auto& summary = schedule.summary();
  const auto& d = summary.decisions();
  EXPECT_EQ(d.reproduces(), system_of(strategy));
  EXPECT_EQ(d.ranks(), schedule.num_ranks());
  EXPECT_EQ(d.pipeline_stages(), summary.pipeline_stages());
  EXPECT_EQ(d.data_parallel(), summary.data_parallel());
  EXPECT_GE(d.tensor_parallel(), 1u);
  EXPECT_GE(d.context_parallel(), 1u);
  ASSERT_GE(d.sp_degrees_size(), 1);
  for (int i = 1; i < d.sp_degrees_size(); ++i) EXPECT_GT(d.sp_degrees(i - 1), d.sp_degrees(i)) << "distinct, descending";
  const std::uint32_t layout =
      d.pipeline_stages() * d.sp_degrees(0) * d.tensor_parallel() * d.context_parallel() * d.data_parallel();
  if (strategy == "epp-flex") {
    // Lanes of a smaller degree run side by side within the full SP group.
    EXPECT_EQ(d.ranks() % layout, 0u);
  } else if (strategy != "flexsp") {
    EXPECT_EQ(layout, d.ranks());  // one layout multiplies out to the ranks
  }
  EXPECT_GE(d.chunks(), summary.micro_batches());
  // Recomputation: per stage, and in total over every chunk's layers on every stage.
  ASSERT_EQ(static_cast<std::uint32_t>(d.checkpointing_size()), d.pipeline_stages());
  std::uint32_t layers = 0, checkpointed = 0;
  for (const auto& stage : d.checkpointing()) {
    EXPECT_EQ(stage.chunks(), d.chunks());
    EXPECT_LE(stage.most_checkpointed_layers(), stage.layers());
    EXPECT_LE(stage.checkpointed_layer_chunks(), stage.most_checkpointed_layers() * stage.chunks());
    layers += stage.layers();
    checkpointed += stage.checkpointed_layer_chunks();
  }
  EXPECT_EQ(layers, sc.model.layers);
  EXPECT_EQ(d.layer_chunks(), sc.model.layers * d.chunks());
  EXPECT_EQ(d.checkpointed_layer_chunks(), checkpointed);
  if (strategy == "epp-full-ckpt") {
    EXPECT_EQ(d.checkpointed_layer_chunks(), d.layer_chunks());
  }
  if (strategy == "epp-no-ckpt" || strategy == "flexsp") {
    EXPECT_EQ(d.checkpointed_layer_chunks(), 0u);
  }

  if (strategy.starts_with("epp")) {
    EXPECT_EQ(static_cast<std::uint32_t>(d.slice_counts_size()), d.data_parallel());
    EXPECT_GE(d.pipelines(), 1u);
    ASSERT_GE(static_cast<std::uint32_t>(d.solves_size()), d.pipelines());  // one per pipeline (or lane)
    for (const auto& solve : d.solves()) {
      EXPECT_NE(solve.status(), proto::SOLVE_STATUS_UNSPECIFIED) << solve.problem();
      EXPECT_TRUE(solve.problem().starts_with("epp replica ")) << solve.problem();
    }
  } else if (strategy == "seq1f1b") {
    ASSERT_EQ(d.slice_counts_size(), 1);
    EXPECT_EQ(d.slice_counts(0), 4u);  // the default
  } else {
    EXPECT_EQ(d.slice_counts_size(), 0);
    EXPECT_EQ(d.pipelines(), 0u);
  }
  if (strategy == "flexsp") {
    ASSERT_EQ(static_cast<std::uint32_t>(d.micro_batch_groups_size()), d.chunks());
    ASSERT_EQ(d.solves_size(), d.micro_batch_groups_size());
    for (int j = 0; j < d.micro_batch_groups_size(); ++j) {
      const auto& groups = d.micro_batch_groups(j).sp_degrees();
      EXPECT_EQ(std::accumulate(groups.begin(), groups.end(), 0u), d.ranks()) << "micro-batch " << j;
      EXPECT_NE(d.solves(j).status(), proto::SOLVE_STATUS_UNSPECIFIED);
    }
  } else {
    EXPECT_EQ(d.micro_batch_groups_size(), 0);
  }
  if (!strategy.starts_with("epp") && strategy != "flexsp") {
    EXPECT_EQ(d.solves_size(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, PlanDecisionsOf, ::testing::ValuesIn(planner_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (auto& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(PlanDecisions, MegatronLayoutAndFullRecompute) {
  const auto sc = quickstart("packed-1f1b", {"plan.packed_1f1b.pipeline_stages=2", "plan.packed_1f1b.tensor_parallel=2",
                                             "plan.packed_1f1b.context_parallel=2", "plan.packed_1f1b.full_recompute=true"});
  const auto d = make_planner("packed-1f1b", sc)->plan(sc, sample_batch(sc)).summary().decisions();
  EXPECT_EQ(d.pipeline_stages(), 2u);
  EXPECT_EQ(d.tensor_parallel(), 2u);
  EXPECT_EQ(d.context_parallel(), 2u);
  EXPECT_EQ(d.data_parallel(), 2u);
  EXPECT_EQ(d.checkpointed_layer_chunks(), d.layer_chunks());
}

TEST(PlanDecisions, Seq1F1BCheckpointedLayers) {
  const auto sc = quickstart("seq1f1b", {"plan.seq1f1b.checkpointed_layers=3", "plan.seq1f1b.slices=2"});
  const auto d = make_planner("seq1f1b", sc)->plan(sc, sample_batch(sc)).summary().decisions();
  ASSERT_EQ(d.slice_counts_size(), 1);
  EXPECT_EQ(d.slice_counts(0), 2u);
  EXPECT_EQ(d.checkpointed_layer_chunks(), 3u * d.pipeline_stages() * d.chunks());
  for (const auto& stage : d.checkpointing()) EXPECT_EQ(stage.most_checkpointed_layers(), 3u);
}

TEST(PlanDecisions, EppIlpStatusWhenMemoryIsTight) {
  // Long sequences on a tight memory budget: some pipeline needs the checkpoint ILP.
  const auto sc = quickstart("epp", {"workload.max_length=65536", "workload.lengths.fixed=65536",
                                     "plan.memory_fraction=0.6"});
  const auto d = make_planner("epp", sc)->plan(sc, sample_batch(sc)).summary().decisions();
  EXPECT_GT(d.checkpointed_layer_chunks(), 0u);
  EXPECT_LT(d.checkpointed_layer_chunks(), d.layer_chunks());
  bool any_solved = false;
  for (const auto& solve : d.solves()) any_solved = any_solved || solved(solve.status());
  EXPECT_TRUE(any_solved);
}


// workload.repeats: global_batch / repeats lengths drawn, the draw repeated.
TEST(SampleBatch, RepeatsTheDraw) {
  const auto sc = testing::load_quickstart({"workload.global_batch=12", "workload.repeats=3"});
  const auto batch = sample_batch(sc);
  ASSERT_EQ(batch.size(), 12u);
  const std::vector<std::uint64_t> drawn(batch.begin(), batch.begin() + 4);
  EXPECT_EQ(drawn, sample_batch(testing::load_quickstart({"workload.global_batch=4"})));
  for (int k = 1; k < 3; ++k) EXPECT_TRUE(std::equal(drawn.begin(), drawn.end(), batch.begin() + 4 * k)) << k;
  EXPECT_THROW(testing::load_quickstart({"workload.global_batch=12", "workload.repeats=5"}), InputError);
}

}  // namespace
}  // namespace eppsim
