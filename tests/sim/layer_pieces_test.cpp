#include "sim/plan/layer_pieces.h"

#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "models/compute_cost.h"
#include "models/sequence_parallel_cost.h"
#include "sim/plan/ulysses.h"
#include "test_scenarios.h"
#include "schedule/program_ops.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

// llama3-8b (GQA: 8 KV heads) on 1 x 8 GPUs.
ResolvedScenario gqa_scenario() {
  return testing::test_scenario(1, 8, R"(
    name: "pieces" seed: 3 model { preset: "llama3-8b" }
    workload { lengths { fixed: 8192 } global_batch: 4 max_length: 8192 }
    plan { strategy: "ulysses" ulysses { sp_degree: 4 } })");
}

const std::vector<Segment> kSegments{{6000, 0}, {2192, 0}};

UlyssesGroup sp4() {
  UlyssesGroup sp{7, 4, {}};
  sp.split.add(proto::SEQUENCE_PARALLEL, 7, 4);
  return sp;
}

TEST(UlyssesLayerPieces, ForwardRunsQkvAndOutputAllToAllsBetweenTheParts) {
  const auto sc = gqa_scenario();
  const auto pieces = ulysses_layer_pieces(sc, Pass::Forward, 0, 2, 5, false, kSegments, sp4());
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].op.layer_part(), proto::PRE_ATTENTION);
  EXPECT_EQ(pieces[1].op.layer_part(), proto::ATTENTION);
  EXPECT_EQ(pieces[2].op.layer_part(), proto::POST_ATTENTION);
  // Q+K+V of this rank's 8192/4 tokens: (h + 2 kv) wide, h = 4096, kv = 1024, bf16.
  EXPECT_EQ(pieces[0].all_to_all_bytes, 2048ull * (4096 + 2 * 1024) * 2);
  EXPECT_EQ(pieces[1].all_to_all_bytes, 2048ull * 4096 * 2);  // the attention output
  EXPECT_EQ(pieces[2].all_to_all_bytes, 0u);
  for (const auto& p : pieces) {
    EXPECT_EQ(p.all_to_all_group, p.all_to_all_bytes > 0 ? 7u : 0u);
    EXPECT_EQ(p.op.first_layer(), 5u);
    EXPECT_EQ(p.op.layer_count(), 1u);
    EXPECT_EQ(p.op.shards(), 4u);
    EXPECT_EQ(p.op.chunk(), 2u);
  }
}

TEST(UlyssesLayerPieces, BackwardRunsInReverseWithTheGradientsAllToAlls) {
  const auto sc = gqa_scenario();
  const auto pieces = ulysses_layer_pieces(sc, Pass::Backward, 0, 0, 5, false, kSegments, sp4());
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].op.layer_part(), proto::POST_ATTENTION);
  EXPECT_EQ(pieces[1].op.layer_part(), proto::ATTENTION);
  EXPECT_EQ(pieces[2].op.layer_part(), proto::PRE_ATTENTION);
  EXPECT_EQ(pieces[0].all_to_all_bytes, 2048ull * 4096 * 2);                 // d(output)
  EXPECT_EQ(pieces[1].all_to_all_bytes, 2048ull * (4096 + 2 * 1024) * 2);    // dQ + dK + dV
  EXPECT_EQ(pieces[2].all_to_all_bytes, 0u);
}

TEST(UlyssesLayerPieces, PartsCostWhatTheWholeLayerCosts) {
  const auto sc = gqa_scenario();
  for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Recompute}) {
    const auto pieces = ulysses_layer_pieces(sc, pass, 0, 0, 31, true, kSegments, sp4());
    const auto whole = priced_compute_op(sc, pass, 0, 0, 31, 1, true, kSegments, sp4().split);
    std::int64_t ns = 0;
    for (const auto& p : pieces) ns += p.op.estimated_duration_ns();
    EXPECT_NEAR(static_cast<double>(ns), static_cast<double>(whole.estimated_duration_ns()), 3.0);
    EXPECT_NEAR(pieces_flops(pieces), whole.flops(), 1e-9 * whole.flops());
    for (const auto& p : pieces) EXPECT_TRUE(p.op.includes_lm_head());
  }
}

TEST(UlyssesStagePieces, DegreeOneIsOneWholeOpAndBackwardStartsAtTheLastLayer) {
  const auto sc = gqa_scenario();
  const auto one = ulysses_stage_pieces(sc, Pass::Forward, 1, 0, 8, 8, true, kSegments, UlyssesGroup{});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].op.layer_part(), proto::LAYER_WHOLE);
  EXPECT_EQ(one[0].op.layer_count(), 8u);
  EXPECT_EQ(one[0].op.shards(), 0u);
  EXPECT_EQ(one[0].all_to_all_bytes, 0u);

  const auto backward = ulysses_stage_pieces(sc, Pass::Backward, 1, 0, 8, 8, true, kSegments, sp4());
  ASSERT_EQ(backward.size(), 24u);
  EXPECT_EQ(backward.front().op.first_layer(), 15u);
  EXPECT_TRUE(backward.front().op.includes_lm_head());
  EXPECT_EQ(backward.back().op.first_layer(), 8u);
  EXPECT_FALSE(backward.back().op.includes_lm_head());
  int all_to_alls = 0;
  for (const auto& p : backward) all_to_alls += p.all_to_all_bytes > 0;
  EXPECT_EQ(all_to_alls, 16);  // two per layer
}

TEST(UlyssesSchedule, TwoAllToAllsPerLayerAndPass) {
  const auto sc = gqa_scenario();
  const std::vector<std::uint64_t> batch(4, 8192);
  const auto schedule = make_planner("ulysses", sc)->plan(sc, batch);
  const std::uint32_t layers = sc.model.layers;
  std::map<proto::Phase, int> passes;  // forward / backward passes of layer 0 on rank 0
  int all_to_alls = 0;
  for (const OpView op : ops_of(schedule, 0)) {
    if (op.is_compute() && compute_of(schedule, op).first_layer() == 0 && compute_of(schedule, op).layer_part() == proto::ATTENTION) {
      ++passes[compute_of(schedule, op).phase()];
    }
    if (op.is_collective() && op.collective_kind() == proto::ALL_TO_ALL) {
      ++all_to_alls;
      EXPECT_EQ(schedule.groups(static_cast<int>(op.group())).ranks_size(), 4);
    }
  }
  ASSERT_GT(passes[proto::FORWARD], 0);
  EXPECT_EQ(passes[proto::FORWARD], passes[proto::BACKWARD]);
  EXPECT_EQ(all_to_alls, 2 * static_cast<int>(layers) * (passes[proto::FORWARD] + passes[proto::BACKWARD]));
  EXPECT_GT(testing::simulate_step_ns(sc, schedule), 0);
}

}  // namespace
}  // namespace eppsim
