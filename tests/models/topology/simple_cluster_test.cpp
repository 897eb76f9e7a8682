#include "models/topology/simple_cluster.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/models/topology/route_check.h"

namespace eppsim {
namespace {

TopologyConfig simple(std::uint32_t nodes, std::uint32_t chips_per_node) {
  TopologyConfig c;
  c.name = "simple";
  c.nodes = nodes;
  c.chips_per_node = chips_per_node;
  c.node.link = {BytesPerSecond(450e9), Seconds(1e-7)};
  c.network = SimpleNetworkConfig{{BytesPerSecond(50e9), Seconds(2e-6)}};
  return c;
}

TEST(SimpleCluster, CountsAndPrices) {
  auto t = build_topology(simple(4, 8));
  EXPECT_EQ(t->kind(), "simple");
  EXPECT_EQ(t->chips(), 32u);
  EXPECT_EQ(t->vertex_count(), 32u + 4u + 1u);
  EXPECT_EQ(t->links().size(), 32u + 32u);
  const auto inv = t->inventory();
  EXPECT_EQ(inv.electrical_switches, 1u);
  EXPECT_EQ(inv.electrical_switch_ports, 32u);
  EXPECT_EQ(inv.optical_links, 32u);
  EXPECT_EQ(inv.electrical_links, 32u);
  EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, 16 * 50e9);
  EXPECT_DOUBLE_EQ(t->injection_bandwidth_per_chip().value, 50e9);
  EXPECT_EQ(t->vertex_name(36), "leaf0");
}

TEST(SimpleCluster, RoutesAndEndToEndLatency) {
  auto t = build_topology(simple(3, 4));
  testing::check_all_routes(*t, true);
  std::vector<LinkId> path;
  t->route(0, 5, 0, &path);
  ASSERT_EQ(path.size(), 2u);
  double latency = 0;
  for (auto id : path) latency += t->link(id).latency.value;
  EXPECT_DOUBLE_EQ(latency, 2e-6);  // the scenario's end-to-end inter-node latency
  t->route(0, 3, 0, &path);
  ASSERT_EQ(path.size(), 2u);
  EXPECT_TRUE(t->link(path[0]).intra_node);
  EXPECT_DOUBLE_EQ(t->link(path[0]).latency.value + t->link(path[1]).latency.value, 1e-7);
}

TEST(SimpleCluster, FailedNicFallsBackThroughTheNode) {
  auto c = simple(2, 2);
  c.failures.links = {{"chip0", "leaf0"}};
  auto t = build_topology(c);
  std::vector<LinkId> path;
  t->route(0, 2, 0, &path);
  EXPECT_EQ(testing::check_walk(*t, 0, 2, path), "");
  EXPECT_EQ(path.size(), 4u);  // chip0 - nodeswitch0 - chip1 - leaf0 - chip2
  EXPECT_DOUBLE_EQ(t->injection_bandwidth_per_chip().value, 0.75 * 50e9);
}

TEST(SimpleCluster, OneChipPerNodeHasNoNodeSwitch) {
  auto t = build_topology(simple(4, 1));
  EXPECT_EQ(t->vertices_of_kind(VertexKind::NodeSwitch), 0u);
  EXPECT_EQ(t->links().size(), 4u);
  testing::check_all_routes(*t, true);
}

TEST(SimpleCluster, BadConfigs) {
  auto c = simple(0, 4);
  EXPECT_THROW(build_topology(c), InputError);
  c = simple(2, 4);
  c.network = SimpleNetworkConfig{};
  EXPECT_THROW(build_topology(c), InputError);
}

}  // namespace
}  // namespace eppsim
