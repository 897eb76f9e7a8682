#include "models/topology/fat_tree.h"

#include <gtest/gtest.h>

#include <set>

#include "base/errors.h"
#include "tests/models/topology/route_check.h"

namespace eppsim {
namespace {

TopologyConfig fat_tree(std::uint32_t nodes, std::uint32_t chips_per_node, std::uint32_t radix, std::uint32_t levels,
                        std::uint32_t down = 1, std::uint32_t up = 1, std::uint32_t nics = 1) {
  TopologyConfig c;
  c.name = "ft";
  c.nodes = nodes;
  c.chips_per_node = chips_per_node;
  c.node.link = {BytesPerSecond(450e9), Seconds(1e-7)};
  FatTreeConfig f;
  f.radix = radix;
  f.levels = levels;
  f.oversubscription_down = down;
  f.oversubscription_up = up;
  f.nics_per_chip = nics;
  f.link = {BytesPerSecond(50e9), Seconds(5e-7)};
  c.network = f;
  return c;
}

TEST(FatTree, FullThreeLevelCountsMatchTheFormulas) {
  for (std::uint32_t k : {4u, 8u, 16u}) {
    const std::uint32_t hosts = k * k * k / 4;
    auto t = build_topology(fat_tree(hosts, 1, k, 3));
    const auto& ft = dynamic_cast<const FatTreeTopology&>(*t);
    EXPECT_EQ(t->chips(), hosts);
    EXPECT_EQ(t->vertices_of_kind(VertexKind::LeafSwitch), k * k / 2);
    EXPECT_EQ(t->vertices_of_kind(VertexKind::SpineSwitch), k * k / 2);
    EXPECT_EQ(t->vertices_of_kind(VertexKind::CoreSwitch), k * k / 4);
    EXPECT_EQ(ft.inventory().electrical_switches, 5u * k * k / 4);
    EXPECT_EQ(ft.inventory().electrical_switch_ports, 5u * k * k * k / 4);
    // 3 links per host (NIC, leaf-agg, agg-core).
    EXPECT_EQ(t->links().size(), 3u * hosts);
    EXPECT_EQ(ft.inventory().optical_links, 3u * hosts);
    EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, hosts / 2.0 * 50e9);
    EXPECT_DOUBLE_EQ(t->injection_bandwidth_per_chip().value, 50e9);
  }
}

TEST(FatTree, TwoLevelCountsAndPartialBuild) {
  // 8 nodes x 4 chips, radix 8: 4 down per leaf -> 8 leaves; 4 up ports each,
  // leaves*m <= 8 -> m = 1: 4 spines.
  auto t = build_topology(fat_tree(8, 4, 8, 2));
  EXPECT_EQ(t->vertices_of_kind(VertexKind::LeafSwitch), 8u);
  EXPECT_EQ(t->vertices_of_kind(VertexKind::SpineSwitch), 4u);
  EXPECT_EQ(t->vertices_of_kind(VertexKind::NodeSwitch), 8u);
  EXPECT_EQ(t->links().size(), 32u /*fabric*/ + 32u /*nic*/ + 32u /*up*/);
  // 3 nodes x 4 chips: 3 leaves, 4 up each, m = 2 (3*2 <= 8): 2 spines, 2 parallel links.
  auto small = build_topology(fat_tree(3, 4, 8, 2));
  EXPECT_EQ(small->vertices_of_kind(VertexKind::LeafSwitch), 3u);
  EXPECT_EQ(small->vertices_of_kind(VertexKind::SpineSwitch), 2u);
  EXPECT_EQ(small->inventory().electrical_switch_ports, 5u * 8u);
}

TEST(FatTree, OversubscriptionTapersTheLeaves) {
  // radix 8 at 3:1: 6 down, 2 up.
  auto t = build_topology(fat_tree(12, 1, 8, 2, 3, 1));
  const auto& ft = dynamic_cast<const FatTreeTopology&>(*t);
  EXPECT_EQ(ft.leaf_down_ports(), 6u);
  EXPECT_EQ(ft.leaf_up_ports(), 2u);
  EXPECT_EQ(ft.leaves(), 2u);
  EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, 2 * 2 / 2.0 * 50e9);
  testing::check_all_routes(*t, true);
}

TEST(FatTree, RoutesAreShortestWalks) {
  testing::check_all_routes(*build_topology(fat_tree(8, 4, 8, 2)), true);
  testing::check_all_routes(*build_topology(fat_tree(8, 2, 4, 3)), true);
  testing::check_all_routes(*build_topology(fat_tree(5, 3, 6, 3, 1, 1, 2)), true);
  testing::check_all_routes(*build_topology(fat_tree(7, 2, 8, 3, 3, 1)), true);
}

TEST(FatTree, EcmpSpreadsFlowsOverUplinks) {
  auto t = build_topology(fat_tree(16, 1, 4, 3));  // k=4 full: 16 hosts
  std::set<std::vector<LinkId>> paths;
  std::vector<LinkId> path;
  for (std::uint64_t f = 0; f < 64; ++f) {
    t->route(0, 15, f, &path);
    paths.insert(path);
  }
  EXPECT_EQ(paths.size(), 4u);  // (k/2)^2 core paths
}

TEST(FatTree, SixtyFiveThousandChipsFitExactly) {
  auto t = build_topology(fat_tree(8192, 8, 64, 3));
  EXPECT_EQ(t->chips(), 65536u);
  EXPECT_EQ(t->inventory().electrical_switches, 5u * 64 * 64 / 4);
  EXPECT_THROW(build_topology(fat_tree(8193, 8, 64, 3)), InputError);
}

TEST(FatTree, LinkFailureRoutesAroundViaEcmp) {
  auto c = fat_tree(16, 1, 4, 3);
  auto healthy = build_topology(c);
  std::vector<LinkId> path;
  healthy->route(0, 15, 7, &path);
  const Link& up = healthy->link(path[1]);  // leaf -> aggregation
  c.failures.links.push_back({healthy->vertex_name(up.a), healthy->vertex_name(up.b)});
  auto t = build_topology(c);
  EXPECT_TRUE(t->link(path[1]).failed);
  for (std::uint64_t f = 0; f < 32; ++f) {
    t->route(0, 15, f, &path);
    EXPECT_EQ(testing::check_walk(*t, 0, 15, path), "");
    EXPECT_EQ(path.size(), 6u);
  }
  testing::check_all_routes(*t, true);
}

TEST(FatTree, NodeFailureFailsItsLinks) {
  auto c = fat_tree(4, 4, 8, 2);
  c.failures.nodes = {1};
  auto t = build_topology(c);
  EXPECT_TRUE(t->chip_failed(4));
  EXPECT_FALSE(t->chip_failed(3));
  EXPECT_TRUE(t->neighbors(4).empty());
  EXPECT_TRUE(t->neighbors(t->vertex_by_name("nodeswitch1")).empty());
  std::vector<LinkId> path;
  EXPECT_THROW(t->route(0, 4, 0, &path), std::runtime_error);
  testing::check_all_routes(*t, true);
  EXPECT_DOUBLE_EQ(t->injection_bandwidth_per_chip().value, 50e9);
}

TEST(FatTree, BadConfigsThrowInputErrors) {
  auto expect_error = [](const TopologyConfig& c, const std::string& needle) {
    try {
      build_topology(c);
      ADD_FAILURE() << "no error, expected " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(fat_tree(4, 1, 7, 2), "fat_tree.radix: must be even");
  expect_error(fat_tree(4, 1, 8, 4), "fat_tree.levels: must be 2 or 3");
  expect_error(fat_tree(40, 1, 8, 2), "use 3 levels");
  expect_error(fat_tree(4, 1, 8, 2, 1, 2), "fat_tree.oversubscription");
  auto c = fat_tree(4, 2, 8, 2);
  c.failures.links.push_back({"chip0", "leaf9"});
  expect_error(c, "no vertex 'leaf9'");
  c.failures.links = {{"chip0", "spine0"}};
  expect_error(c, "no link joins chip0 and spine0");
  c.failures.links = {{"chip0", "bogus"}};
  expect_error(c, "no vertex 'bogus'");
}

TEST(FatTree, VertexNamesRoundTrip) {
  auto t = build_topology(fat_tree(8, 2, 4, 3));
  for (VertexId v = 0; v < t->vertex_count(); ++v) EXPECT_EQ(t->vertex_by_name(t->vertex_name(v)), v);
  EXPECT_EQ(t->vertex_name(0), "chip0");
  EXPECT_EQ(t->vertex_name(16), "nodeswitch0");
  EXPECT_EQ(t->vertex_name(24), "leaf0");
}

}  // namespace
}  // namespace eppsim
