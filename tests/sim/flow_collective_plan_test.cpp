// A collective spelled out for the flow engine: the cost model's route
// (members in its ring order, the algorithm it prices) and its flows,
// channels merged when they share one path.
#include "sim/engine/flow_collective_plan.h"

#include <algorithm>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "tests/sim/flow_fixture.h"

namespace eppsim {
namespace {

proto::CollectiveOp all_reduce(proto::CollectiveAlgorithm algorithm, std::uint64_t bytes) {
  proto::CollectiveOp c;
  c.set_kind(proto::ALL_REDUCE);
  c.set_algorithm(algorithm);
  c.set_size_bytes(bytes);
  return c;
}

TEST(FlowCollectivePlan, MembersInChipOrderAndOneFlowPerRingHop) {
  // 4 nodes of 2 chips, one NIC per chip: a ring over one chip of each node.
  std::shared_ptr<const Topology> topology = build_topology(
      testing::simple_topology(4, 2, testing::link(300e9, 1e-6), testing::link(50e9, 4e-6)));
  const std::vector<VertexId> chip_of_rank{6, 4, 2, 0};  // rank r on chip 6 - 2r
  const testing::RoutedTestCost cost(topology, chip_of_rank);
  const std::vector<std::uint32_t> group{0, 1, 2, 3};
  std::vector<PlatformFlow> flows;
  const CollectivePlan plan =
      plan_collective(all_reduce(proto::RING, 1 << 20), group, chip_of_rank, *topology, cost, flows);

  EXPECT_EQ(plan.members, (std::vector<std::uint32_t>{3, 2, 1, 0}));  // chips 0, 2, 4, 6
  EXPECT_EQ(plan.position_of_rank.at(3), 0u);
  EXPECT_EQ(plan.position_of_rank.at(0), 3u);
  ASSERT_EQ(plan.steps.channels, 1u);
  ASSERT_EQ(plan.place.size(), plan.steps.layouts.size());
  // Every flow joins two members' chips, and each ring hop of the single
  // ring (0 -> 2 -> 4 -> 6 -> 0) is among them.
  for (const PlatformFlow& f : flows) {
    EXPECT_TRUE(std::count(chip_of_rank.begin(), chip_of_rank.end(), f.src) == 1);
    EXPECT_TRUE(std::count(chip_of_rank.begin(), chip_of_rank.end(), f.dst) == 1);
    EXPECT_EQ(f.channel, 0u);
  }
  for (const PlatformFlow hop : {PlatformFlow{0, 2, 0}, PlatformFlow{2, 4, 0}, PlatformFlow{4, 6, 0}, PlatformFlow{6, 0, 0}}) {
    EXPECT_NE(std::find(flows.begin(), flows.end(), hop), flows.end()) << hop.src << " -> " << hop.dst;
  }
}

TEST(FlowCollectivePlan, AppendsToTheFlowsItIsGiven) {
  std::shared_ptr<const Topology> topology = build_topology(
      testing::simple_topology(2, 2, testing::link(300e9, 1e-6), testing::link(50e9, 4e-6)));
  const std::vector<VertexId> chip_of_rank{0, 2};
  const testing::RoutedTestCost cost(topology, chip_of_rank);
  const std::vector<std::uint32_t> group{0, 1};
  std::vector<PlatformFlow> flows{{1, 3, 0}};
  plan_collective(all_reduce(proto::RING, 4096), group, chip_of_rank, *topology, cost, flows);
  ASSERT_GE(flows.size(), 3u);
  EXPECT_EQ(flows.front(), (PlatformFlow{1, 3, 0}));
  EXPECT_NE(std::find(flows.begin() + 1, flows.end(), PlatformFlow{0, 2, 0}), flows.end());
  EXPECT_NE(std::find(flows.begin() + 1, flows.end(), PlatformFlow{2, 0, 0}), flows.end());
}

}  // namespace
}  // namespace eppsim
