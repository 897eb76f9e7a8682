#include "models/topology/torus.h"

#include <gtest/gtest.h>

#include <set>

#include "base/errors.h"
#include "tests/models/topology/route_check.h"

namespace eppsim {
namespace {

TopologyConfig torus(std::vector<std::uint32_t> dims, std::uint32_t chips_per_node,
                     std::vector<std::uint32_t> block = {}, std::uint32_t links_per_neighbor = 1) {
  TopologyConfig c;
  c.name = "torus";
  std::uint32_t chips = 1;
  for (auto d : dims) chips *= d;
  c.chips_per_node = chips_per_node;
  c.nodes = chips / chips_per_node;
  TorusConfig t;
  t.dims = std::move(dims);
  t.optical_block = std::move(block);
  t.links_per_neighbor = links_per_neighbor;
  t.link = {BytesPerSecond(50e9), Seconds(1e-6)};
  c.network = t;
  return c;
}

TEST(Torus, CountsAndMedia) {
  auto t = build_topology(torus({4, 4, 4}, 4, {4, 4, 4}));
  EXPECT_EQ(t->chips(), 64u);
  EXPECT_EQ(t->nodes(), 16u);
  EXPECT_EQ(t->vertex_count(), 64u);
  EXPECT_EQ(t->links().size(), 3u * 64);
  const auto inv = t->inventory();
  // Each line of 4 leaves its block once (the wrap-around through the OCS).
  EXPECT_EQ(inv.optical_circuits, 3u * 16);
  EXPECT_EQ(inv.electrical_links, 3u * 64 - 3 * 16);
  EXPECT_EQ(inv.optical_switch_ports, 2u * 3 * 16);
  // A node is the whole x line: every x link is intra-node.
  for (const auto& l : t->links()) EXPECT_EQ(l.intra_node, t->node_of(l.a) == t->node_of(l.b));
  std::size_t intra = 0;
  for (const auto& l : t->links()) intra += l.intra_node;
  EXPECT_EQ(intra, 64u);
  // Injection: the 4 y/z links of each chip leave its node.
  EXPECT_DOUBLE_EQ(t->injection_bandwidth_per_chip().value, 4 * 50e9);
}

TEST(Torus, TpuV4LikeOpticalCounts) {
  auto t = build_topology(torus({16, 16, 16}, 4, {4, 4, 4}));
  const auto inv = t->inventory();
  EXPECT_EQ(inv.optical_circuits, 3u * 256 * 4);  // 16 per cube face, 64 cubes, 6 faces, 2 faces per circuit
  EXPECT_EQ(inv.optical_switch_ports, 6144u);
  EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, 2.0 * 256 * 50e9);
}

TEST(Torus, BisectionClosedForm) {
  EXPECT_DOUBLE_EQ(build_topology(torus({4, 6}, 2))->bisection_bandwidth().value, 2.0 * 4 * 50e9);
  EXPECT_DOUBLE_EQ(build_topology(torus({8, 8}, 1, {}, 2))->bisection_bandwidth().value, 2.0 * 8 * 2 * 50e9);
  EXPECT_DOUBLE_EQ(build_topology(torus({5, 3, 2}, 1))->bisection_bandwidth().value, 2.0 * 6 * 50e9);
}

TEST(Torus, DimensionOrderRoutesAreShortest) {
  testing::check_all_routes(*build_topology(torus({4, 6}, 2)), true);
  testing::check_all_routes(*build_topology(torus({5, 3, 4}, 1)), true);
  testing::check_all_routes(*build_topology(torus({2, 3, 3}, 2, {}, 2)), true);
  auto t = build_topology(torus({6, 6}, 1));
  const auto& torus_t = dynamic_cast<const TorusTopology&>(*t);
  std::vector<LinkId> path;
  // Ties go the positive way: 0 -> 3 along x crosses the links of chips 0, 1, 2.
  t->route(0, 3, 0, &path);
  EXPECT_EQ(path, (std::vector<LinkId>{torus_t.plus_link(0, 0, 0), torus_t.plus_link(1, 0, 0), torus_t.plus_link(2, 0, 0)}));
  // x first, then y: chip 0 -> chip 6*5+5 goes -x then -y.
  t->route(0, 35, 0, &path);
  EXPECT_EQ(path, (std::vector<LinkId>{torus_t.plus_link(5, 0, 0), torus_t.plus_link(35, 1, 0)}));
}

TEST(Torus, ParallelLinksSpreadFlows) {
  auto t = build_topology(torus({4, 4}, 1, {}, 4));
  std::set<LinkId> used;
  std::vector<LinkId> path;
  for (std::uint64_t f = 0; f < 64; ++f) {
    t->route(0, 1, f, &path);
    ASSERT_EQ(path.size(), 1u);
    used.insert(path[0]);
  }
  EXPECT_EQ(used.size(), 4u);
}

TEST(Torus, FailedLinkIsRoutedAround) {
  auto c = torus({4, 4}, 1);
  c.failures.links = {{"chip0", "chip1"}};
  auto t = build_topology(c);
  std::vector<LinkId> path;
  t->route(0, 1, 0, &path);
  EXPECT_EQ(testing::check_walk(*t, 0, 1, path), "");
  EXPECT_EQ(path.size(), 3u);
  testing::check_all_routes(*t, true);
  // With two parallel links, the other one carries the flow.
  auto c2 = torus({4, 4}, 1, {}, 2);
  c2.failures.links = {{"chip0", "chip1"}};
  auto t2 = build_topology(c2);
  for (std::uint64_t f = 0; f < 16; ++f) {
    t2->route(0, 1, f, &path);
    ASSERT_EQ(path.size(), 1u);
    EXPECT_FALSE(t2->link(path[0]).failed);
  }
}

TEST(Torus, NodeFailure) {
  auto c = torus({4, 4}, 2);
  c.failures.nodes = {0};
  auto t = build_topology(c);
  EXPECT_TRUE(t->chip_failed(0));
  EXPECT_TRUE(t->chip_failed(1));
  testing::check_all_routes(*t, true);
}

// One dimension: a ring of chips, each joined to the next and the last back to
// the first, routed the short way round.
TEST(Torus, OneDimensionIsARing) {
  auto t = build_topology(torus({8}, 1));
  EXPECT_EQ(t->chips(), 8u);
  EXPECT_EQ(t->links().size(), 8u);
  const auto& ring = dynamic_cast<const TorusTopology&>(*t);
  for (VertexId chip = 0; chip < 8; ++chip) {
    const Link& l = t->link(ring.plus_link(chip, 0, 0));
    EXPECT_EQ(l.a, chip);
    EXPECT_EQ(l.b, (chip + 1) % 8);
    EXPECT_FALSE(l.intra_node);
  }
  std::vector<LinkId> path;
  t->route(0, 1, 0, &path);
  EXPECT_EQ(path, std::vector<LinkId>{ring.plus_link(0, 0, 0)});
  t->route(7, 0, 0, &path);  // the wrap-around link
  EXPECT_EQ(path, std::vector<LinkId>{ring.plus_link(7, 0, 0)});
  t->route(0, 6, 0, &path);  // backwards: 0 -> 7 -> 6
  EXPECT_EQ(path, (std::vector<LinkId>{ring.plus_link(7, 0, 0), ring.plus_link(6, 0, 0)}));
  EXPECT_EQ(ring.hops(0, 4), 4u);
  EXPECT_EQ(ring.hops(1, 7), 2u);
  testing::check_all_routes(*t, true);
  // Cutting the ring in two cuts two links.
  EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, 2.0 * 50e9);
  // Two chips per node: every other link stays inside a node.
  auto paired = build_topology(torus({8}, 2));
  std::size_t intra = 0;
  for (const auto& l : paired->links()) intra += l.intra_node;
  EXPECT_EQ(intra, 4u);
  testing::check_all_routes(*paired, true);
}

TEST(Torus, BadConfigsThrowInputErrors) {
  auto expect_error = [](const TopologyConfig& c, const std::string& needle) {
    try {
      build_topology(c);
      ADD_FAILURE() << "no error, expected " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(torus({4, 2, 2, 2}, 1), "torus.dims: must have 1, 2 or 3 sizes");
  auto mismatch = torus({4, 4}, 1);
  mismatch.nodes = 15;
  expect_error(mismatch, "holds 16 chips, but the cluster has 15");
  expect_error(torus({6, 4}, 4), "must be a multiple of gpus_per_node (4)");
  expect_error(torus({8, 8}, 1, {3, 4}), "torus.optical_block: each size must divide");
  expect_error(torus({8, 8}, 1, {4}), "torus.optical_block: must have as many sizes as dims");
  expect_error(torus({8, 8}, 1, {}, 0), "torus.links_per_neighbor: must be > 0");
}

}  // namespace
}  // namespace eppsim
