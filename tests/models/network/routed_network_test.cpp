#include "models/network/routed_network.h"

#include <memory>
#include <numeric>

#include <gtest/gtest.h>

#include "models/network/closed_form_network.h"
#include "models/topology/topology.h"

namespace eppsim {
namespace {

const LinkParams kNvlink{BytesPerSecond(300e9), Seconds(1e-6)};
const LinkParams kNic{BytesPerSecond(25e9), Seconds(2e-6)};

TopologyConfig fat_tree(std::uint32_t nodes, std::uint32_t oversubscription_down) {
  TopologyConfig config;
  config.name = "ft";
  config.nodes = nodes;
  config.chips_per_node = 8;
  config.node.kind = NodeFabricKind::Switched;
  config.node.link = kNvlink;
  FatTreeConfig ft;
  ft.radix = 8;
  ft.levels = 3;
  ft.oversubscription_down = oversubscription_down;
  ft.oversubscription_up = 1;
  ft.link = kNic;
  config.network = ft;
  return config;
}

TopologyConfig simple(std::uint32_t nodes) {
  TopologyConfig config;
  config.name = "simple";
  config.nodes = nodes;
  config.chips_per_node = 8;
  config.node.link = kNvlink;
  config.network = SimpleNetworkConfig{kNic};
  return config;
}

std::vector<VertexId> identity(std::uint32_t n) {
  std::vector<VertexId> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

TEST(RoutedNetwork, SimpleTopologyAgreesWithTheClosedFormsWhenBandwidthDominates) {
  const std::shared_ptr<const Topology> topology = build_topology(simple(4));
  const RoutedNetwork routed(topology, identity(32));
  std::vector<std::uint32_t> nodes(32);
  for (std::uint32_t r = 0; r < 32; ++r) nodes[r] = r / 8;
  const ClosedFormNetwork closed(kNvlink, kNic, nodes);
  const Bytes size(1ull << 30);
  const auto all = identity(32);
  const std::vector<std::uint32_t> one_node{0, 1, 2, 3, 4, 5, 6, 7};
  for (auto kind : {CommKind::AllReduce, CommKind::AllGather, CommKind::ReduceScatter}) {
    EXPECT_NEAR(routed.collective_time(kind, CollectiveAlgorithm::Ring, one_node, size).value,
                closed.collective_time(kind, CollectiveAlgorithm::Ring, one_node, size).value,
                0.02 * closed.collective_time(kind, CollectiveAlgorithm::Ring, one_node, size).value);
    EXPECT_NEAR(routed.collective_time(kind, CollectiveAlgorithm::Ring, all, size).value,
                closed.collective_time(kind, CollectiveAlgorithm::Ring, all, size).value,
                0.02 * closed.collective_time(kind, CollectiveAlgorithm::Ring, all, size).value);
  }
  EXPECT_NEAR(routed.p2p_time(0, 9, size).value, closed.p2p_time(0, 9, size).value, 0.01 * closed.p2p_time(0, 9, size).value);
}

TEST(RoutedNetwork, OversubscriptionSlowsCrossPodCollectives) {
  // 8-port switches, 3 levels: 4 hosts per leaf, 16 per pod, 128 chips span 8 pods.
  const std::shared_ptr<const Topology> full = build_topology(fat_tree(16, 1));
  const std::shared_ptr<const Topology> tapered = build_topology(fat_tree(16, 3));
  const RoutedNetwork a(full, identity(128)), b(tapered, identity(128));
  // Every chip: the leaves' up-links, 3x fewer when tapered 3:1, carry most of the traffic.
  const auto all = identity(128);
  const Bytes size(256ull << 20);
  EXPECT_GT(b.collective_time(CommKind::AllToAll, CollectiveAlgorithm::Auto, all, size).value,
            1.5 * a.collective_time(CommKind::AllToAll, CollectiveAlgorithm::Auto, all, size).value);
}

TEST(RoutedNetwork, FlowsSharingALinkShareItsBandwidth) {
  // Two ranks on one node sending off-node share nothing (one NIC each) on the
  // simple cluster; a ring of all 8 chips of node 0 with node 1's chip 0 makes
  // one NIC carry a single flow each way: the ring runs at NIC speed.
  const std::shared_ptr<const Topology> topology = build_topology(simple(2));
  const RoutedNetwork net(topology, identity(16));
  const Bytes size(1ull << 30);
  const double nic_s = static_cast<double>(size.count) / kNic.bandwidth.value;
  EXPECT_NEAR(net.p2p_time(0, 8, size).value, nic_s, 0.01 * nic_s);
  const std::vector<std::uint32_t> pair{0, 8};
  // Ring all-gather of 2 ranks: one step of the full input over the NIC.
  EXPECT_NEAR(net.collective_time(CommKind::AllGather, CollectiveAlgorithm::Ring, pair, size).value, nic_s, 0.01 * nic_s);
}

TEST(RoutedNetwork, AutoIsNeverSlowerThanAnyAlgorithm) {
  const std::shared_ptr<const Topology> topology = build_topology(fat_tree(16, 1));
  const RoutedNetwork net(topology, identity(128));
  const auto all = identity(128);
  const Bytes size(64ull << 20);
  const double best = net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, all, size).value;
  for (auto algorithm : {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree, CollectiveAlgorithm::Hierarchical}) {
    EXPECT_LE(best, net.collective_time(CommKind::AllReduce, algorithm, all, size).value + 1e-15);
  }
}

TEST(RoutedNetwork, CollectiveRouteIsTheAlgorithmItPricesWith) {
  using A = CollectiveAlgorithm;
  using K = CommKind;
  const std::shared_ptr<const Topology> topology = build_topology(fat_tree(16, 1));
  const RoutedNetwork net(topology, identity(128));
  const auto all = identity(128);
  const Bytes size(64ull << 20);
  // Auto picks the fastest; its time is that algorithm's.
  const CollectiveRoute choice = net.collective_route(K::AllReduce, A::Auto, all, size);
  EXPECT_NE(choice.steps.algorithm, A::Auto);
  EXPECT_DOUBLE_EQ(net.collective_time(K::AllReduce, A::Auto, all, size).value,
                   net.collective_time(K::AllReduce, choice.steps.algorithm, all, size).value);
  // Hints are kept; hierarchical runs on one channel; ring channels are the first chip's NICs.
  EXPECT_EQ(net.collective_route(K::AllReduce, A::Tree, all, size).steps.algorithm, A::Tree);
  EXPECT_EQ(net.collective_route(K::AllReduce, A::Hierarchical, all, size).steps.algorithm, A::Hierarchical);
  EXPECT_EQ(net.collective_route(K::AllReduce, A::Hierarchical, all, size).steps.channels, 1u);
  EXPECT_EQ(net.collective_route(K::AllReduce, A::Ring, all, size).steps.channels, 1u);
  // Fallbacks: hierarchical over one chip per node is a ring; other kinds run as rings;
  // all-to-all hints other than direct are pairwise.
  const std::vector<std::uint32_t> spread{0, 8, 16, 24};
  EXPECT_EQ(net.collective_route(K::AllReduce, A::Hierarchical, spread, size).steps.algorithm, A::Ring);
  EXPECT_EQ(net.collective_route(K::AllGather, A::Tree, all, size).steps.algorithm, A::Ring);
  EXPECT_EQ(net.collective_route(K::AllToAll, A::Tree, all, size).steps.algorithm, A::Ring);
  EXPECT_EQ(net.collective_route(K::AllToAll, A::Direct, all, size).steps.algorithm, A::Direct);
  const RoutedNetwork large(build_topology(simple(40)), identity(320));  // direct all-to-all stops at 256 ranks
  EXPECT_EQ(large.collective_route(K::AllToAll, A::Direct, identity(300), size).steps.algorithm, A::Ring);
  EXPECT_EQ(net.collective_route(K::AllToAll, A::Direct, all, size).steps.channels, 1u);
}

TEST(RoutedNetwork, DirectAllToAllSharesTheNicsOfAllPeers) {
  // 4 chips on 4 nodes of the simple cluster: each NIC carries 3 flows each way
  // at once, S/4 bytes each, so direct all-to-all takes 3 (S/4) / NIC, the same
  // bytes as the 3 pairwise rounds of S/4 at full NIC rate.
  const std::shared_ptr<const Topology> topology = build_topology(simple(4));
  const RoutedNetwork net(topology, identity(32));
  const std::vector<std::uint32_t> group{0, 8, 16, 24};
  const Bytes size(1ull << 30);
  const double expected = 3.0 * (static_cast<double>(size.count) / 4) / kNic.bandwidth.value;
  EXPECT_NEAR(net.collective_time(CommKind::AllToAll, CollectiveAlgorithm::Direct, group, size).value, expected, 0.01 * expected);
  EXPECT_NEAR(net.collective_time(CommKind::AllToAll, CollectiveAlgorithm::Ring, group, size).value, expected, 0.01 * expected);
}

}  // namespace
}  // namespace eppsim
