#include "models/network/closed_form_network.h"

#include <gtest/gtest.h>

namespace eppsim {
namespace {

const LinkParams kNvlink{BytesPerSecond(300e9), Seconds(2e-6)};
const LinkParams kNic{BytesPerSecond(25e9), Seconds(5e-6)};

std::vector<std::uint32_t> iota(std::uint32_t n) {
  std::vector<std::uint32_t> out(n);
  for (std::uint32_t r = 0; r < n; ++r) out[r] = r;
  return out;
}

// Ranks 0..n-1 on nodes of `per_node`.
ClosedFormNetwork network_of(std::uint32_t n, std::uint32_t per_node) {
  std::vector<std::uint32_t> nodes;
  for (std::uint32_t r = 0; r < n; ++r) nodes.push_back(r / per_node);
  return ClosedFormNetwork(kNvlink, kNic, nodes);
}

// One GPU per node: every flow crosses the NICs.
TEST(ClosedFormNetwork, TextbookRingClosedForms) {
  const ClosedFormNetwork net = network_of(8, 1);
  const Bytes size(1 << 30);
  const double t = static_cast<double>(size.count) / kNic.bandwidth.value;
  const auto ring = [&](CommKind kind, std::uint32_t n) {
    return net.collective_time(kind, CollectiveAlgorithm::Ring, iota(n), size).value;
  };
  EXPECT_NEAR(ring(CommKind::AllReduce, 8), 14 * 5e-6 + 2.0 * 7 / 8 * t, 1e-12);
  EXPECT_NEAR(ring(CommKind::ReduceScatter, 8), 7 * 5e-6 + 7.0 / 8 * t, 1e-12);
  EXPECT_NEAR(ring(CommKind::AllGather, 8), 7 * 5e-6 + 7.0 * t, 1e-12);
  EXPECT_NEAR(ring(CommKind::Broadcast, 8), 7 * 5e-6 + t, 1e-12);
  EXPECT_NEAR(ring(CommKind::AllToAll, 8), 7 * (5e-6 + t / 8), 1e-12);  // pairwise
  EXPECT_NEAR(net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Tree, iota(8), size).value,
              6 * 5e-6 + 2 * t, 1e-12);
  EXPECT_EQ(ring(CommKind::AllReduce, 1), 0.0);
}

TEST(ClosedFormNetwork, RingAllReduceIsReduceScatterPlusAllGatherOfTheShard) {
  const ClosedFormNetwork net = network_of(16, 1);
  const Bytes size(64 << 20);
  const auto rs = net.collective_time(CommKind::ReduceScatter, CollectiveAlgorithm::Ring, iota(16), size);
  const auto ag = net.collective_time(CommKind::AllGather, CollectiveAlgorithm::Ring, iota(16), Bytes(size.count / 16));
  EXPECT_NEAR(net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Ring, iota(16), size).value,
              (rs + ag).value, 1e-12);
}

TEST(ClosedFormNetwork, P2PUsesNvlinkInsideANodeAndTheNicAcross) {
  const ClosedFormNetwork net(kNvlink, kNic, {0, 0, 1, 1});
  const Bytes size(1 << 20);
  EXPECT_NEAR(net.p2p_time(0, 1, size).value, 2e-6 + (1 << 20) / 300e9, 1e-15);
  EXPECT_NEAR(net.p2p_time(1, 2, size).value, 5e-6 + (1 << 20) / 25e9, 1e-15);
  EXPECT_EQ(net.p2p_time(3, 3, size).value, 0.0);
}

// A send-recv named as a collective of two ranks is the message itself.
TEST(ClosedFormNetwork, SendRecvOverTwoRanksIsTheP2PMessage) {
  const ClosedFormNetwork net(kNvlink, kNic, {0, 0, 1, 1});
  const Bytes size(1 << 20);
  for (const auto& pair : {std::vector<std::uint32_t>{0, 1}, std::vector<std::uint32_t>{1, 2}}) {
    EXPECT_NEAR(net.collective_time(CommKind::SendRecv, CollectiveAlgorithm::Auto, pair, size).value,
                net.p2p_time(pair[0], pair[1], size).value, 1e-15);
  }
}

TEST(ClosedFormNetwork, AutoPicksHierarchicalForLargeCrossNodeAllReduce) {
  const ClosedFormNetwork net = network_of(16, 8);
  const auto all = iota(16);
  const Bytes size(1ull << 30);
  const auto ring = net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Ring, all, size);
  const auto hier = net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Hierarchical, all, size);
  const auto best = net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, all, size);
  const auto tree = net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Tree, all, size);
  const double bytes = static_cast<double>(size.count);
  EXPECT_NEAR(hier.value, 2 * 7 * (2e-6 + bytes / 8 / 300e9) + 2 * (5e-6 + bytes / 16 / 25e9), 1e-12);
  EXPECT_LT(hier.value, ring.value);
  EXPECT_EQ(best.value, std::min({ring.value, hier.value, tree.value}));
}

TEST(ClosedFormNetwork, GroupInsideOneNodeUsesNvlink) {
  const ClosedFormNetwork net(kNvlink, kNic, {0, 0, 0, 0});
  const std::vector<std::uint32_t> group{0, 1, 2, 3};
  const Bytes size(1 << 26);
  EXPECT_NEAR(net.collective_time(CommKind::AllGather, CollectiveAlgorithm::Ring, group, size).value,
              3 * (2e-6 + static_cast<double>(size.count) / 300e9), 1e-15);
}

TEST(ClosedFormNetwork, HierarchicalGatherAndReduceScatterCrossNodesOncePerNic) {
  const ClosedFormNetwork net = network_of(32, 8);
  const auto all = iota(32);
  const Bytes shard(8 << 20);
  const double t_inter = 3 * 5e-6 + 3.0 * shard.count / 25e9;            // 4-node ring of the shard
  const double t_intra = 7 * 2e-6 + 7.0 * 4 * shard.count / 300e9;       // 8-GPU ring of 4 shards
  EXPECT_NEAR(net.collective_time(CommKind::AllGather, CollectiveAlgorithm::Hierarchical, all, shard).value, t_inter + t_intra, 1e-12);
  const auto ring = net.collective_time(CommKind::AllGather, CollectiveAlgorithm::Ring, all, shard);
  EXPECT_NEAR(net.collective_time(CommKind::AllGather, CollectiveAlgorithm::Auto, all, shard).value,
              std::min(ring.value, t_inter + t_intra), 1e-12);
  EXPECT_LT(t_inter + t_intra, ring.value);

  const Bytes vector(256 << 20);
  const double rs = 7 * 2e-6 + 7.0 / 8 * vector.count / 300e9 + 3 * 5e-6 + 3.0 / 4 * (vector.count / 8) / 25e9;
  EXPECT_NEAR(net.collective_time(CommKind::ReduceScatter, CollectiveAlgorithm::Hierarchical, all, vector).value, rs, 1e-12);
  // Uneven groups fall back to the ring.
  const std::vector<std::uint32_t> uneven{0, 1, 2, 8};
  EXPECT_DOUBLE_EQ(net.collective_time(CommKind::AllGather, CollectiveAlgorithm::Hierarchical, uneven, shard).value,
            3 * (5e-6 + static_cast<double>(shard.count) / 25e9));
}

TEST(ClosedFormNetwork, CrossNodeAllToAllSendsOverNvlinkAndTheNicAtOnce) {
  const ClosedFormNetwork net = network_of(16, 8);
  const Bytes buffer(64 << 20);
  // 8 + 8 ranks: half the buffer leaves the node, the NIC is the bottleneck.
  const auto all = iota(16);
  EXPECT_NEAR(net.collective_time(CommKind::AllToAll, CollectiveAlgorithm::Auto, all, buffer).value,
              15 * 5e-6 + 0.5 * buffer.count / 25e9, 1e-12);
  // 6 + 2 ranks: the GPUs on the node holding 2 send 6/8 through their NIC.
  const std::vector<std::uint32_t> skewed{0, 1, 2, 3, 4, 5, 8, 9};
  EXPECT_NEAR(net.collective_time(CommKind::AllToAll, CollectiveAlgorithm::Auto, skewed, buffer).value,
              7 * 5e-6 + 6.0 / 8 * buffer.count / 25e9, 1e-12);
}

}  // namespace
}  // namespace eppsim
