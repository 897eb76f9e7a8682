#include "sim/plan/plan_estimate.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "models/flexsp_preset.h"
#include "models/sequence_parallel_cost.h"
#include "test_scenarios.h"

namespace eppsim {
namespace {

// 2 nodes x 8 A100-80GB, llama2-7b (32 heads, 32 KV heads).
ResolvedScenario scenario() {
  return testing::test_scenario(2, 8, R"(
    name: "estimate"
    model { preset: "llama2-7b" }
    workload { lengths { fixed: 4096 } global_batch: 8 max_length: 32768 }
    plan { strategy: "ulysses" }
  )");
}

double whole_model(const ResolvedScenario& sc, Pass pass, std::span<const Segment> segments, std::uint32_t d) {
  const ChunkWork work{segments, sc.model.layers, true, true};
  return sc.cost.model->compute_time(ComputeWork{pass, work, LayerPart::Whole, d}).value;
}

TEST(PlanEstimate, DegreeOneIsForwardPlusBackwardOfTheWholeModel) {
  const auto sc = scenario();
  const PlanEstimate estimate(sc.model, *sc.cost.model);
  const std::array<Segment, 2> chunk{Segment{3000, 0}, Segment{1000, 2048}};
  EXPECT_DOUBLE_EQ(estimate.chunk_seconds(chunk, 1),
                   whole_model(sc, Pass::Forward, chunk, 1) + whole_model(sc, Pass::Backward, chunk, 1));
  EXPECT_DOUBLE_EQ(estimate.segment_seconds(chunk[0], 1), estimate.chunk_seconds(std::span(chunk).first(1), 1));
}

// At degree d the chunk's compute is this GPU's 1/d share, and every layer adds
// the all-to-alls of the chunk's new tokens over ranks 0..d-1 in each pass.
TEST(PlanEstimate, SequenceParallelAddsTheAllToAllsOfEveryLayerAndPass) {
  const auto sc = scenario();
  const PlanEstimate estimate(sc.model, *sc.cost.model);
  const std::array<Segment, 2> chunk{Segment{8192, 0}, Segment{4096, 0}};
  const std::vector<std::uint32_t> group{0, 1, 2, 3};
  double expected = whole_model(sc, Pass::Forward, chunk, 4) + whole_model(sc, Pass::Backward, chunk, 4);
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    expected += sc.model.layers * ulysses_layer_time(sc.model, 12288, group, pass, *sc.cost.model).value;
  }
  EXPECT_DOUBLE_EQ(estimate.chunk_seconds(chunk, 4), expected);
  EXPECT_LT(estimate.chunk_seconds(chunk, 4), estimate.chunk_seconds(chunk, 1));
  // Recompute: one more forward, with its all-to-alls.
  const double recompute = whole_model(sc, Pass::Recompute, chunk, 4) +
                           sc.model.layers * ulysses_layer_time(sc.model, 12288, group, Pass::Recompute, *sc.cost.model).value;
  EXPECT_NEAR(estimate.chunk_seconds(chunk, 4, true) - estimate.chunk_seconds(chunk, 4), recompute, 1e-12);
}

TEST(PlanEstimate, LayerForwardIsOneLayerWithoutEmbeddingOrHead) {
  const auto sc = scenario();
  const PlanEstimate estimate(sc.model, *sc.cost.model);
  const std::array<Segment, 1> chunk{Segment{4096, 0}};
  const ChunkWork one_layer{chunk, 1, false, false};
  EXPECT_DOUBLE_EQ(estimate.layer_forward_seconds(chunk, 2),
                   sc.cost.model->compute_time(ComputeWork{Pass::Forward, one_layer, LayerPart::Whole, 2}).value);
  EXPECT_LT(estimate.layer_forward_seconds(chunk, 1) * sc.model.layers, whole_model(sc, Pass::Forward, chunk, 1));
}

// Replicas get every sequence once, and the longest sequence (which outweighs
// the rest together) a replica of its own.
TEST(PlanEstimate, BalancesReplicasByWholeModelForward) {
  const auto sc = scenario();
  const PlanEstimate estimate(sc.model, *sc.cost.model);
  const std::vector<std::uint64_t> lengths{1024, 65536, 2048, 1024, 4096, 512, 2048};
  const Bins bins = estimate.balance_replicas(lengths, 2);
  ASSERT_EQ(bins.size(), 2u);
  std::vector<std::uint32_t> all;
  for (const auto& bin : bins) all.insert(all.end(), bin.begin(), bin.end());
  std::sort(all.begin(), all.end());
  std::vector<std::uint32_t> expected(lengths.size());
  std::iota(expected.begin(), expected.end(), 0u);
  EXPECT_EQ(all, expected);
  EXPECT_EQ(bins[0], std::vector<std::uint32_t>{1});
  EXPECT_EQ(estimate.balance_replicas(lengths, 2), bins);
}

// Over the FlexSP preset's cost model, a sequence's estimate is FlexSP's
// T_cmp + T_a2a: the Ulysses exchanges of 2 passes x L layers carry FlexSP's
// 4 h s / d elements per layer and pass (gpt-6.7b: MHA), 64K at d = 16 taking
// 2,130 + 793 ms.
TEST(PlanEstimate, OverTheFlexSpPresetIsFlexSpsSequenceTime) {
  const auto sc = testing::test_scenario(2, 8, R"(
    name: "estimate"
    model { preset: "gpt-6.7b" }
    workload { lengths { fixed: 4096 } global_batch: 8 max_length: 65536 }
    plan { strategy: "flexsp" }
  )");
  const FlexSpModel& gpt7b = *find_flexsp_model("gpt-7b");
  const FlexSpPresetCost preset(gpt7b, *sc.cost.model);
  const PlanEstimate estimate(sc.model, preset);
  const double s = 65536.0;
  const double compute = (gpt7b.alpha1_s_per_token2 * s * s + gpt7b.alpha2_s_per_token * s) / 16;
  const double all_to_all =
      4.0 * 2.0 * gpt7b.layers * gpt7b.hidden_size * s * 2.0 / 16 / flexsp_all_to_all_bandwidth().bandwidth(16).value;
  EXPECT_NEAR(estimate.segment_seconds(Segment{65536, 0}, 16), compute + all_to_all, 1e-9);
  EXPECT_NEAR(estimate.segment_seconds(Segment{65536, 0}, 16), 2.130 + 0.793, 0.001);
}

}  // namespace
}  // namespace eppsim
