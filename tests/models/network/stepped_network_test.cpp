#include "models/network/stepped_network.h"

#include <cmath>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

using A = CollectiveAlgorithm;
using K = CommKind;

// Every flow 1 us of latency and 1 GB/s, except that flows leaving one rank
// share its 1 GB/s; `per_node` ranks per node; ranks ordered in reverse (so
// that the route's member order is visibly the network's); `channels` channels.
class EvenNetwork final : public SteppedNetwork {
 public:
  EvenNetwork(std::uint32_t per_node, std::uint32_t channels) : per_node_(per_node), channels_(channels) {}
  mutable int rounds_priced = 0;

 protected:
  std::vector<FlowTiming> round_timings(std::span<const Flow> flows, std::uint32_t channels) const override {
    ++rounds_priced;
    std::vector<std::uint32_t> leaving(1024, 0);
    for (const auto& [src, dst] : flows) leaving[src] += channels;
    std::vector<FlowTiming> timings;
    for (std::uint32_t c = 0; c < channels; ++c) {
      for (const auto& [src, dst] : flows) timings.push_back(FlowTiming{1e-6, 1e9 / leaving[src]});
    }
    return timings;
  }
  std::uint64_t ring_position(std::uint32_t rank) const override { return 1000 - rank; }
  std::uint32_t node_of(std::uint32_t rank) const override { return rank / per_node_; }
  std::uint32_t channels_of(std::uint32_t) const override { return channels_; }

 private:
  std::uint32_t per_node_;
  std::uint32_t channels_;
};

std::vector<std::uint32_t> ranks(std::uint32_t n) {
  std::vector<std::uint32_t> out(n);
  std::iota(out.begin(), out.end(), 0u);
  return out;
}

TEST(SteppedNetwork, ARoundTakesItsSlowestFlowAndAPhaseItsRounds) {
  const EvenNetwork net(8, 2);
  // Ring all-reduce of 8 MB over 8 ranks on 2 channels: 14 rounds of 0.5 MB per
  // flow, each rank sending 2 flows (one per channel) at 0.5 GB/s.
  EXPECT_NEAR(net.collective_time(K::AllReduce, A::Ring, ranks(8), Bytes(8'000'000)).value, 14 * (1e-6 + 1e-3),
              1e-12);
  EXPECT_NEAR(net.p2p_time(0, 1, Bytes(1000)).value, 1e-6 + 1e-6, 1e-15);
  EXPECT_EQ(net.p2p_time(3, 3, Bytes(1000)).value, 0.0);
  EXPECT_EQ(net.collective_time(K::AllReduce, A::Ring, ranks(1), Bytes(1000)).value, 0.0);
}

TEST(SteppedNetwork, AChainTakesItsHopsLatenciesAndOnePassOfTheData) {
  const EvenNetwork net(8, 1);
  // Broadcast of 1 MB over 4 ranks: 3 hops of 1 us, then 1 MB at 1 GB/s.
  EXPECT_NEAR(net.collective_time(K::Broadcast, A::Auto, ranks(4), Bytes(1'000'000)).value, 3e-6 + 1e-3, 1e-12);
}

TEST(SteppedNetwork, HintsThatApplyAreTakenOthersFallBackToTheRing) {
  const EvenNetwork net(4, 1);
  const auto all = ranks(8);  // two nodes of four
  EXPECT_EQ(net.collective_route(K::AllReduce, A::Tree, all, Bytes(8000)).steps.algorithm, A::Tree);
  EXPECT_EQ(net.collective_route(K::AllGather, A::Hierarchical, all, Bytes(8000)).steps.algorithm, A::Hierarchical);
  EXPECT_EQ(net.collective_route(K::AllGather, A::Tree, all, Bytes(8000)).steps.algorithm, A::Ring);
  EXPECT_EQ(net.collective_route(K::AllToAll, A::Direct, all, Bytes(8000)).steps.algorithm, A::Direct);
  const std::vector<std::uint32_t> uneven{0, 1, 2, 4};  // 3 on node 0, 1 on node 1
  EXPECT_EQ(net.collective_route(K::AllReduce, A::Hierarchical, uneven, Bytes(8000)).steps.algorithm, A::Ring);
  // Direct all-to-all applies up to 256 ranks.
  const EvenNetwork big(1000, 1);
  EXPECT_EQ(big.collective_route(K::AllToAll, A::Direct, ranks(257), Bytes(257)).steps.algorithm, A::Ring);
}

TEST(SteppedNetwork, AutoTakesTheFastestAndTheRingOnATie) {
  const EvenNetwork net(8, 1);
  // Small all-reduce: latency-bound, so the tree (2 log2 n latencies) beats
  // the ring (2(n-1) rounds); a large one is bandwidth-bound: the ring.
  EXPECT_EQ(net.collective_route(K::AllReduce, A::Auto, ranks(8), Bytes(8)).steps.algorithm, A::Tree);
  EXPECT_EQ(net.collective_route(K::AllReduce, A::Auto, ranks(8), Bytes(80'000'000)).steps.algorithm, A::Ring);
  // Every flow leaving a rank shares its rate, so direct all-to-all moves its
  // data as fast as pairwise and pays the same latencies: a tie, the ring.
  EXPECT_EQ(net.collective_route(K::AllToAll, A::Auto, ranks(8), Bytes(8000)).steps.algorithm, A::Ring);
  EXPECT_DOUBLE_EQ(net.collective_time(K::AllToAll, A::Auto, ranks(8), Bytes(8000)).value,
                   net.collective_time(K::AllToAll, A::Direct, ranks(8), Bytes(8000)).value);
}

TEST(SteppedNetwork, TheRouteIsTheChosenAlgorithmsStepsOverTheNetworksOrder) {
  const EvenNetwork net(4, 2);
  const std::vector<std::uint32_t> group{2, 7, 5, 0};
  const CollectiveRoute route = net.collective_route(K::AllReduce, A::Ring, group, Bytes(8000));
  EXPECT_EQ(route.members, (std::vector<std::uint32_t>{7, 5, 2, 0}));
  const std::vector<std::uint32_t> nodes{1, 1, 0, 0};
  const CollectiveSteps expected = collective_steps(K::AllReduce, A::Ring, 2, nodes, 8000);
  ASSERT_EQ(route.steps.phases.size(), expected.phases.size());
  EXPECT_EQ(route.steps.channels, 2u);
  EXPECT_EQ(route.steps.phases[0].rounds, expected.phases[0].rounds);
  EXPECT_DOUBLE_EQ(route.steps.phases[0].bytes, expected.phases[0].bytes);
  EXPECT_TRUE(net.collective_route(K::AllReduce, A::Ring, std::vector<std::uint32_t>{3}, Bytes(8)).steps.phases.empty());
}

TEST(SteppedNetwork, LongPairwiseAllToAllIsPricedBySixtyFourPhasesAndRemembered) {
  const EvenNetwork net(1000, 1);
  // 300 ranks: 299 pairwise phases of 1 round each, every one 1 us + 1 us.
  const double time = net.collective_time(K::AllToAll, A::Ring, ranks(300), Bytes(300'000)).value;
  EXPECT_NEAR(time, 299 * 2e-6, 1e-12);
  EXPECT_EQ(net.rounds_priced, 64);
  EXPECT_EQ(net.collective_time(K::AllToAll, A::Ring, ranks(300), Bytes(300'000)).value, time);
  EXPECT_EQ(net.rounds_priced, 64);  // memoised
}

}  // namespace
}  // namespace eppsim
