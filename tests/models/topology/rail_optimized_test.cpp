#include "models/topology/rail_optimized.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/models/topology/route_check.h"

namespace eppsim {
namespace {

TopologyConfig rail(std::uint32_t nodes, std::uint32_t chips_per_node, std::uint32_t radix, std::uint32_t su,
                    bool rail_only = false, std::uint32_t down = 1, std::uint32_t up = 1) {
  TopologyConfig c;
  c.name = rail_only ? "ro" : "rail";
  c.nodes = nodes;
  c.chips_per_node = chips_per_node;
  c.node.link = {BytesPerSecond(450e9), Seconds(1e-7)};
  RailOptimizedConfig r;
  r.radix = radix;
  r.scalable_unit_nodes = su;
  r.rail_only = rail_only;
  r.oversubscription_down = down;
  r.oversubscription_up = up;
  r.link = {BytesPerSecond(50e9), Seconds(5e-7)};
  c.network = r;
  return c;
}

TEST(RailOptimized, TwoLevelCounts) {
  auto t = build_topology(rail(8, 4, 8, 4));
  const auto& ro = dynamic_cast<const RailOptimizedTopology&>(*t);
  EXPECT_EQ(t->kind(), "rail-optimized");
  EXPECT_EQ(ro.scalable_units(), 2u);
  EXPECT_EQ(t->vertices_of_kind(VertexKind::LeafSwitch), 8u);
  EXPECT_EQ(t->vertices_of_kind(VertexKind::SpineSwitch), 4u);
  EXPECT_EQ(t->vertices_of_kind(VertexKind::CoreSwitch), 0u);
  EXPECT_EQ(t->links().size(), 32u + 32u + 32u);
  EXPECT_EQ(t->inventory().electrical_switch_ports, 12u * 8);
  // NIC of chip r of node n goes to leaf (rail r, SU n/4) = leaf r*2 + n/4.
  EXPECT_EQ(t->vertex_name(t->link(ro.nic_link(4 * 5 + 3, 0)).b), "leaf7");
  EXPECT_EQ(t->link(ro.nic_link(4 * 5 + 3, 0)).rail, 3);
  EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, 16 * 50e9);
  testing::check_all_routes(*t, true);
}

TEST(RailOptimized, ThreeLevelsWithRailAlignedPods) {
  // radix 4: 2 down, 2 up; 2 nodes per SU; 8 nodes -> 4 SUs; 2 rails x 4 = 8
  // leaves > 4 -> 3 levels, pods of 2 leaves of one rail: 4 pods.
  auto t = build_topology(rail(8, 2, 4, 2));
  const auto& ro = dynamic_cast<const RailOptimizedTopology&>(*t);
  ASSERT_EQ(ro.clos().size(), 1u);
  EXPECT_EQ(ro.clos()[0].levels(), 3u);
  EXPECT_EQ(ro.clos()[0].pods(), 4u);
  EXPECT_EQ(ro.clos()[0].pod_of(0), 0u);
  EXPECT_EQ(ro.clos()[0].pod_of(4), 2u);  // rail 1's first leaf
  EXPECT_EQ(t->vertices_of_kind(VertexKind::SpineSwitch), 8u);
  EXPECT_EQ(t->vertices_of_kind(VertexKind::CoreSwitch), 4u);
  testing::check_all_routes(*t, false);
  // Same rail, same pod: leaf - agg - leaf.
  std::vector<LinkId> path;
  t->route(0, 2, 0, &path);  // chip 0 of nodes 0 and 1 (same SU): one leaf
  EXPECT_EQ(path.size(), 2u);
  t->route(0, 4, 0, &path);  // rail 0 of SU 0 and SU 1: one pod
  EXPECT_EQ(path.size(), 4u);
  t->route(0, 5, 0, &path);  // rail 0 to rail 1: through a core
  EXPECT_EQ(path.size(), 6u);
}

TEST(RailOptimized, RailOnlyPartitionsTheUpperLevels) {
  auto t = build_topology(rail(8, 4, 8, 4, true));
  const auto& ro = dynamic_cast<const RailOptimizedTopology&>(*t);
  EXPECT_EQ(t->kind(), "rail-only");
  EXPECT_EQ(ro.clos().size(), 4u);
  // Each rail: 2 leaves x 4 up-ports, 4 parallel links to one spine.
  EXPECT_EQ(t->vertices_of_kind(VertexKind::SpineSwitch), 4u);
  for (const auto& l : t->links()) {
    if (l.a >= t->first_vertex_of_kind(VertexKind::LeafSwitch) && t->vertex_kind(l.b) == VertexKind::SpineSwitch) {
      // Rail r's leaves (leaf r*2, r*2+1) reach only spine r.
      EXPECT_EQ((l.a - t->first_vertex_of_kind(VertexKind::LeafSwitch)) / 2, l.b - t->first_vertex_of_kind(VertexKind::SpineSwitch));
    }
  }
  testing::check_all_routes(*t, true);
  // Cross-rail: first to the source node's chip on the destination rail.
  std::vector<LinkId> path;
  const VertexId src = 0, dst = 4 * 6 + 2;  // rail 0 of node 0 -> rail 2 of node 6
  t->route(src, dst, 0, &path);
  ASSERT_EQ(path.size(), 6u);
  EXPECT_TRUE(t->link(path[0]).intra_node);
  EXPECT_TRUE(t->link(path[1]).intra_node);
  EXPECT_EQ(t->link(path[2]).a, 2u);  // chip 2 of node 0
  for (std::size_t i = 2; i < path.size(); ++i) EXPECT_EQ(t->link(path[i]).rail, 2);
}

TEST(RailOptimized, RailOnlySingleUnitHasNoSpines) {
  auto t = build_topology(rail(4, 8, 16, 4, true));
  EXPECT_EQ(t->vertices_of_kind(VertexKind::LeafSwitch), 8u);
  EXPECT_EQ(t->vertices_of_kind(VertexKind::SpineSwitch), 0u);
  EXPECT_EQ(t->links().size(), 32u + 32u);
  EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, 16 * 50e9);
  testing::check_all_routes(*t, true);
}

TEST(RailOptimized, SuperPodSize) {
  // DGX SuperPOD-like: 8 rails, 32 nodes per SU, 64-port switches, 4 SUs = 1024 GPUs.
  auto t = build_topology(rail(128, 8, 64, 32));
  const auto& ro = dynamic_cast<const RailOptimizedTopology&>(*t);
  EXPECT_EQ(ro.leaves(), 32u);
  EXPECT_EQ(ro.clos()[0].levels(), 2u);
  EXPECT_EQ(t->vertices_of_kind(VertexKind::SpineSwitch), 16u);  // 32 up-ports, 2 parallel links to each
  EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, 512 * 50e9);
}

TEST(RailOptimized, FailedUplinkIsAvoided) {
  auto c = rail(8, 4, 8, 4);
  c.failures.links = {{"leaf0", "spine0"}, {"leaf0", "spine1"}};
  auto t = build_topology(c);
  testing::check_all_routes(*t, true);
}

TEST(RailOptimized, BadConfigsThrowInputErrors) {
  auto expect_error = [](const TopologyConfig& c, const std::string& needle) {
    try {
      build_topology(c);
      ADD_FAILURE() << "no error, expected " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(rail(8, 4, 8, 5), "rail_optimized.scalable_unit_nodes: 5 nodes x 1 NICs per chip need 5 down-ports");
  expect_error(rail(8, 4, 8, 0), "rail_optimized.scalable_unit_nodes: must be > 0");
  expect_error(rail(8, 4, 9, 4), "rail_optimized.radix: must be even");
  expect_error(rail(64, 8, 8, 4), "rail_optimized.radix");
}

}  // namespace
}  // namespace eppsim
