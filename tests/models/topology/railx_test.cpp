#include "models/topology/railx.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <set>

#include "base/errors.h"
#include "tests/models/topology/route_check.h"

namespace eppsim {
namespace {

TopologyConfig railx(std::uint32_t nx, std::uint32_t ny, std::uint32_t chips, std::uint32_t ppx, std::uint32_t ppy,
                     RailMode mode = RailMode::AllToAll, std::uint32_t rails_x = 0, std::uint32_t rails_y = 0) {
  TopologyConfig c;
  c.name = "rx";
  c.nodes = nx * ny;
  c.chips_per_node = chips;
  c.node.link = {BytesPerSecond(900e9), Seconds(1e-7)};
  RailXConfig r;
  r.nx = nx;
  r.ny = ny;
  r.mode = mode;
  r.ports_per_chip_x = ppx;
  r.ports_per_chip_y = ppy;
  r.rails_x = rails_x;
  r.rails_y = rails_y;
  r.link = {BytesPerSecond(112.5e9), Seconds(5e-7)};
  r.ocs_radix = 300;
  c.network = r;
  return c;
}

std::size_t inter_node_hops(const Topology& t, const std::vector<LinkId>& path) {
  std::size_t n = 0;
  for (const auto id : path) n += t.link(id).intra_node ? 0 : 1;
  return n;
}

// Every pair of live nodes in one row or column shares a direct circuit.
void expect_lines_all_to_all(const RailXTopology& t) {
  const auto& c = t.config();
  for (std::uint32_t a = 0; a < t.nodes(); ++a) {
    for (std::uint32_t b = 0; b < t.nodes(); ++b) {
      if (a == b || t.node_failed(a) || t.node_failed(b)) continue;
      if (t.x_of(a) != t.x_of(b) && t.y_of(a) != t.y_of(b)) continue;
      EXPECT_FALSE(t.links_between(a, b).empty()) << "nodes " << a << " and " << b << " of " << c.nx << "x" << c.ny;
    }
  }
}

TEST(RailX, PortOwnerMapping) {
  // 4 ports per chip: rails 0 and 1 on chip 0, rails 2 and 3 on chip 1.
  EXPECT_EQ(railx_port_chip(0, 0, 4), 0u);
  EXPECT_EQ(railx_port_chip(1, 1, 4), 0u);
  EXPECT_EQ(railx_port_chip(2, 0, 4), 1u);
  // 1 port per chip: rail r spans chips 2r (west) and 2r+1 (east).
  EXPECT_EQ(railx_port_chip(3, 0, 1), 6u);
  EXPECT_EQ(railx_port_chip(3, 1, 1), 7u);
}

TEST(RailX, CountsOddGrid) {
  auto t = build_topology(railx(5, 5, 4, 1, 1));
  const auto& rx = dynamic_cast<const RailXTopology&>(*t);
  EXPECT_EQ(t->kind(), "railx-all-to-all");
  EXPECT_EQ(t->chips(), 100u);
  EXPECT_EQ(rx.rails_x(), 2u);
  EXPECT_EQ(rx.rails_y(), 2u);
  EXPECT_EQ(t->vertices_of_kind(VertexKind::NodeSwitch), 25u);
  EXPECT_EQ(rx.rail_links(), 2u * 5 * (2 * 5));
  EXPECT_EQ(t->links().size(), 100u + 100u);
  const auto inv = t->inventory();
  EXPECT_EQ(inv.optical_circuits, 100u);
  EXPECT_EQ(inv.electrical_links, 100u);
  EXPECT_EQ(inv.optical_switches, 10u);  // one 300-port OCS per row and column (20 ports each)
  EXPECT_EQ(inv.optical_switch_ports, 3000u);
  EXPECT_EQ(inv.electrical_switch_ports, 0u);
  // Each node: 2 rails x 2 ports per dimension = 8 circuit ends over 4 chips.
  EXPECT_DOUBLE_EQ(t->injection_bandwidth_per_chip().value, 2 * 112.5e9);
  // K_5 x K_5 with one rail per pair: n * floor(n/2) * ceil(n/2) links.
  EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, 5 * 2 * 3 * 112.5e9);
  expect_lines_all_to_all(rx);
}

TEST(RailX, CountsEvenGrid) {
  // rails 4 per dimension. Rows of 4: cycle, matching, 2 spare cycles -> 4+4+4+4
  // (a matching joins each of its n/2 pairs twice). Columns of 6: 2 cycles,
  // matching, 1 spare -> 6+6+6+6.
  auto t = build_topology(railx(4, 6, 4, 2, 2));
  const auto& rx = dynamic_cast<const RailXTopology&>(*t);
  EXPECT_EQ(rx.rail_links(), 6u * 16 + 4u * 24);
  EXPECT_EQ(rx.healthy_rail_links(), rx.rail_links());
  expect_lines_all_to_all(rx);
  // In a row of 4, node 0's cycle neighbours are joined by rails 0, 2 and 3,
  // its matched node by the matching rail's two circuits.
  std::set<std::size_t> counts;
  for (std::uint32_t b = 1; b < 4; ++b) counts.insert(rx.links_between(0, b).size());
  EXPECT_EQ(counts, (std::set<std::size_t>{2, 3}));
  // Every port is patched: each chip has its 2 X and 2 Y circuit ends.
  std::vector<std::uint32_t> ends(t->chips(), 0);
  for (const auto& l : t->links()) {
    if (l.intra_node) continue;
    ++ends[l.a];
    ++ends[l.b];
  }
  for (VertexId c = 0; c < t->chips(); ++c) EXPECT_EQ(ends[c], 4u) << "chip " << c;
}

TEST(RailX, EcmpSpreadsAPairOverItsSpareRails) {
  // Rows of 4 with 4 rails: cycle (2, 0, 3, 1) on rails 0, 2 and 3, matching
  // {0, 1}, {3, 2} on rail 1; nodes 0 and 2 share the cycle's rails.
  auto t = build_topology(railx(4, 1, 4, 2, 2));
  const auto& rx = dynamic_cast<const RailXTopology&>(*t);
  ASSERT_EQ(rx.links_between(0, 1).size(), 2u);
  ASSERT_EQ(rx.links_between(0, 2).size(), 3u);
  std::set<LinkId> used;
  std::vector<LinkId> path;
  for (std::uint64_t f = 0; f < 64; ++f) {
    t->route(0, 8, f, &path);
    for (auto id : path) {
      if (!t->link(id).intra_node) used.insert(id);
    }
  }
  EXPECT_EQ(used.size(), 3u);
  std::set<std::int32_t> rails;
  for (auto id : used) rails.insert(t->link(id).rail);
  EXPECT_EQ(rails, (std::set<std::int32_t>{0, 2, 3}));
}

TEST(RailX, AllToAllRoutesUseAtMostTwoInterNodeHops) {
  for (const auto& [nx, ny] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{3, 3}, {4, 5}, {6, 6}, {7, 2}, {5, 1}, {2, 2}}) {
    auto t = build_topology(railx(nx, ny, 4, 2, 2));
    std::vector<LinkId> path;
    for (VertexId s = 0; s < t->chips(); ++s) {
      for (VertexId d = 0; d < t->chips(); ++d) {
        for (std::uint64_t f = 0; f < 3; ++f) {
          t->route(s, d, f, &path);
          ASSERT_EQ(testing::check_walk(*t, s, d, path), "") << nx << "x" << ny << " " << s << "->" << d;
          const std::size_t expected = (t->node_of(s) % nx != t->node_of(d) % nx) + (t->node_of(s) / nx != t->node_of(d) / nx);
          ASSERT_EQ(inter_node_hops(*t, path), expected) << nx << "x" << ny << " " << s << "->" << d;
        }
      }
    }
  }
}

TEST(RailX, MeshNodesRouteThroughTheRailOwner) {
  auto c = railx(5, 3, 4, 1, 1);
  c.node.kind = NodeFabricKind::Mesh;
  c.node.dims = {2, 2};
  auto t = build_topology(c);
  testing::check_all_routes(*t, false, 2);
}

TEST(RailX, RingModeGoesTheShortWayAround) {
  auto t = build_topology(railx(6, 5, 2, 2, 2, RailMode::Ring));
  EXPECT_EQ(t->kind(), "railx-ring");
  const auto& rx = dynamic_cast<const RailXTopology&>(*t);
  EXPECT_EQ(rx.rail_links(), 5u * 2 * 6 + 6u * 2 * 5);
  // Ring bisection: 2 circuits per rail per line cross a cut.
  EXPECT_DOUBLE_EQ(t->bisection_bandwidth().value, std::min(5.0 * 2 * 2, 6.0 * 2 * 2) * 112.5e9);
  std::vector<LinkId> path;
  for (VertexId s = 0; s < t->chips(); ++s) {
    for (VertexId d = 0; d < t->chips(); ++d) {
      t->route(s, d, s + d, &path);
      ASSERT_EQ(testing::check_walk(*t, s, d, path), "");
      const std::uint32_t ns = t->node_of(s), nd = t->node_of(d);
      auto ring = [](std::uint32_t a, std::uint32_t b, std::uint32_t n) {
        const std::uint32_t delta = (b + n - a) % n;
        return std::min(delta, n - delta);
      };
      ASSERT_EQ(inter_node_hops(*t, path), ring(ns % 6, nd % 6, 6) + ring(ns / 6, nd / 6, 5)) << s << "->" << d;
    }
  }
}

TEST(RailX, NodeFailureRebuildsRowAndColumn) {
  auto c = railx(5, 5, 4, 1, 1);
  c.failures.nodes = {12};  // (2, 2)
  auto t = build_topology(c);
  const auto& rx = dynamic_cast<const RailXTopology&>(*t);
  EXPECT_TRUE(t->node_failed(12));
  EXPECT_TRUE(t->chip_failed(48));
  expect_lines_all_to_all(rx);
  const auto report = rx.failure_report();
  EXPECT_EQ(report.failed_nodes, (std::vector<std::uint32_t>{12}));
  EXPECT_EQ(report.rebuilt_rows, (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(report.rebuilt_columns, (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(report.row_sizes, (std::vector<std::uint32_t>{4}));
  // Row of 5: 2 rails x 5 = 10 circuits; of 4: a cycle (4) and the matching
  // (4: two circuits for each of its 2 pairs). Only the failed node's 8 ports go dark.
  EXPECT_EQ(report.rail_links_lost, 2u * (10 - 8));
  EXPECT_DOUBLE_EQ(report.rail_bandwidth_lost.value, 4 * 112.5e9);
  EXPECT_DOUBLE_EQ(report.injection_bandwidth_lost.value, 8 * 112.5e9);
  EXPECT_NE(report.summary().find("rebuilt row 2 over its 4 live nodes"), std::string::npos) << report.summary();
  // No link touches the failed node's chips except its own (failed) fabric.
  for (const auto& l : t->links()) {
    if (t->node_of(l.a) == 12 || (l.b < t->chips() && t->node_of(l.b) == 12)) {
      EXPECT_TRUE(l.failed);
    }
  }
  std::vector<LinkId> path;
  for (VertexId s = 0; s < t->chips(); ++s) {
    if (t->chip_failed(s)) continue;
    for (VertexId d = 0; d < t->chips(); ++d) {
      if (t->chip_failed(d)) continue;
      t->route(s, d, 1, &path);
      ASSERT_EQ(testing::check_walk(*t, s, d, path), "") << s << "->" << d;
      ASSERT_LE(inter_node_hops(*t, path), 2u) << s << "->" << d;
    }
  }
  EXPECT_THROW(t->route(0, 48, 0, &path), std::runtime_error);
}

TEST(RailX, OddRowLosingANodeStaysAllToAll) {
  // Rows of 6 -> 5 after the failure: Walecki over the survivors.
  auto c = railx(6, 4, 4, 2, 2);
  c.failures.nodes = {0, 23};
  auto t = build_topology(c);
  const auto& rx = dynamic_cast<const RailXTopology&>(*t);
  expect_lines_all_to_all(rx);
  testing::check_all_routes(*t, false, 1);
  EXPECT_EQ(rx.failure_report().rebuilt_rows.size(), 2u);
  EXPECT_EQ(rx.failure_report().rebuilt_columns.size(), 2u);
}

TEST(RailX, FailedCircuitIsRoutedAround) {
  auto c = railx(5, 5, 4, 1, 1);
  auto healthy = build_topology(c);
  const auto& rx = dynamic_cast<const RailXTopology&>(*healthy);
  const auto direct = rx.links_between(0, 1);
  ASSERT_EQ(direct.size(), 1u);
  const Link& l = healthy->link(direct[0]);
  c.failures.links.push_back({healthy->vertex_name(l.a), healthy->vertex_name(l.b)});
  auto t = build_topology(c);
  EXPECT_TRUE(t->link(direct[0]).failed);
  EXPECT_EQ(dynamic_cast<const RailXTopology&>(*t).failure_report().failed_links, 1u);
  std::vector<LinkId> path;
  t->route(0, 4, 0, &path);  // chip0 on node 0 to chip4 on node 1
  EXPECT_EQ(testing::check_walk(*t, 0, 4, path), "");
  testing::check_all_routes(*t, false, 1);
}

TEST(RailX, BadConfigsThrowInputErrors) {
  auto expect_error = [](const TopologyConfig& c, const std::string& needle) {
    try {
      build_topology(c);
      ADD_FAILURE() << "no error, expected " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(railx(6, 3, 4, 1, 1), "railx.rails_x: all-to-all over 6 nodes per row (nx) needs 3 rails");
  expect_error(railx(3, 3, 4, 1, 1, RailMode::AllToAll, 3), "railx.rails_x: 3 rails need 6 ports");
  auto grid = railx(3, 3, 4, 1, 1);
  grid.nodes = 10;
  expect_error(grid, "nx x ny = 3 x 3 = 9 nodes must equal the cluster's 10 nodes");
  expect_error(railx(3, 3, 1, 1, 1), "railx.ports_per_chip_x: a node needs at least 2 x ports");
  auto failed = railx(3, 3, 4, 1, 1);
  failed.failures.nodes = {9};
  expect_error(failed, "failures.nodes: node 9 does not exist");
  // Ring mode has no row-size limit.
  EXPECT_NO_THROW(build_topology(railx(9, 3, 4, 1, 1, RailMode::Ring)));
}

TEST(RailX, VertexNamesRoundTrip) {
  auto t = build_topology(railx(3, 3, 4, 1, 1));
  for (VertexId v = 0; v < t->vertex_count(); ++v) EXPECT_EQ(t->vertex_by_name(t->vertex_name(v)), v);
  EXPECT_EQ(t->vertex_name(36), "nodeswitch0");
}

TEST(RailX, Builds200KChipsQuickly) {
  const auto start = std::chrono::steady_clock::now();
  auto c = railx(79, 79, 32, 4, 4);
  auto t = build_topology(c);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& rx = dynamic_cast<const RailXTopology&>(*t);
  EXPECT_EQ(t->chips(), 79u * 79 * 32);
  EXPECT_EQ(rx.rails_x(), 64u);
  EXPECT_EQ(rx.rail_links(), 2ull * 79 * 64 * 79);
  EXPECT_DOUBLE_EQ(t->injection_bandwidth_per_chip().value, 900e9);
  std::vector<LinkId> path;
  t->route(0, t->chips() - 1, 0, &path);
  EXPECT_EQ(testing::check_walk(*t, 0, t->chips() - 1, path), "");
  EXPECT_EQ(inter_node_hops(*t, path), 2u);
  std::printf("200K-chip RailX: %u chips, %zu links, built in %.3f s\n", t->chips(), t->links().size(), seconds);
}

}  // namespace
}  // namespace eppsim
