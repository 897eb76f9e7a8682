#include "sim/plan/zero3_layers.h"

#include <gtest/gtest.h>

#include "models/network/closed_form_network.h"
#include "sim/engine/analytic_engine.h"
#include "test_scenarios.h"
#include "schedule/program_ops.h"
#include "schedule/shared_compute.h"

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
// layer `ms` of compute, gathers prefetched `depth` ahead; rank 1 sits the
// micro-batch out when `rank1_idle`.
proto::Schedule one_micro_batch(double ms, bool rank1_idle = false, std::uint32_t depth = 1) {
  ScheduleBuilder b(2, "zero3", "test");
  const Zero3Setup setup = add_zero3(b, 2);
  for (std::uint32_t r = 0; r < 2; ++r) {
    b.place(r, 0, r);
    Zero3LayerProgram program(b, r, setup, Zero3LayerBytes{kModelBytes / kLayers, kModelBytes / kLayers}, depth);
    EXPECT_EQ(program.layer_bytes().weights, 2'000'000u);
    const bool idle = rank1_idle && r == 1;
    for (std::uint32_t l = 0; l < kLayers; ++l) {
      LayerPiece piece{layer_op(proto::FORWARD, l, ms)};
      program.visit(idle ? std::span<LayerPiece>() : std::span<LayerPiece>(&piece, 1), false);
    }
    for (std::uint32_t l = kLayers; l-- > 0;) {
      LayerPiece piece{layer_op(proto::BACKWARD, l, 2 * ms)};
      program.visit(idle ? std::span<LayerPiece>() : std::span<LayerPiece>(&piece, 1), true);
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
    for (const OpView op : ops_of(program)) {
      if (!op.is_collective()) continue;
      gathers += op.collective_kind() == proto::ALL_GATHER;
      reduces += op.collective_kind() == proto::REDUCE_SCATTER;
      const bool gather = op.collective_kind() == proto::ALL_GATHER;
      EXPECT_EQ(op.size_bytes(), gather ? 1'000'000u : 2'000'000u);
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
}

// At depth d, the gather of visit v waits for visit v-1-d's compute (the buffer
// it refills); visits 0..d gather at once.
void expect_prefetch_depth(std::uint32_t depth) {
  SCOPED_TRACE(depth);
  const auto schedule = one_micro_batch(10.0, false, depth);
  const auto ops = ops_of(schedule, 0);
  std::vector<std::uint32_t> gathers, computes;
  for (const OpView op : ops) {
    if (op.is_collective() && op.collective_kind() == proto::ALL_GATHER) gathers.push_back(op.index());
    if (op.is_compute() && compute_of(schedule, op).phase() != proto::OPTIMIZER) computes.push_back(op.index());
  }
  ASSERT_EQ(gathers.size(), computes.size());
  for (std::size_t v = 0; v < gathers.size(); ++v) {
    const auto deps = ops[gathers[v]].deps();
    if (v <= depth) {
      EXPECT_EQ(deps.size(), 0u);
      continue;
    }
    ASSERT_EQ(deps.size(), 1u);
    EXPECT_EQ(deps[0], computes[v - 1 - depth]);
  }
}

TEST(Zero3Layers, PrefetchDepthSetsWhichComputeAGatherWaitsFor) {
  for (std::uint32_t depth : {0u, 1u, 2u}) expect_prefetch_depth(depth);
}

TEST(Zero3Layers, DepthZeroExposesEveryGather) {
  // On demand: each of the 8 visits waits 1 ms for its gather; the last
  // reduce-scatter shows after the compute.
  EXPECT_NEAR(step_ms(one_micro_batch(10.0, false, 0)), 8.0 + 120.0 + 1.0, 1e-6);
  // A deeper prefetch hides no more than depth 1 when compute keeps up.
  EXPECT_NEAR(step_ms(one_micro_batch(10.0, false, 2)), 1.0 + 120.0 + 1.0, 1e-6);
}

TEST(Zero3Layers, MicroBatchEstimateFollowsTheEngine) {
  const Zero3LayerSeconds zero{1e-3, 1e-3};
  for (std::uint32_t depth : {0u, 1u}) {
    SCOPED_TRACE(depth);
    EXPECT_NEAR(zero3_micro_batch_seconds(zero, kLayers, 0.120, depth) * 1e3,
                step_ms(one_micro_batch(10.0, false, depth)), 1e-6);
  }
}

TEST(Zero3Layers, ChangingGroupsFetchOnDemandUnlessThePrefetchSurvives) {
  Zero3Options options;
  options.prefetch_depth = 2;
  EXPECT_TRUE(options.prefetch_survives_group_changes);  // the default: FSDP, as FlexSP's runtime
  EXPECT_EQ(effective_prefetch_depth(options, true), 2u);
  options.prefetch_survives_group_changes = false;
  EXPECT_EQ(effective_prefetch_depth(options, false), 2u);
  EXPECT_EQ(effective_prefetch_depth(options, true), 0u);
}

TEST(Zero3Layers, ReduceScatterBytesFollowTheDtype) {
  const auto sc = testing::fixed_length_scenario(1, 8, 1, 8, 4096, 4096);
  Zero3Options options;  // unset: the model's precision
  const Zero3LayerBytes training = zero3_layer_bytes(sc.model, options);
  EXPECT_EQ(training.gradients, training.weights);
  options.reduce_scatter_bytes_per_element = 2.0;  // "bf16"
  EXPECT_EQ(zero3_layer_bytes(sc.model, options).gradients,
            static_cast<std::uint64_t>(sc.model.total_params() * 2.0) / sc.model.layers);
  options.reduce_scatter_bytes_per_element = 4.0;  // "fp32"
  const Zero3LayerBytes fp32 = zero3_layer_bytes(sc.model, options);
  EXPECT_EQ(fp32.weights, training.weights);
  EXPECT_EQ(fp32.gradients, static_cast<std::uint64_t>(sc.model.total_params() * 4.0) / sc.model.layers);
  EXPECT_GT(zero3_layer_seconds(sc, fp32).reduce_scatter, zero3_layer_seconds(sc, training).reduce_scatter);
}

TEST(Zero3Layers, ResolvesTheScenarioOptions) {
  auto proto = testing::fixed_length_scenario(1, 8, 1, 8, 4096, 4096).proto;
  EXPECT_EQ(resolve_zero3_options(resolve_scenario(proto, "t", ".")).prefetch_depth, 1u);
  proto.mutable_plan()->mutable_zero3()->set_prefetch_depth(0);
  proto.mutable_plan()->mutable_zero3()->set_reduce_scatter_dtype("fp32");
  const Zero3Options options = resolve_zero3_options(resolve_scenario(proto, "t", "."));
  EXPECT_EQ(options.prefetch_depth, 0u);
  EXPECT_TRUE(options.prefetch_survives_group_changes);
  EXPECT_EQ(options.reduce_scatter_bytes_per_element, 4.0);
  proto.mutable_plan()->mutable_zero3()->set_reduce_scatter_dtype("fp16");
  EXPECT_THROW(resolve_zero3_options(resolve_scenario(proto, "t", ".")), InputError);
}

TEST(Zero3Layers, IdleRankStillJoinsEveryCollective) {
  // Rank 1 has nothing to run but must gather and reduce with rank 0.
  EXPECT_NEAR(step_ms(one_micro_batch(10.0, true)), 1.0 + 120.0 + 1.0, 1e-6);
}

TEST(Zero3Layers, PlannerEstimateIsTheEnginesClosedForm) {
  // 2 nodes x 8 GPUs: the hierarchical forms, as the engine prices them.
  const auto sc = testing::fixed_length_scenario(2, 8, 1, 16, 4096, 4096);
  const std::uint64_t model = 14'000'000'000ull;
  const auto est = zero3_layer_seconds(sc, Zero3LayerBytes{model / 32, model / 32});
  const double layer = static_cast<double>(model / 32);
  const auto& intra = sc.cluster.intra_node;
  const auto& inter = sc.cluster.inter_node;
  const auto round = [](const LinkParams& link, double bytes) { return link.latency.value + bytes / link.bandwidth.value; };
  // All-gather of layer/16 per rank: hierarchical (a cross-node ring of 2, then
  // node rings of 8 over both nodes' inputs) or one ring of 16.
  const double shard = layer / 16;
  EXPECT_NEAR(est.gather, std::min(round(inter, shard) + 7 * round(intra, 2 * shard), 15 * round(inter, shard)),
              1e-12);
  // Reduce-scatter of the layer: node rings of 8, then cross-node rings of 2, or one ring of 16.
  EXPECT_NEAR(est.reduce_scatter,
              std::min(7 * round(intra, layer / 8) + round(inter, layer / 16), 15 * round(inter, layer / 16)), 1e-12);
  EXPECT_GT(est.gather, 0.0);
}

}  // namespace
}  // namespace eppsim
