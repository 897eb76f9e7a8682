#include "models/topology/topology_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "models/topology/railx.h"

namespace eppsim {
namespace {

constexpr double kGB = 1e9;

TopologyConfig base(std::uint32_t nodes, std::uint32_t chips_per_node, const std::string& name) {
  TopologyConfig c;
  c.name = name;
  c.nodes = nodes;
  c.chips_per_node = chips_per_node;
  c.node.kind = NodeFabricKind::Switched;
  c.node.link = {BytesPerSecond(400 * kGB), Seconds(1e-7)};
  return c;
}

TopologyConfig simple(std::uint32_t nodes, std::uint32_t chips_per_node) {
  auto c = base(nodes, chips_per_node, "simple");
  c.network = SimpleNetworkConfig{{BytesPerSecond(50 * kGB), Seconds(2e-6)}};
  return c;
}

TopologyConfig fat_tree(std::uint32_t nodes, std::uint32_t chips_per_node, std::uint32_t radix, std::uint32_t levels,
                        std::uint32_t down = 1, std::uint32_t up = 1, std::uint32_t nics = 1) {
  auto c = base(nodes, chips_per_node, "fat-tree");
  FatTreeConfig f;
  f.radix = radix;
  f.levels = levels;
  f.oversubscription_down = down;
  f.oversubscription_up = up;
  f.nics_per_chip = nics;
  f.link = {BytesPerSecond(50 * kGB), Seconds(5e-7)};
  c.network = f;
  return c;
}

TopologyConfig rail_optimized(std::uint32_t nodes, std::uint32_t chips_per_node, std::uint32_t radix,
                              std::uint32_t su_nodes, bool rail_only) {
  auto c = base(nodes, chips_per_node, rail_only ? "rail-only" : "rail-optimized");
  RailOptimizedConfig r;
  r.radix = radix;
  r.scalable_unit_nodes = su_nodes;
  r.rail_only = rail_only;
  r.link = {BytesPerSecond(50 * kGB), Seconds(5e-7)};
  c.network = r;
  return c;
}

TopologyConfig torus(std::vector<std::uint32_t> dims, std::uint32_t chips_per_node, std::vector<std::uint32_t> block = {},
                     std::uint32_t links_per_neighbor = 1) {
  std::uint32_t chips = 1;
  for (auto d : dims) chips *= d;
  auto c = base(chips / chips_per_node, chips_per_node, "torus");
  TorusConfig t;
  t.dims = std::move(dims);
  t.optical_block = std::move(block);
  t.links_per_neighbor = links_per_neighbor;
  t.link = {BytesPerSecond(25 * kGB), Seconds(3e-7)};
  c.network = t;
  return c;
}

TopologyConfig railx(std::uint32_t nx, std::uint32_t ny, std::uint32_t chips_per_node, std::uint32_t ports_per_chip,
                     RailMode mode = RailMode::AllToAll, std::uint32_t ocs_radix = 300) {
  auto c = base(nx * ny, chips_per_node, "railx");
  RailXConfig x;
  x.nx = nx;
  x.ny = ny;
  x.mode = mode;
  x.ports_per_chip_x = ports_per_chip;
  x.ports_per_chip_y = ports_per_chip;
  x.link = {BytesPerSecond(100 * kGB), Seconds(5e-7)};
  x.ocs_radix = ocs_radix;
  c.network = x;
  return c;
}

// ----------------------------------------------------------- plain references

// Chip-to-chip hops by one plain BFS per chip (every link weight 1), and
// inter-node hops by one 0-1 BFS per chip (links inside a node weight 0).
struct PlainDiameters {
  std::int64_t chip = 0;
  std::int64_t inter = 0;
};

PlainDiameters plain_diameters(const Topology& t) {
  const std::uint32_t n = t.vertex_count();
  constexpr std::uint32_t kInf = std::numeric_limits<std::uint32_t>::max();
  PlainDiameters out;
  std::vector<std::uint32_t> dist(n), dist01(n);
  for (VertexId s = 0; s < t.chips(); ++s) {
    if (t.chip_failed(s)) continue;
    std::fill(dist.begin(), dist.end(), kInf);
    std::fill(dist01.begin(), dist01.end(), kInf);
    std::deque<VertexId> queue{s};
    dist[s] = 0;
    while (!queue.empty()) {
      const VertexId v = queue.front();
      queue.pop_front();
      for (const auto& [u, id] : t.neighbors(v)) {
        (void)id;
        if (dist[u] != kInf || (u < t.chips() && t.chip_failed(u))) continue;
        dist[u] = dist[v] + 1;
        queue.push_back(u);
      }
    }
    std::deque<VertexId> deque{s};
    dist01[s] = 0;
    while (!deque.empty()) {
      const VertexId v = deque.front();
      deque.pop_front();
      for (const auto& [u, id] : t.neighbors(v)) {
        if (u < t.chips() && t.chip_failed(u)) continue;
        const std::uint32_t w = t.link(id).intra_node ? 0 : 1;
        if (dist01[v] + w < dist01[u]) {
          dist01[u] = dist01[v] + w;
          if (w == 0) deque.push_front(u); else deque.push_back(u);
        }
      }
    }
    for (VertexId d = 0; d < t.chips(); ++d) {
      if (t.chip_failed(d)) continue;
      if (dist[d] == kInf) return {-1, -1};
      out.chip = std::max<std::int64_t>(out.chip, dist[d]);
      out.inter = std::max<std::int64_t>(out.inter, dist01[d]);
    }
  }
  return out;
}

std::vector<bool> first_half(const Topology& t) {
  std::vector<bool> a(t.chips(), false);
  for (VertexId c = 0; c < t.chips() / 2; ++c) a[c] = true;
  return a;
}

std::vector<bool> complement(const std::vector<bool>& a) {
  std::vector<bool> b(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) b[i] = !a[i];
  return b;
}

// The minimum over every balanced split of the chips of the max-flow between
// the halves: the bisection bandwidth by definition (tiny graphs only).
double exhaustive_bisection(const Topology& t) {
  const std::uint32_t n = t.chips();
  double best = std::numeric_limits<double>::infinity();
  // Chip 0 stays on side A: each split is counted once.
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << n); ++mask) {
    if (!(mask & 1) || std::popcount(mask) != static_cast<int>(n / 2)) continue;
    std::vector<bool> a(n);
    for (std::uint32_t i = 0; i < n; ++i) a[i] = (mask >> i) & 1;
    best = std::min(best, max_flow_Bps(t, a, complement(a)));
  }
  return best;
}

// ------------------------------------------------------------------- diameter

TEST(Diameters, MatchPlainBfsOnSmallInstances) {
  const std::vector<TopologyConfig> configs = {
      simple(2, 4),
      simple(6, 1),
      fat_tree(32, 4, 8, 3),              // full 3-level k = 8
      fat_tree(12, 4, 8, 3, 3, 1),        // tapered 3:1
      fat_tree(8, 4, 8, 2),
      rail_optimized(8, 4, 8, 2, false),
      rail_optimized(8, 4, 8, 2, true),
      torus({4, 4, 4}, 2),
      torus({8, 6}, 4, {4, 2}),
      torus({5, 3}, 1),
      railx(5, 5, 4, 1),
      railx(4, 3, 2, 2),
      railx(4, 4, 4, 1, RailMode::Ring),
  };
  for (const auto& config : configs) {
    const auto t = build_topology(config);
    const auto plain = plain_diameters(*t);
    const auto d = measure_diameters(*t);
    EXPECT_TRUE(d.exact) << config.name;
    EXPECT_EQ(d.chip_hops, plain.chip) << config.name << " " << t->chips() << " chips";
    EXPECT_EQ(d.inter_node_hops, plain.inter) << config.name << " " << t->chips() << " chips";
  }
}

TEST(Diameters, KnownValues) {
  // Fat-tree: chip, leaf, aggregation, core, aggregation, leaf, chip.
  EXPECT_EQ(measure_diameters(*build_topology(fat_tree(128, 1, 8, 3))).chip_hops, 6);
  EXPECT_EQ(measure_diameters(*build_topology(fat_tree(128, 1, 8, 3))).inter_node_hops, 6);
  // Torus k-ary n-cube: n * floor(k / 2).
  EXPECT_EQ(measure_diameters(*build_topology(torus({6, 6, 6}, 1))).chip_hops, 9);
  EXPECT_EQ(measure_diameters(*build_topology(torus({5, 5}, 1))).chip_hops, 4);
  // Nodes of 6 chips along the first dimension: the inter-node distance runs
  // in the other dimension only.
  EXPECT_EQ(measure_diameters(*build_topology(torus({6, 6}, 6))).inter_node_hops, 3);
  // RailX all-to-all: one hop per dimension (railx.md 2.2).
  EXPECT_EQ(measure_diameters(*build_topology(railx(5, 5, 4, 1))).inter_node_hops, 2);
  EXPECT_EQ(measure_diameters(*build_topology(railx(9, 9, 8, 1))).inter_node_hops, 2);
}

// Sampling (BFS from every chip of a few nodes) is exact on node-transitive
// networks and on these constructions.
TEST(Diameters, SampledEqualsExact) {
  MeasureOptions sampled;
  sampled.exact_diameter_budget = 0.0;
  sampled.sample_nodes = 3;
  sampled.sample_min_sources = 8;
  const std::vector<TopologyConfig> configs = {
      fat_tree(128, 4, 16, 3), torus({8, 8, 8}, 4),       rail_optimized(64, 4, 16, 8, false),
      railx(7, 7, 6, 1),       railx(6, 8, 4, 2),          railx(7, 5, 4, 1, RailMode::Ring),
      railx(9, 9, 8, 1),
  };
  for (const auto& config : configs) {
    const auto t = build_topology(config);
    SCOPED_TRACE(t->kind() + " " + std::to_string(t->chips()) + " chips");
    const auto exact = measure_diameters(*t);
    const auto approx = measure_diameters(*t, sampled);
    ASSERT_TRUE(exact.exact);
    EXPECT_FALSE(approx.exact);
    EXPECT_LT(approx.sources, t->chips());
    EXPECT_EQ(approx.chip_hops, exact.chip_hops) << config.name;
    EXPECT_EQ(approx.inter_node_hops, exact.inter_node_hops) << config.name;
  }
}

TEST(Diameters, EccentricityOfChosenSources) {
  // 8 x 2 torus: 4 hops around the ring of 8, 1 across.
  const auto t = build_topology(torus({8, 2}, 1));
  const auto ecc = chip_eccentricities(*t, {0, 3});
  ASSERT_EQ(ecc.chip_hops.size(), 2u);
  EXPECT_EQ(ecc.chip_hops[0], 5);
  EXPECT_EQ(ecc.chip_hops[1], 5);
  EXPECT_THROW(chip_eccentricities(*t, {t->vertex_count()}), std::invalid_argument);
}

TEST(Diameters, MoreThanSixtyFourSourcesInBatches) {
  // 130 chips: three bit-parallel batches.
  const auto t = build_topology(torus({13, 10}, 1));
  const auto d = measure_diameters(*t);
  EXPECT_EQ(d.sources, 130u);
  EXPECT_EQ(d.chip_hops, 6 + 5);
}

TEST(Diameters, DisconnectedIsMinusOne) {
  // One chip per node, its only NIC failed: nothing reaches it.
  auto config = simple(4, 1);
  config.failures.links.emplace_back("chip2", "leaf0");
  const auto t = build_topology(config);
  const auto d = measure_diameters(*t);
  EXPECT_EQ(d.chip_hops, -1);
  EXPECT_EQ(d.inter_node_hops, -1);
  const auto m = measure_topology(*t, default_network_prices());
  EXPECT_FALSE(m.connected);
  EXPECT_DOUBLE_EQ(m.allreduce_bandwidth_Bps, 0.0);
}

TEST(Diameters, FailedNodesAreNeitherSourcesNorTargets) {
  auto config = torus({6, 6}, 1);
  config.failures.nodes = {7};
  const auto t = build_topology(config);
  const auto plain = plain_diameters(*t);
  const auto d = measure_diameters(*t);
  EXPECT_EQ(d.sources, 35u);
  EXPECT_EQ(d.chip_hops, plain.chip);
  EXPECT_EQ(d.inter_node_hops, plain.inter);
}

// ------------------------------------------------------------------ bisection

// The closed forms against max-flow between the two halves of the chips in
// index order (the cut the constructions' formulas describe).
TEST(Bisection, ClosedFormEqualsMaxFlowBetweenHalves) {
  const std::vector<TopologyConfig> configs = {
      simple(4, 4),
      fat_tree(32, 4, 8, 3),
      fat_tree(18, 8, 16, 3, 3, 1),  // 12 leaves of 12 down-ports, 4 up
      fat_tree(8, 4, 8, 2),
      fat_tree(12, 8, 16, 2, 3, 1),  // 8 leaves of 12 down-ports, 4 up
      rail_optimized(16, 4, 8, 4, false),
      rail_optimized(16, 4, 8, 4, true),
  };
  for (const auto& config : configs) {
    const auto t = build_topology(config);
    SCOPED_TRACE(t->kind() + " " + std::to_string(t->chips()) + " chips");
    const auto a = first_half(*t);
    EXPECT_DOUBLE_EQ(max_flow_Bps(*t, a, complement(a)), t->bisection_bandwidth().value);
  }
}

// A torus's closed form cuts through its largest dimension.
TEST(Bisection, TorusClosedFormEqualsMaxFlowAcrossTheLargestDimension) {
  const std::vector<TopologyConfig> configs = {
      torus({4, 4, 4}, 1), torus({8, 4}, 4, {4, 2}), torus({4, 8}, 2, {}, 2), torus({6, 4, 10}, 2, {2, 2, 5}),
  };
  for (const auto& config : configs) {
    const auto t = build_topology(config);
    const auto& dims = std::get<TorusConfig>(config.network).dims;
    const auto largest = static_cast<std::uint32_t>(std::max_element(dims.begin(), dims.end()) - dims.begin());
    std::uint32_t stride = 1;
    for (std::uint32_t i = 0; i < largest; ++i) stride *= dims[i];
    std::vector<bool> a(t->chips());
    for (VertexId c = 0; c < t->chips(); ++c) a[c] = (c / stride) % dims[largest] < dims[largest] / 2;
    EXPECT_DOUBLE_EQ(max_flow_Bps(*t, a, complement(a)), t->bisection_bandwidth().value) << dims.size() << "D";
  }
}

// RailX's closed form cuts the grid between columns (or rows) nx/2 - 1 and
// nx/2; with node = y * nx + x, that is the split of each row in halves.
TEST(Bisection, RailXClosedFormEqualsMaxFlowAcrossTheMiddleColumns) {
  for (const auto& config : {railx(6, 6, 6, 1), railx(5, 5, 4, 1), railx(4, 4, 2, 2), railx(6, 4, 4, 2, RailMode::Ring)}) {
    const auto t = build_topology(config);
    const auto& x = dynamic_cast<const RailXTopology&>(*t);
    std::vector<bool> a(t->chips(), false);
    for (VertexId c = 0; c < t->chips(); ++c) a[c] = x.x_of(t->node_of(c)) < x.config().nx / 2;
    EXPECT_DOUBLE_EQ(max_flow_Bps(*t, a, complement(a)), t->bisection_bandwidth().value) << t->kind();
  }
}

// The definition itself: the minimum over every balanced split.
TEST(Bisection, ClosedFormIsTheMinimumOverAllBalancedCuts) {
  const std::vector<TopologyConfig> configs = {
      simple(2, 4),
      fat_tree(8, 1, 4, 2),
      fat_tree(2, 6, 8, 2, 3, 1),  // 2 leaves of 6 down-ports, 2 up
      torus({4, 4}, 1),
      torus({4, 4}, 2, {2, 2}),
      torus({2, 6}, 2),
      railx(4, 4, 1, 4),
      railx(3, 4, 1, 2, RailMode::Ring),
  };
  for (const auto& config : configs) {
    const auto t = build_topology(config);
    SCOPED_TRACE(t->kind() + " " + std::to_string(t->chips()) + " chips");
    ASSERT_LE(t->chips(), 16u);
    EXPECT_DOUBLE_EQ(exhaustive_bisection(*t), t->bisection_bandwidth().value) << config.name << " " << t->kind();
  }
}

TEST(MaxFlow, RejectsAChipOnBothSides) {
  const auto t = build_topology(simple(2, 2));
  std::vector<bool> all(t->chips(), true);
  EXPECT_THROW(max_flow_Bps(*t, all, all), std::invalid_argument);
  EXPECT_THROW(max_flow_Bps(*t, {true}, {false}), std::invalid_argument);
}

// ---------------------------------------------------------- reference fat-tree

TEST(ReferenceFatTree, LevelsAndPartsFromTheClosedForm) {
  const NetworkPrices prices{.transceiver_usd = 100, .fibre_usd = 10, .electrical_switch_port_usd = 1000,
                             .optical_switch_port_usd = 0, .copper_link_usd = 0};
  // 65,536 ports of radix 64: exactly 3 levels (2 * 32^3).
  auto ft = reference_fat_tree(65536, 100 * kGB, 100 * kGB, 64, prices);
  EXPECT_EQ(ft.levels, 3u);
  EXPECT_EQ(ft.endpoint_ports, 65536u);
  EXPECT_EQ(ft.switch_ports, 5u * 65536);
  EXPECT_EQ(ft.optical_links, 3u * 65536);
  EXPECT_DOUBLE_EQ(ft.cost_usd, 65536.0 * (5 * 1000 + 3 * 210));
  EXPECT_DOUBLE_EQ(ft.injection_bandwidth_Bps, 65536 * 100 * kGB);
  EXPECT_DOUBLE_EQ(ft.bisection_bandwidth_Bps, 65536 * 50 * kGB);
  // One port more: a fourth level.
  EXPECT_EQ(reference_fat_tree(65537, 100 * kGB, 100 * kGB, 64, prices).levels, 4u);
  // A single switch holds 64 ports; 2 levels hold 2048.
  EXPECT_EQ(reference_fat_tree(64, 100 * kGB, 100 * kGB, 64, prices).levels, 1u);
  EXPECT_EQ(reference_fat_tree(2048, 100 * kGB, 100 * kGB, 64, prices).levels, 2u);
  // 900 GB/s per chip through 112.5 GB/s ports: 8 ports a chip.
  ft = reference_fat_tree(199712, 900 * kGB, 112.5 * kGB, 64, prices);
  EXPECT_EQ(ft.endpoint_ports, 8u * 199712);
  EXPECT_EQ(ft.levels, 4u);
  // A fraction of a port rounds up.
  EXPECT_EQ(reference_fat_tree(10, 150 * kGB, 100 * kGB, 64, prices).endpoint_ports, 20u);
  EXPECT_THROW(reference_fat_tree(10, 1, 1, 7, prices), std::invalid_argument);
}

// A full fat-tree built by the builder costs what the closed form says, so
// its ratios against the reference are 1 (with free node-internal links).
TEST(ReferenceFatTree, AFullFatTreeIsItsOwnReference) {
  auto prices = default_network_prices();
  prices.copper_link_usd = 0.0;
  MeasureOptions options;
  options.reference_fat_tree_radix = 8;
  const auto t = build_topology(fat_tree(32, 4, 8, 3));
  const auto m = measure_topology(*t, prices, options);
  EXPECT_EQ(m.fat_tree.levels, 3u);
  EXPECT_DOUBLE_EQ(m.cost_usd, m.fat_tree.cost_usd);
  EXPECT_NEAR(m.cost_per_injection_vs_fat_tree, 1.0, 1e-12);
  EXPECT_NEAR(m.cost_per_bisection_vs_fat_tree, 1.0, 1e-12);
}

// -------------------------------------------------------------------- metrics

TEST(Metrics, FieldsAreConsistent) {
  const auto prices = default_network_prices();
  const auto t = build_topology(fat_tree(16, 8, 16, 3, 3, 1, 2));
  const auto m = measure_topology(*t, prices);
  EXPECT_EQ(m.name, "fat-tree");
  EXPECT_EQ(m.kind, "fat-tree");
  EXPECT_EQ(m.chips, 128u);
  EXPECT_EQ(m.live_chips, 128u);
  EXPECT_EQ(m.nodes, 16u);
  EXPECT_EQ(m.links, t->links().size());
  EXPECT_EQ(m.failed_links, 0u);
  EXPECT_TRUE(m.connected);
  EXPECT_DOUBLE_EQ(m.injection_bandwidth_per_chip_Bps, 100 * kGB);  // 2 NICs of 50 GB/s
  EXPECT_DOUBLE_EQ(m.injection_bandwidth_Bps, 128 * 100 * kGB);
  EXPECT_DOUBLE_EQ(m.bisection_bandwidth_Bps, t->bisection_bandwidth().value);
  // Rings do not feel the 3:1 taper; all-to-all does.
  EXPECT_DOUBLE_EQ(m.allreduce_bandwidth_Bps, 100 * kGB);
  EXPECT_NEAR(m.alltoall_bandwidth_Bps, 4.0 * 127 / (128.0 * 128) * m.bisection_bandwidth_Bps, 1e-3);
  EXPECT_LT(m.alltoall_bandwidth_Bps, m.injection_bandwidth_per_chip_Bps);
  EXPECT_DOUBLE_EQ(m.cost_usd, network_cost_usd(t->inventory(), prices));
  EXPECT_DOUBLE_EQ(m.cost_per_injection_Bps, m.cost_usd / m.injection_bandwidth_Bps);
  EXPECT_DOUBLE_EQ(m.cost_per_bisection_Bps, m.cost_usd / m.bisection_bandwidth_Bps);
  EXPECT_DOUBLE_EQ(m.fat_tree.port_bandwidth_Bps, 50 * kGB);
  EXPECT_EQ(m.fat_tree.endpoint_ports, 256u);
  EXPECT_NEAR(m.cost_per_injection_vs_fat_tree,
              (m.cost_usd / m.injection_bandwidth_Bps) / (m.fat_tree.cost_usd / m.fat_tree.injection_bandwidth_Bps), 1e-12);
  EXPECT_NEAR(m.cost_per_bisection_vs_fat_tree,
              (m.cost_usd / m.bisection_bandwidth_Bps) / (m.fat_tree.cost_usd / (m.chips * 100 * kGB / 2)), 1e-12);
  // Tapered: cheaper than non-blocking, dearer per unit of bisection.
  EXPECT_LT(m.cost_per_injection_vs_fat_tree, 1.0);
  EXPECT_GT(m.cost_per_bisection_vs_fat_tree, 1.0);
  EXPECT_GE(m.measure_time_s, 0.0);
}

TEST(Metrics, NonBlockingAllToAllRunsAtInjection) {
  const auto m = measure_topology(*build_topology(fat_tree(32, 4, 8, 3)), default_network_prices());
  EXPECT_DOUBLE_EQ(m.alltoall_bandwidth_Bps, m.injection_bandwidth_per_chip_Bps);
  EXPECT_DOUBLE_EQ(m.allreduce_bandwidth_Bps, m.injection_bandwidth_per_chip_Bps);
}

TEST(Metrics, RailXIsCheapPerInjectionAgainstTheFatTree) {
  // 4 rails of 9 circuits per row: 72 OCS ports, one OCS of 72 ports each.
  const auto t = build_topology(railx(9, 9, 8, 1, RailMode::AllToAll, 72));
  const auto m = measure_topology(*t, default_network_prices());
  EXPECT_EQ(m.inter_node_diameter_hops, 2);
  EXPECT_DOUBLE_EQ(m.injection_bandwidth_per_chip_Bps, 200 * kGB);  // 1 X + 1 Y port of 100 GB/s
  EXPECT_DOUBLE_EQ(m.allreduce_bandwidth_Bps, 200 * kGB);
  EXPECT_LT(m.cost_per_injection_vs_fat_tree, 0.10);
  EXPECT_LT(m.cost_per_bisection_vs_fat_tree, 0.50);
  EXPECT_EQ(m.inventory.electrical_switch_ports, 0u);
}

// Even grids (K_n of even n: cycles and a perfect matching) patch every port as
// odd ones do: 4x4, 2x8 and 8x8 used to report 0 B/s all-reduce and all-to-all
// (a chip whose X and Y matching ports both stayed dark) and 87.5 GB/s
// injection where each chip has 200.
TEST(Metrics, EvenRailXGridsUseEveryPort) {
  for (const auto& [nx, ny] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{4, 4}, {2, 8}, {8, 8}, {5, 5}}) {
    const auto m = measure_topology(*build_topology(railx(nx, ny, 8, 1)), default_network_prices());
    EXPECT_TRUE(m.connected) << nx << "x" << ny;
    EXPECT_DOUBLE_EQ(m.injection_bandwidth_per_chip_Bps, 200 * kGB) << nx << "x" << ny;
    EXPECT_DOUBLE_EQ(m.injection_bandwidth_Bps, 200 * kGB * nx * ny * 8) << nx << "x" << ny;
    EXPECT_DOUBLE_EQ(m.allreduce_bandwidth_Bps, 200 * kGB) << nx << "x" << ny;
    EXPECT_GT(m.alltoall_bandwidth_Bps, 0.0) << nx << "x" << ny;
    EXPECT_LE(m.alltoall_bandwidth_Bps, m.allreduce_bandwidth_Bps) << nx << "x" << ny;
  }
}

// ------------------------------------------------------------------- failures

TEST(Failures, AFailedNicSlowsTheRingAndShrinksInjection) {
  auto config = fat_tree(8, 4, 16, 2, 1, 1, 2);  // NIC port p = chip * 2 + nic on leaf p / 8
  const auto healthy = measure_topology(*build_topology(config), default_network_prices());
  config.failures.links.emplace_back("chip5", "leaf1");  // one of its two parallel NIC links
  const auto t = build_topology(config);
  const auto failed = measure_topology(*t, default_network_prices());
  EXPECT_EQ(failed.failed_links, 1u);
  EXPECT_EQ(failed.links, healthy.links - 1);
  EXPECT_DOUBLE_EQ(failed.allreduce_bandwidth_Bps, healthy.allreduce_bandwidth_Bps / 2);
  EXPECT_DOUBLE_EQ(failed.injection_bandwidth_Bps, healthy.injection_bandwidth_Bps - 50 * kGB);
  const auto impact = failure_impact(healthy, failed, *t);
  EXPECT_EQ(impact.failed_links, 1u);
  EXPECT_EQ(impact.chips_lost, 0u);
  EXPECT_DOUBLE_EQ(impact.injection_lost_Bps, 50 * kGB);
  EXPECT_DOUBLE_EQ(impact.allreduce_lost_Bps, healthy.allreduce_bandwidth_Bps / 2);
}

TEST(Failures, RailXRebuildsAroundAFailedNode) {
  auto config = railx(9, 9, 8, 1);
  const auto healthy = measure_topology(*build_topology(config), default_network_prices());
  config.failures.nodes = {40};
  const auto t = build_topology(config);
  const auto failed = measure_topology(*t, default_network_prices());
  EXPECT_TRUE(failed.connected);
  EXPECT_EQ(failed.live_chips, healthy.live_chips - 8);
  EXPECT_EQ(failed.inter_node_diameter_hops, 2);
  // Row 4 and column 4 close over their 8 survivors: K_8 = 3 Hamiltonian
  // cycles + 1 perfect matching, whose rail joins each matched pair twice, so
  // every survivor keeps both its ports and the ring all-reduce its pace.
  EXPECT_DOUBLE_EQ(failed.allreduce_bandwidth_Bps, healthy.allreduce_bandwidth_Bps);
  const auto impact = failure_impact(healthy, failed, *t);
  EXPECT_EQ(impact.failed_nodes, 1u);
  EXPECT_EQ(impact.chips_lost, 8u);
  // The node's 8 chips (200 GB/s each) and nothing else; RailX's own account
  // (2 ends per circuit lost) agrees.
  EXPECT_NEAR(impact.injection_lost_Bps, 8 * 200 * kGB, 1.0);
  const auto report = dynamic_cast<const RailXTopology&>(*t).failure_report();
  EXPECT_NEAR(report.injection_bandwidth_lost.value, impact.injection_lost_Bps, 1.0);
}

}  // namespace
}  // namespace eppsim
