#include "scenario/cost_model_factory.h"

#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/network/closed_form_network.h"
#include "models/shaped_compute_cost.h"
#include "base/errors.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

// `nodes` (2) x 8 A100-80GB, NVLink 300 GB/s, 25 GB/s NICs; `cluster_extra` and
// `cost_model` go into the cluster and cost_model blocks.
ResolvedScenario scenario(const std::string& cluster_extra = "", const std::string& cost_model = "",
                          std::uint32_t nodes = 2) {
  const std::string text = fmt::format(R"(
    name: "factory"
    model {{ preset: "llama2-7b" }}
    cluster {{
      nodes: {} gpus_per_node: 8
      gpu {{ preset: "A100-80GB" }}
      intra_node {{ bandwidth: "300GB/s" latency: "2us" }}
      inter_node {{ bandwidth: "25GB/s" latency: "5us" }}
      {}
    }}
    workload {{ lengths {{ fixed: 4096 }} global_batch: 16 max_length: 4096 }}
    plan {{ packed_1f1b {{ pipeline_stages: 2 micro_batch_tokens: 4096 }} }}
    cost_model {{ {} }}
  )",
                                       nodes, cluster_extra, cost_model);
  return resolve_scenario(parse_scenario_text(text, "factory.textproto"), "factory.textproto", ".");
}

// A non-blocking two-level fat-tree whose links match the NICs of scenario().
constexpr const char* kFatTree = R"(
  topology {
    name: "fat-tree"
    node { kind: SWITCHED link { bandwidth: "300GB/s" latency: "2us" } }
    fat_tree { radix: 16 levels: 2 nics_per_chip: 1 link { bandwidth: "25GB/s" latency: "1us" } }
  })";

std::vector<std::uint32_t> ranks(std::uint32_t n) {
  std::vector<std::uint32_t> out(n);
  std::iota(out.begin(), out.end(), 0u);
  return out;
}

TEST(CostModelFactory, WithoutATopologyTheClosedFormsPriceTheDefaultPlacement) {
  const ResolvedScenario sc = scenario();
  EXPECT_EQ(sc.cost.ingredients->network_pricing, NetworkPricing::ClosedForm);
  ASSERT_NE(sc.cost.model, nullptr);
  const ClosedFormNetwork closed(sc.cluster.intra_node, sc.cluster.inter_node,
                                 {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1});
  const Bytes size(64 << 20);
  for (auto kind : {CommKind::AllReduce, CommKind::AllGather, CommKind::ReduceScatter,
                    CommKind::AllToAll, CommKind::Broadcast}) {
    EXPECT_EQ(sc.cost.model->collective_time(kind, CollectiveAlgorithm::Auto, ranks(16), size),
              closed.collective_time(kind, CollectiveAlgorithm::Auto, ranks(16), size));
  }
  EXPECT_EQ(sc.cost.model->p2p_time(7, 8, size), closed.p2p_time(7, 8, size));
  EXPECT_DOUBLE_EQ(sc.cost.model->optimizer_time(Bytes(2'000'000'000)).value, 2e9 / sc.cluster.gpu.memory_bandwidth.value);
}

TEST(CostModelFactory, RoutedAgreesWithTheClosedFormsOnANonBlockingTree) {
  const ResolvedScenario routed = scenario(kFatTree);
  const ResolvedScenario closed = scenario(kFatTree, "network: CLOSED_FORM");
  EXPECT_EQ(routed.cost.ingredients->network_pricing, NetworkPricing::Routed);
  EXPECT_EQ(closed.cost.ingredients->network_pricing, NetworkPricing::ClosedForm);
  const Bytes size(1ull << 30);
  for (auto kind : {CommKind::AllReduce, CommKind::AllGather, CommKind::ReduceScatter}) {
    for (const auto& group : {ranks(8), ranks(16)}) {
      const double c = closed.cost.model->collective_time(kind, CollectiveAlgorithm::Ring, group, size).value;
      EXPECT_NEAR(routed.cost.model->collective_time(kind, CollectiveAlgorithm::Ring, group, size).value, c, 0.02 * c)
          << static_cast<int>(kind) << " over " << group.size();
    }
  }
  const double c = closed.cost.model->p2p_time(0, 8, size).value;
  EXPECT_NEAR(routed.cost.model->p2p_time(0, 8, size).value, c, 0.02 * c);
}

TEST(CostModelFactory, PlacementsAreChecked) {
  const ResolvedScenario sc = scenario();
  EXPECT_NO_THROW(make_cost_model(sc, std::vector<RankPlacement>{{1, 7}, {0, 0}}));
  EXPECT_THAT(
      [&] {
        try {
          make_cost_model(sc, std::vector<RankPlacement>{{0, 0}, {2, 0}});
        } catch (const InputError& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("rank 1 is placed on node 2, but the cluster has 2 nodes"));
  EXPECT_THROW(make_cost_model(sc, std::vector<RankPlacement>{{0, 8}}), InputError);
  const ResolvedScenario failed = scenario("failures { nodes: [0] }");
  EXPECT_THROW(make_cost_model(failed, std::vector<RankPlacement>{{0, 0}}), InputError);
}

TEST(CostModelFactory, DefaultPlacementSkipsFailedNodes) {
  const ResolvedScenario failed = scenario("failures { nodes: [1] }", "", 3);
  const auto placement = default_placement(failed, 16);
  EXPECT_EQ(placement[7].node, 0u);
  EXPECT_EQ(placement[8].node, 2u);
  EXPECT_EQ(placement[9].local_gpu, 1u);
  EXPECT_THROW(default_placement(failed, 17), InputError);
}

}  // namespace
}  // namespace eppsim

namespace eppsim {
namespace {

// A calibration's collective fits wrap the network: a fit of the same kind,
// group size and node-crossing prices the collective, the closed forms the rest.
TEST(CostModelFactory, CollectiveFitsPriceWhatTheyCover) {
  const std::string fits = R"(calibration {
        collectives { kind: "all-reduce" group_size: 8 crosses_nodes: false latency_s: 1e-5 bandwidth_Bps: 1e11 }
        collectives { kind: "send-recv" group_size: 2 crosses_nodes: true latency_s: 4e-6 bandwidth_Bps: 2e10 }
      })";
  const ResolvedScenario sc = scenario("", fits);
  // Only collective fits: compute stays the default model.
  EXPECT_NE(dynamic_cast<const ShapedComputeCost*>(sc.cost.compute.get()), nullptr);
  ASSERT_EQ(sc.cost.ingredients->comm_fits.size(), 2u);
  const ClosedFormNetwork closed(sc.cluster.intra_node, sc.cluster.inter_node,
                                 {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1});
  const Bytes size(64 << 20);
  const auto eight = ranks(8);  // node 0
  EXPECT_DOUBLE_EQ(sc.cost.model->collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, eight, size).value,
                   1e-5 + 2.0 * 7 / 8 * (64 << 20) / 1e11);
  // Other kinds, sizes, node-crossings: the closed forms.
  EXPECT_EQ(sc.cost.model->collective_time(CommKind::AllGather, CollectiveAlgorithm::Auto, eight, size),
            closed.collective_time(CommKind::AllGather, CollectiveAlgorithm::Auto, eight, size));
  EXPECT_EQ(sc.cost.model->collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, ranks(16), size),
            closed.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, ranks(16), size));
  const std::vector<std::uint32_t> across{4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_EQ(sc.cost.model->collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, across, size),
            closed.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, across, size));
  EXPECT_DOUBLE_EQ(sc.cost.model->p2p_time(7, 8, size).value, 4e-6 + (64 << 20) / 2e10);
  EXPECT_EQ(sc.cost.model->p2p_time(6, 7, size), closed.p2p_time(6, 7, size));

  // Another placement: the node-crossing follows it (ranks 0 and 1 on two nodes).
  const std::vector<RankPlacement> split{{0, 0}, {1, 0}};
  const auto cost = make_cost_model(sc, split);
  EXPECT_DOUBLE_EQ(cost->p2p_time(0, 1, size).value, 4e-6 + (64 << 20) / 2e10);

  // A routed network is wrapped the same way.
  const ResolvedScenario routed = scenario(kFatTree, fits);
  EXPECT_DOUBLE_EQ(routed.cost.model->collective_time(CommKind::AllReduce, CollectiveAlgorithm::Ring, eight, size).value,
                   1e-5 + 2.0 * 7 / 8 * (64 << 20) / 1e11);
}

}  // namespace
}  // namespace eppsim
