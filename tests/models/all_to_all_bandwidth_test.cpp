#include "models/all_to_all_bandwidth.h"

#include <gtest/gtest.h>

#include "models/errors.h"

namespace eppsim {
namespace {

// 4 nodes of 8 GPUs; NVLink 100 GB/s and 1 us, NICs 25 GB/s and 5 us.
ClusterSpec cluster() {
  ClusterSpec c;
  c.nodes = 4;
  c.gpus_per_node = 8;
  c.intra_node = LinkParams{BytesPerSecond(100e9), Seconds(1e-6)};
  c.inter_node = LinkParams{BytesPerSecond(25e9), Seconds(5e-6)};
  return c;
}

TEST(AllToAllTable, LooksUpExactDegrees) {
  const AllToAllBandwidth bw = AllToAllBandwidth::from_table(
      {{8, BytesPerSecond(80e9), Seconds(2e-6)}, {2, BytesPerSecond(100e9), Seconds(1e-6)}}, 8);
  EXPECT_EQ(bw.bandwidth(2), BytesPerSecond(100e9));
  EXPECT_EQ(bw.latency(8), Seconds(2e-6));
  EXPECT_DOUBLE_EQ(bw.bus_bandwidth(8).value, 80e9 * 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bw.time(8, Bytes(800'000'000)).value, 2e-6 + 0.01);
  ASSERT_EQ(bw.table().size(), 2u);
  EXPECT_EQ(bw.table()[0].degree, 2u);  // sorted
  EXPECT_TRUE(bw.has_degree(8));
  EXPECT_FALSE(bw.has_degree(4));
  EXPECT_FALSE(bw.crosses_nodes(8));
  EXPECT_TRUE(bw.crosses_nodes(16));
}

TEST(AllToAllTable, UnknownDegreesAreAnErrorNotInterpolated) {
  const AllToAllBandwidth bw = AllToAllBandwidth::from_table(
      {{2, BytesPerSecond(100e9), Seconds(0)}, {8, BytesPerSecond(80e9), Seconds(0)}});
  EXPECT_THROW(bw.bandwidth(4), InputError);
  EXPECT_THROW(bw.time(16, Bytes(1)), InputError);
  EXPECT_THROW(bw.bandwidth(1), InputError);
  EXPECT_FALSE(bw.crosses_nodes(64));  // no node size given
}

TEST(AllToAllTable, DegreeOneAndEmptyBuffersCostNothing) {
  const AllToAllBandwidth bw = AllToAllBandwidth::from_table({{2, BytesPerSecond(100e9), Seconds(1e-6)}});
  EXPECT_EQ(bw.time(1, Bytes(1'000'000)), Seconds(0.0));
  EXPECT_EQ(bw.time(2, Bytes(0)), Seconds(0.0));
  EXPECT_THROW(bw.time(0, Bytes(1)), InputError);
}

TEST(AllToAllTable, RejectsBadTables) {
  EXPECT_THROW(AllToAllBandwidth::from_table({}), InputError);
  EXPECT_THROW(AllToAllBandwidth::from_table({{1, BytesPerSecond(1e9), Seconds(0)}}), InputError);
  EXPECT_THROW(AllToAllBandwidth::from_table({{2, BytesPerSecond(0), Seconds(0)}}), InputError);
  EXPECT_THROW(AllToAllBandwidth::from_table({{2, BytesPerSecond(1e9), Seconds(-1)}}), InputError);
  EXPECT_THROW(
      AllToAllBandwidth::from_table({{2, BytesPerSecond(1e9), Seconds(0)}, {2, BytesPerSecond(2e9), Seconds(0)}}),
      InputError);
}

TEST(AllToAllCluster, InsideANodeNvlinkCarriesTheOtherGpusShare) {
  const AllToAllBandwidth bw = AllToAllBandwidth::from_cluster(cluster());
  // transfer = (d-1)/d * S / B: algbw = B * d/(d-1), busbw = B.
  EXPECT_DOUBLE_EQ(bw.bandwidth(4).value, 100e9 * 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(bw.bus_bandwidth(4).value, 100e9);
  EXPECT_DOUBLE_EQ(bw.latency(4).value, 3e-6);
  EXPECT_NEAR(bw.time(4, Bytes(3'000'000'000)).value, 3e-6 + 0.0225, 1e-12);
  EXPECT_FALSE(bw.crosses_nodes(8));
}

TEST(AllToAllCluster, AcrossNodesTheNicsCarryTheOffNodeShare) {
  const AllToAllBandwidth bw = AllToAllBandwidth::from_cluster(cluster());
  // d = 16 on 2 full nodes: max(7/16 / 100e9, 8/16 / 25e9) s per byte = 2e-11.
  EXPECT_DOUBLE_EQ(bw.bandwidth(16).value, 5e10);
  EXPECT_DOUBLE_EQ(bw.latency(16).value, 15 * 5e-6);
  EXPECT_TRUE(bw.crosses_nodes(16));
  // d = 12 on 8 + 4 GPUs: the 4-GPU node's GPUs send 8/12 off node.
  EXPECT_DOUBLE_EQ(bw.bandwidth(12).value, 25e9 * 12.0 / 8.0);
  // d = 32 on 4 nodes: 24/32 off node.
  EXPECT_DOUBLE_EQ(bw.bandwidth(32).value, 25e9 * 32.0 / 24.0);
  EXPECT_THROW(bw.bandwidth(33), InputError);
  EXPECT_TRUE(bw.has_degree(32));
  EXPECT_FALSE(bw.has_degree(33));
}

TEST(AllToAllCluster, SharedNicsSlowTheOffNodePart) {
  // 2 NICs for 8 GPUs: 25e9 * 2/8 per GPU.
  const AllToAllBandwidth bw = AllToAllBandwidth::from_cluster(cluster(), ClusterAllToAllOptions{.nics_per_node = 2});
  EXPECT_DOUBLE_EQ(bw.bandwidth(16).value, 6.25e9 * 2.0);
  EXPECT_DOUBLE_EQ(bw.bandwidth(8).value, 100e9 * 8.0 / 7.0);  // NVLink unchanged
}

TEST(AllToAllCluster, CrossingNodesIsSlowerForTheSameSequence) {
  const AllToAllBandwidth bw = AllToAllBandwidth::from_cluster(cluster());
  // A sequence of S bytes split over d GPUs: each buffer is S/d.
  const std::uint64_t s = 1'600'000'000;
  for (std::uint32_t d = 2; d < 8; d *= 2) EXPECT_GT(bw.time(d, Bytes(s / d)), bw.time(2 * d, Bytes(s / (2 * d))));
  EXPECT_LT(bw.time(8, Bytes(s / 8)), bw.time(16, Bytes(s / 16)));
}

TEST(AllToAllCluster, RejectsBadClusters) {
  ClusterSpec c = cluster();
  c.nodes = 0;
  EXPECT_THROW(AllToAllBandwidth::from_cluster(c), InputError);
  c = cluster();
  c.inter_node.bandwidth = BytesPerSecond(0);
  EXPECT_THROW(AllToAllBandwidth::from_cluster(c), InputError);
}

}  // namespace
}  // namespace eppsim
