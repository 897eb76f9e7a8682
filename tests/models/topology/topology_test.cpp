#include "models/topology/topology.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/models/topology/route_check.h"

namespace eppsim {
namespace {

TopologyConfig small_tree() {
  TopologyConfig c;
  c.name = std::string("t");  // a move: GCC 12 -O3 warns falsely on assigning a literal
  c.nodes = 4;
  c.chips_per_node = 2;
  c.node.link = {BytesPerSecond(450e9), Seconds(1e-7)};
  FatTreeConfig f;
  f.radix = 8;
  f.levels = 2;
  f.nics_per_chip = 2;
  f.link = {BytesPerSecond(50e9), Seconds(5e-7)};
  c.network = f;
  return c;
}

TEST(Topology, NamesParseBackAndUnknownNamesAreInputErrors) {
  auto t = build_topology(small_tree());
  for (VertexId v = 0; v < t->vertex_count(); ++v) EXPECT_EQ(t->vertex_by_name(t->vertex_name(v)), v);
  EXPECT_THROW(t->vertex_by_name("chip8"), InputError);
  EXPECT_THROW(t->vertex_by_name("core0"), InputError);
  EXPECT_THROW(t->vertex_by_name("chip01"), InputError);
  EXPECT_THROW(t->vertex_by_name("chip"), InputError);
  EXPECT_THROW(t->vertex_by_name("switch3"), InputError);
  EXPECT_THROW(t->vertex_by_name("leaf-1"), InputError);
}

TEST(Topology, ListingAPairTwiceFailsTwoParallelLinks) {
  auto c = small_tree();
  // nics_per_chip = 2: both NICs of chip0 on leaf0.
  c.failures.links = {{"chip0", "leaf0"}};
  auto one = build_topology(c);
  EXPECT_TRUE(one->find_live_link(0, one->vertex_by_name("leaf0")).has_value());
  c.failures.links.push_back({"leaf0", "chip0"});
  auto both = build_topology(c);
  EXPECT_FALSE(both->find_live_link(0, both->vertex_by_name("leaf0")).has_value());
  // A third listing is harmless: the pair has links, all failed.
  c.failures.links.push_back({"leaf0", "chip0"});
  EXPECT_NO_THROW(build_topology(c));
  std::vector<LinkId> path;
  both->route(0, 7, 0, &path);
  EXPECT_EQ(testing::check_walk(*both, 0, 7, path), "");
}

TEST(Topology, ShortestPathRouterAgreesWithBfs) {
  auto t = build_topology(small_tree());
  ShortestPathRouter r(*t);
  const auto dist = r.distances(0);
  EXPECT_EQ(dist[0], 0u);
  EXPECT_EQ(dist[1], 2u);  // via the node switch (or the shared leaf)
  std::vector<LinkId> path;
  for (VertexId d = 0; d < t->chips(); ++d) {
    ASSERT_TRUE(r.route(0, d, 3, &path));
    EXPECT_EQ(testing::check_walk(*t, 0, d, path), "");
    EXPECT_EQ(path.size(), dist[d]);
    ASSERT_TRUE(t->route_shortest_path(0, d, 3, &path));
    EXPECT_EQ(path.size(), dist[d]);
  }
}

TEST(Topology, UnreachableChipsThrowRuntimeErrors) {
  auto c = small_tree();
  c.failures.links = {{"chip0", "leaf0"}, {"chip0", "leaf0"}, {"chip0", "nodeswitch0"}};
  auto t = build_topology(c);
  std::vector<LinkId> path;
  EXPECT_THROW(t->route(0, 5, 0, &path), std::runtime_error);
  EXPECT_FALSE(t->route_shortest_path(0, 5, 0, &path));
  EXPECT_THROW(t->route(0, 100, 0, &path), std::runtime_error);
}

TEST(Topology, InventoryCountsFailedLinksToo) {
  auto c = small_tree();
  const auto healthy = build_topology(c)->inventory();
  c.failures.nodes = {1};
  const auto failed = build_topology(c)->inventory();
  EXPECT_EQ(healthy.optical_links, failed.optical_links);
  EXPECT_EQ(healthy.electrical_links, failed.electrical_links);
}

TEST(Topology, EcmpHashIsDeterministicAndSpreads) {
  EXPECT_EQ(ecmp_hash(1, 2, 3), ecmp_hash(1, 2, 3));
  EXPECT_NE(ecmp_hash(1, 2, 3), ecmp_hash(2, 1, 3));
  int odd = 0;
  for (std::uint64_t f = 0; f < 1000; ++f) odd += ecmp_hash(5, 9, f) % 2;
  EXPECT_GT(odd, 400);
  EXPECT_LT(odd, 600);
}

TEST(Topology, BuildRejectsEmptyClusters) {
  auto c = small_tree();
  c.nodes = 0;
  EXPECT_THROW(build_topology(c), InputError);
  c = small_tree();
  c.failures.nodes = {4};
  EXPECT_THROW(build_topology(c), InputError);
}

}  // namespace
}  // namespace eppsim
