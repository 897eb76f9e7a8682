#include "sim/plan/zero3_layers.h"

#include <gtest/gtest.h>

#include "models/closed_form_network.h"
#include "sim/engine/analytic_engine.h"
#include "test_scenarios.h"

namespace eppsim {
namespace {

// Two ranks on one node, 1 GB/s and no latency: a layer of 2 MB gathers (each
// rank's 1 MB input) in 1 ms and reduce-scatters in 1 ms.
constexpr std::uint32_t kLayers = 4;
constexpr std::uint64_t kModelBytes = 2'000'000ull * kLayers;
const LinkParams kLink{BytesPerSecond(1e9), Seconds(0.0)};

proto::ComputeOp layer_op(proto::Phase phase, std::uint32_t layer, double ms) {
  proto::ComputeOp op;
  op.set_phase(phase);
  op.set_first_layer(layer);
  op.set_layer_count(1);
  op.set_estimated_duration_ns(static_cast<std::int64_t>(ms * 1e6));
  return op;
}

// One micro-batch on both ranks: forward layers 0..L-1, backward L-1..0, each
// layer `ms` of compute; rank 1 sits the micro-batch out when `rank1_idle`.
proto::Schedule one_micro_batch(double ms, bool rank1_idle = false) {
  ScheduleBuilder b(2, "zero3", "test");
  const Zero3Setup setup = add_zero3(b, 2);
  for (std::uint32_t r = 0; r < 2; ++r) {
    b.place(r, 0, r);
    Zero3LayerProgram program(b, r, setup, kModelBytes, kLayers);
    EXPECT_EQ(program.layer_weight_bytes(), 2'000'000u);
    const bool idle = rank1_idle && r == 1;
    for (std::uint32_t l = 0; l < kLayers; ++l) {
      const LayerPiece piece{layer_op(proto::FORWARD, l, ms)};
      program.visit(idle ? std::span<const LayerPiece>() : std::span<const LayerPiece>(&piece, 1), false);
    }
    for (std::uint32_t l = kLayers; l-- > 0;) {
      const LayerPiece piece{layer_op(proto::BACKWARD, l, 2 * ms)};
      program.visit(idle ? std::span<const LayerPiece>() : std::span<const LayerPiece>(&piece, 1), true);
    }
    proto::ComputeOp end;
    end.set_phase(proto::OPTIMIZER);
    b.compute(r, setup.compute, program.tail(), end);
  }
  return b.finish();
}

// Step time with every collective at its uncontended time, so that each
// expectation below is a sum of layer and collective times (the backward's
// gathers and reduce-scatters, on their own streams, would otherwise share the
// two ranks' ports: shared endpoints are tested in analytic_engine_test).
double step_ms(const proto::Schedule& schedule) {
  const testing::UniformNetworkCost network(kLink, 2);
  AnalyticEngineOptions uncontended;
  uncontended.share_endpoints = false;
  return static_cast<double>(
             run_analytic(testing::with_planner_estimates(schedule), network, uncontended).step_time_ns()) *
         1e-6;
}

TEST(Zero3Layers, EveryVisitGathersAndEveryBackwardVisitReduces) {
  const auto schedule = one_micro_batch(10.0);
  for (const auto& program : schedule.programs()) {
    int gathers = 0, reduces = 0;
    for (const auto& op : program.ops()) {
      if (!op.has_collective()) continue;
      gathers += op.collective().kind() == proto::ALL_GATHER;
      reduces += op.collective().kind() == proto::REDUCE_SCATTER;
      const bool gather = op.collective().kind() == proto::ALL_GATHER;
      EXPECT_EQ(op.collective().size_bytes(), gather ? 1'000'000u : 2'000'000u);
    }
    EXPECT_EQ(gathers, 2 * static_cast<int>(kLayers));
    EXPECT_EQ(reduces, static_cast<int>(kLayers));
  }
}

TEST(Zero3Layers, GathersHideBehindComputeButTheFirst) {
  // 120 ms of compute; only the first gather and the last reduce-scatter show.
  EXPECT_NEAR(step_ms(one_micro_batch(10.0)), 1.0 + 120.0 + 1.0, 1e-6);
}

TEST(Zero3Layers, TwoBuffersBoundThePrefetch) {
  // 0.1 ms layers: the gather stream is the bottleneck. Gather v (1 ms each, back
  // to back) ends at v+1 ms; the last backward layer ends 0.2 ms later and its
  // reduce-scatter 1 ms after that.
  EXPECT_NEAR(step_ms(one_micro_batch(0.1)), 8.0 + 0.2 + 1.0, 1e-6);
  // The gather of visit v waits for visit v-2's compute: its buffer.
  const auto schedule = one_micro_batch(10.0);
  const auto& ops = schedule.programs(0).ops();
  std::vector<int> gathers, computes;
  for (int i = 0; i < ops.size(); ++i) {
    if (ops[i].has_collective() && ops[i].collective().kind() == proto::ALL_GATHER) gathers.push_back(i);
    if (ops[i].has_compute() && ops[i].compute().phase() != proto::OPTIMIZER) computes.push_back(i);
  }
  ASSERT_EQ(gathers.size(), computes.size());
  EXPECT_EQ(ops[gathers[0]].deps_size(), 0);
  EXPECT_EQ(ops[gathers[1]].deps_size(), 0);
  for (std::size_t v = 2; v < gathers.size(); ++v) {
    ASSERT_EQ(ops[gathers[v]].deps_size(), 1);
    EXPECT_EQ(static_cast<int>(ops[gathers[v]].deps(0)), computes[v - 2]);
  }
}

TEST(Zero3Layers, IdleRankStillJoinsEveryCollective) {
  // Rank 1 has nothing to run but must gather and reduce with rank 0.
  EXPECT_NEAR(step_ms(one_micro_batch(10.0, true)), 1.0 + 120.0 + 1.0, 1e-6);
}

TEST(Zero3Layers, PlannerEstimateIsTheEnginesClosedForm) {
  // 2 nodes x 8 GPUs: the hierarchical forms, as the engine prices them.
  const auto sc = testing::fixed_length_scenario(2, 8, 1, 16, 4096, 4096);
  const std::uint64_t model = 14'000'000'000ull;
  const auto est = zero3_layer_seconds(sc, model, 32);
  const Bytes layer(model / 32);
  const auto& intra = sc.cluster.intra_node;
  const auto& inter = sc.cluster.inter_node;
  EXPECT_NEAR(est.gather,
              std::min(hierarchical_collective_time(CollectiveKind::AllGather, 8, 2, Bytes(layer.count / 16), intra, inter).value,
                       ring_collective_time(CollectiveKind::AllGather, 16, Bytes(layer.count / 16), inter).value),
              1e-12);
  EXPECT_NEAR(est.reduce_scatter,
              std::min(hierarchical_collective_time(CollectiveKind::ReduceScatter, 8, 2, layer, intra, inter).value,
                       ring_collective_time(CollectiveKind::ReduceScatter, 16, layer, inter).value),
              1e-12);
  EXPECT_GT(est.gather, 0.0);
}

}  // namespace
}  // namespace eppsim
