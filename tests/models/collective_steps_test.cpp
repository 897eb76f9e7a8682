#include "models/collective_steps.h"

#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

using A = CollectiveAlgorithm;
using K = CommKind;

std::vector<std::uint32_t> nodes(std::uint32_t n, std::uint32_t per_node) {
  std::vector<std::uint32_t> out(n);
  for (std::uint32_t m = 0; m < n; ++m) out[m] = m / per_node;
  return out;
}

TEST(CollectiveSteps, RingAllReduceIsTwoNMinusOneRoundsOfAnNthPerChannel) {
  const auto steps = collective_steps(K::AllReduce, A::Ring, 2, nodes(8, 1), 1 << 20);
  EXPECT_EQ(steps.channels, 2u);
  ASSERT_EQ(steps.layouts.size(), 1u);
  EXPECT_EQ(steps.layouts[0].rings, (std::vector<std::vector<std::uint32_t>>{{0, 1, 2, 3, 4, 5, 6, 7}}));
  ASSERT_EQ(steps.phases.size(), 1u);
  EXPECT_EQ(steps.phases[0].rounds, 14u);
  EXPECT_EQ(steps.phases[0].shifts, std::vector<std::uint32_t>{1});
  EXPECT_DOUBLE_EQ(steps.phases[0].bytes, (1 << 20) / 16.0);
}

TEST(CollectiveSteps, RingKindsAndBroadcastChain) {
  const auto rs = collective_steps(K::ReduceScatter, A::Ring, 1, nodes(4, 1), 4000);
  EXPECT_EQ(rs.phases[0].rounds, 3u);
  EXPECT_DOUBLE_EQ(rs.phases[0].bytes, 1000);
  const auto ag = collective_steps(K::AllGather, A::Ring, 1, nodes(4, 1), 4000);
  EXPECT_EQ(ag.phases[0].rounds, 3u);
  EXPECT_DOUBLE_EQ(ag.phases[0].bytes, 4000);
  const auto bc = collective_steps(K::Broadcast, A::Ring, 4, nodes(4, 1), 4000);
  EXPECT_TRUE(bc.phases[0].chain);
  EXPECT_EQ(bc.phases[0].rounds, 1u);
  EXPECT_DOUBLE_EQ(bc.phases[0].bytes, 1000);
}

TEST(CollectiveSteps, TreeIsLatencyRoundsThenTwoPassesOfTheData) {
  const auto steps = collective_steps(K::AllReduce, A::Tree, 1, nodes(8, 1), 800);
  ASSERT_EQ(steps.phases.size(), 2u);
  EXPECT_EQ(steps.phases[0].rounds, 4u);  // 2 ceil(log2 8) - 2
  EXPECT_DOUBLE_EQ(steps.phases[0].bytes, 0);
  EXPECT_EQ(steps.phases[1].rounds, 2u);
  EXPECT_DOUBLE_EQ(steps.phases[1].bytes, 800);
  EXPECT_EQ(collective_steps(K::AllReduce, A::Tree, 1, nodes(2, 1), 800).phases.size(), 1u);
}

TEST(CollectiveSteps, HierarchicalRingsInsideNodesThenAcrossByLocalIndex) {
  const auto steps = collective_steps(K::AllReduce, A::Hierarchical, 4, nodes(8, 4), 8000);
  EXPECT_EQ(steps.channels, 1u);
  ASSERT_EQ(steps.layouts.size(), 2u);
  EXPECT_EQ(steps.layouts[0].rings, (std::vector<std::vector<std::uint32_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(steps.layouts[1].rings, (std::vector<std::vector<std::uint32_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  ASSERT_EQ(steps.phases.size(), 3u);
  EXPECT_EQ(steps.phases[0].rounds, 3u);
  EXPECT_DOUBLE_EQ(steps.phases[0].bytes, 2000);
  EXPECT_EQ(steps.phases[1].rounds, 2u);
  EXPECT_DOUBLE_EQ(steps.phases[1].bytes, 1000);
  EXPECT_EQ(steps.phases[2].layout, 0u);
  EXPECT_THROW(collective_steps(K::AllReduce, A::Hierarchical, 1, std::vector<std::uint32_t>{0, 0, 0, 1}, 8), std::invalid_argument);
  EXPECT_THROW(collective_steps(K::AllReduce, A::Hierarchical, 1, nodes(4, 1), 8), std::invalid_argument);
}

TEST(CollectiveSteps, AllToAllPairwiseRoundsOrEveryShiftAtOnce) {
  const auto pairwise = collective_steps(K::AllToAll, A::Ring, 4, nodes(4, 1), 4000);
  EXPECT_EQ(pairwise.channels, 1u);
  ASSERT_EQ(pairwise.phases.size(), 3u);
  for (std::uint32_t k = 0; k < 3; ++k) {
    EXPECT_EQ(pairwise.phases[k].shifts, std::vector<std::uint32_t>{k + 1});
    EXPECT_DOUBLE_EQ(pairwise.phases[k].bytes, 1000);
  }
  // Direct: a latency per send posted (n-2 rounds of 0-byte ring flows, the
  // last send's latency in the data round), then every shift at once.
  const auto direct = collective_steps(K::AllToAll, A::Direct, 1, nodes(4, 1), 4000);
  ASSERT_EQ(direct.phases.size(), 2u);
  EXPECT_EQ(direct.phases[0].rounds, 2u);
  EXPECT_EQ(direct.phases[0].bytes, 0.0);
  EXPECT_EQ(direct.phases[1].shifts, (std::vector<std::uint32_t>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(direct.phases[1].bytes, 1000);
  EXPECT_EQ(collective_steps(K::AllToAll, A::Direct, 1, nodes(2, 1), 4000).phases.size(), 1u);
}

TEST(CollectiveSteps, HierarchicalReduceScatterAndAllGatherCrossNodesOncePerLocalIndex) {
  // 2 nodes of 4: reduce-scatter inside the nodes over S, then across over S/4;
  // all-gather across the nodes first, then inside them over both nodes' inputs.
  const auto rs = collective_steps(K::ReduceScatter, A::Hierarchical, 4, nodes(8, 4), 8000);
  EXPECT_EQ(rs.channels, 1u);
  ASSERT_EQ(rs.phases.size(), 2u);
  EXPECT_EQ(rs.phases[0].layout, 0u);
  EXPECT_EQ(rs.phases[0].rounds, 3u);
  EXPECT_DOUBLE_EQ(rs.phases[0].bytes, 2000);
  EXPECT_EQ(rs.phases[1].layout, 1u);
  EXPECT_EQ(rs.phases[1].rounds, 1u);
  EXPECT_DOUBLE_EQ(rs.phases[1].bytes, 1000);
  const auto ag = collective_steps(K::AllGather, A::Hierarchical, 1, nodes(8, 4), 1000);
  ASSERT_EQ(ag.phases.size(), 2u);
  EXPECT_EQ(ag.phases[0].layout, 1u);
  EXPECT_DOUBLE_EQ(ag.phases[0].bytes, 1000);
  EXPECT_EQ(ag.phases[1].layout, 0u);
  EXPECT_EQ(ag.phases[1].rounds, 3u);
  EXPECT_DOUBLE_EQ(ag.phases[1].bytes, 2000);
}

TEST(CollectiveSteps, WhichAlgorithmsApply) {
  EXPECT_TRUE(algorithm_applies(K::Broadcast, A::Ring, nodes(4, 1)));
  EXPECT_TRUE(algorithm_applies(K::AllReduce, A::Tree, nodes(4, 1)));
  EXPECT_FALSE(algorithm_applies(K::AllGather, A::Tree, nodes(4, 1)));
  EXPECT_TRUE(algorithm_applies(K::AllToAll, A::Direct, nodes(4, 1)));
  EXPECT_FALSE(algorithm_applies(K::AllReduce, A::Direct, nodes(4, 1)));
  EXPECT_TRUE(algorithm_applies(K::AllGather, A::Hierarchical, nodes(8, 4)));
  EXPECT_FALSE(algorithm_applies(K::AllToAll, A::Hierarchical, nodes(8, 4)));
  EXPECT_FALSE(algorithm_applies(K::AllReduce, A::Hierarchical, nodes(4, 4)));  // one node
  EXPECT_FALSE(algorithm_applies(K::AllReduce, A::Hierarchical, nodes(4, 1)));  // one member per node
  EXPECT_FALSE(algorithm_applies(K::AllReduce, A::Hierarchical, std::vector<std::uint32_t>{0, 0, 0, 1}));
  EXPECT_FALSE(algorithm_applies(K::AllReduce, A::Auto, nodes(4, 1)));
}

TEST(CollectiveSteps, AutoAndAlgorithmsAKindLacksAreRejected) {
  EXPECT_THROW(collective_steps(K::AllReduce, A::Auto, 1, nodes(4, 1), 8), std::invalid_argument);
  EXPECT_THROW(collective_steps(K::AllGather, A::Tree, 1, nodes(4, 1), 8), std::invalid_argument);
  EXPECT_THROW(collective_steps(K::AllToAll, A::Tree, 1, nodes(4, 1), 8), std::invalid_argument);
  EXPECT_TRUE(collective_steps(K::AllReduce, A::Ring, 1, nodes(1, 1), 8).phases.empty());
}

}  // namespace
}  // namespace eppsim
