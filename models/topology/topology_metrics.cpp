#include "models/topology/topology_metrics.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <fmt/format.h>

#include "base/rng.h"
#include "models/topology/torus.h"

namespace eppsim {
namespace {

// ------------------------------------------------------------------ graph view
//
// The live graph in two compressed adjacency arrays: links inside a node
// (intra_node, weight 0 for the inter-node distance) and the rest (weight 1).
// Parallel links collapse to one entry: hop counts do not see them.
struct HopGraph {
  std::uint32_t vertices = 0;
  std::uint32_t chips = 0;
  std::vector<std::uint32_t> inter_offsets, inter_adjacency;
  std::vector<std::uint32_t> intra_offsets, intra_adjacency;
  std::vector<std::uint8_t> live_chip;  // per chip
  std::uint64_t adjacency_entries() const { return inter_adjacency.size() + intra_adjacency.size(); }
};

HopGraph hop_graph(const Topology& topology) {
  HopGraph g;
  g.vertices = topology.vertex_count();
  g.chips = topology.chips();
  g.inter_offsets.assign(g.vertices + 1, 0);
  g.intra_offsets.assign(g.vertices + 1, 0);
  std::vector<std::uint32_t> scratch_inter, scratch_intra;
  for (VertexId v = 0; v < g.vertices; ++v) {
    scratch_inter.clear();
    scratch_intra.clear();
    for (const auto& [u, id] : topology.neighbors(v)) {
      (topology.link(id).intra_node ? scratch_intra : scratch_inter).push_back(u);
    }
    for (auto* list : {&scratch_inter, &scratch_intra}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    g.inter_adjacency.insert(g.inter_adjacency.end(), scratch_inter.begin(), scratch_inter.end());
    g.intra_adjacency.insert(g.intra_adjacency.end(), scratch_intra.begin(), scratch_intra.end());
    g.inter_offsets[v + 1] = static_cast<std::uint32_t>(g.inter_adjacency.size());
    g.intra_offsets[v + 1] = static_cast<std::uint32_t>(g.intra_adjacency.size());
  }
  g.live_chip.resize(g.chips);
  for (VertexId c = 0; c < g.chips; ++c) g.live_chip[c] = topology.chip_failed(c) ? 0 : 1;
  return g;
}

// ------------------------------------------------------------ bit-parallel BFS
//
// Up to 64 BFS at once: bit i of seen[v] says source i has reached v. One
// level costs one pass over the adjacency however many sources run, so 64
// eccentricities cost about one plain BFS per level.

template <typename F>
inline void for_each_bit(std::uint64_t mask, F&& f) {
  while (mask != 0) {
    f(static_cast<unsigned>(std::countr_zero(mask)));
    mask &= mask - 1;
  }
}

// The chips reached at this level (the deepest so far): they replace the
// periphery found at earlier levels.
void record_periphery(const HopGraph& g, const std::vector<std::uint64_t>& reached, std::vector<VertexId>* farthest) {
  farthest->clear();
  for (std::uint32_t c = 0; c < g.chips; ++c) {
    if (reached[c] != 0) farthest->push_back(c);
  }
}

// Sources (bits of `all`) that never reached some live chip get eccentricity -1.
template <typename Ecc>
void mark_unreached_sources(const HopGraph& g, const std::vector<std::uint64_t>& seen, std::uint64_t all, Ecc& ecc) {
  std::uint64_t missing = 0;
  for (std::uint32_t c = 0; c < g.chips; ++c) {
    if (g.live_chip[c]) missing |= all & ~seen[c];
  }
  for_each_bit(missing, [&](unsigned bit) { ecc[bit] = -1; });
}

// The bit-parallel BFS state of up to 64 sources: bit i of a vertex's word is
// source i; each source is seen and on the frontier at the start.
struct BatchBfs {
  BatchBfs(const HopGraph& g, const std::vector<VertexId>& sources)
      : all(sources.size() == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << sources.size()) - 1)),
        seen(g.vertices, 0),
        frontier(g.vertices, 0),
        next(g.vertices, 0) {
    for (std::size_t i = 0; i < sources.size(); ++i) {
      seen[sources[i]] |= std::uint64_t{1} << i;
      frontier[sources[i]] |= std::uint64_t{1} << i;
    }
  }
  std::uint64_t all;
  std::vector<std::uint64_t> seen, frontier, next;
};

// Chip-to-chip hops over every link. Returns the eccentricity of each source
// (-1 when a live chip stays unreached); `farthest` (when given) receives the
// chips first reached at the batch's last level, the periphery.
std::vector<std::int64_t> batch_chip_eccentricity(const HopGraph& g, const std::vector<VertexId>& sources,
                                                  std::vector<VertexId>* farthest) {
  assert(sources.size() <= 64 && "batch_chip_eccentricity: at most 64 sources per batch");
  BatchBfs bfs(g, sources);
  const std::uint64_t all = bfs.all;
  auto& seen = bfs.seen;
  auto& frontier = bfs.frontier;
  auto& next = bfs.next;
  std::vector<std::int64_t> ecc(sources.size(), 0);
  for (std::int64_t level = 1;; ++level) {
    bool any = false;
    std::uint64_t reached_chips = 0;
    for (std::uint32_t v = 0; v < g.vertices; ++v) {
      next[v] = 0;
      if (seen[v] == all) continue;
      if (v < g.chips && !g.live_chip[v]) continue;
      std::uint64_t acc = 0;
      for (auto i = g.inter_offsets[v]; i < g.inter_offsets[v + 1]; ++i) acc |= frontier[g.inter_adjacency[i]];
      for (auto i = g.intra_offsets[v]; i < g.intra_offsets[v + 1]; ++i) acc |= frontier[g.intra_adjacency[i]];
      acc &= ~seen[v];
      if (acc == 0) continue;
      next[v] = acc;
      any = true;
      if (v < g.chips) reached_chips |= acc;
    }
    if (!any) break;
    for (std::uint32_t v = 0; v < g.vertices; ++v) seen[v] |= next[v];
    for_each_bit(reached_chips, [&](unsigned bit) { ecc[bit] = level; });
    if (farthest != nullptr && reached_chips != 0) record_periphery(g, next, farthest);
    frontier.swap(next);
  }
  mark_unreached_sources(g, seen, all, ecc);
  return ecc;
}

// Spreads the bits of `fresh` over links inside nodes (weight 0) until nothing
// changes; marks what it reaches in `seen` and `fresh`.
void intra_closure(const HopGraph& g, std::vector<std::uint64_t>& seen, std::vector<std::uint64_t>& fresh,
                   std::uint64_t all) {
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t v = 0; v < g.vertices; ++v) {
      const auto begin = g.intra_offsets[v], end = g.intra_offsets[v + 1];
      if (begin == end || seen[v] == all) continue;
      if (v < g.chips && !g.live_chip[v]) continue;
      std::uint64_t acc = 0;
      for (auto i = begin; i < end; ++i) acc |= fresh[g.intra_adjacency[i]];
      acc &= ~seen[v];
      if (acc == 0) continue;
      seen[v] |= acc;
      fresh[v] |= acc;
      changed = true;
    }
  }
}

// Inter-node hops: a 0-1 BFS where links inside a node cost nothing.
std::vector<std::int64_t> batch_inter_node_eccentricity(const HopGraph& g, const std::vector<VertexId>& sources,
                                                        std::vector<VertexId>* farthest) {
  assert(sources.size() <= 64 && "batch_inter_node_eccentricity: at most 64 sources per batch");
  BatchBfs bfs(g, sources);
  const std::uint64_t all = bfs.all;
  auto& seen = bfs.seen;
  auto& frontier = bfs.frontier;
  auto& next = bfs.next;
  intra_closure(g, seen, frontier, all);
  std::vector<std::int64_t> ecc(sources.size(), 0);
  for (std::int64_t level = 1;; ++level) {
    bool any = false;
    for (std::uint32_t v = 0; v < g.vertices; ++v) {
      next[v] = 0;
      if (seen[v] == all) continue;
      if (v < g.chips && !g.live_chip[v]) continue;
      std::uint64_t acc = 0;
      for (auto i = g.inter_offsets[v]; i < g.inter_offsets[v + 1]; ++i) acc |= frontier[g.inter_adjacency[i]];
      acc &= ~seen[v];
      if (acc == 0) continue;
      next[v] = acc;
      any = true;
    }
    if (!any) break;
    for (std::uint32_t v = 0; v < g.vertices; ++v) seen[v] |= next[v];
    intra_closure(g, seen, next, all);
    std::uint64_t reached_chips = 0;
    for (std::uint32_t c = 0; c < g.chips; ++c) reached_chips |= next[c];
    for_each_bit(reached_chips, [&](unsigned bit) { ecc[bit] = level; });
    if (farthest != nullptr && reached_chips != 0) record_periphery(g, next, farthest);
    frontier.swap(next);
  }
  mark_unreached_sources(g, seen, all, ecc);
  return ecc;
}

// The BFS sources of a sampled diameter: every live chip of the first, middle
// and last live node, then of seeded draws, until `sample_nodes` nodes and
// `sample_min_sources` chips (or every node) are in.
std::vector<VertexId> sampled_sources(const Topology& topology, const MeasureOptions& options) {
  std::vector<std::uint32_t> live_nodes;
  for (std::uint32_t n = 0; n < topology.nodes(); ++n) {
    if (!topology.node_failed(n)) live_nodes.push_back(n);
  }
  std::vector<VertexId> sources;
  if (live_nodes.empty()) return sources;
  std::vector<std::uint8_t> taken(live_nodes.size(), 0);
  std::size_t taken_count = 0;
  const auto take = [&](std::size_t index) {
    if (taken[index]) return;
    taken[index] = 1;
    ++taken_count;
    const std::uint32_t node = live_nodes[index];
    for (std::uint32_t local = 0; local < topology.chips_per_node(); ++local) {
      sources.push_back(node * topology.chips_per_node() + local);
    }
  };
  take(0);
  take(live_nodes.size() / 2);
  take(live_nodes.size() - 1);
  Rng rng(options.sample_seed);
  while (taken_count < live_nodes.size() &&
         (taken_count < options.sample_nodes || sources.size() < options.sample_min_sources)) {
    take(static_cast<std::size_t>(rng.below(live_nodes.size())));
  }
  std::sort(sources.begin(), sources.end());
  return sources;
}

Eccentricities eccentricities_on(const HopGraph& g, const std::vector<VertexId>& sources) {
  Eccentricities out;
  out.chip_hops.reserve(sources.size());
  out.inter_node_hops.reserve(sources.size());
  for (std::size_t begin = 0; begin < sources.size(); begin += 64) {
    const std::vector<VertexId> batch(sources.begin() + static_cast<std::ptrdiff_t>(begin),
                                      sources.begin() + static_cast<std::ptrdiff_t>(std::min(sources.size(), begin + 64)));
    const auto chip = batch_chip_eccentricity(g, batch, nullptr);
    const auto inter = batch_inter_node_eccentricity(g, batch, nullptr);
    out.chip_hops.insert(out.chip_hops.end(), chip.begin(), chip.end());
    out.inter_node_hops.insert(out.inter_node_hops.end(), inter.begin(), inter.end());
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------- public API

Eccentricities chip_eccentricities(const Topology& topology, const std::vector<VertexId>& sources) {
  for (auto s : sources) {
    if (s >= topology.chips()) throw std::invalid_argument(fmt::format("chip_eccentricities: {} is not a chip", s));
  }
  return eccentricities_on(hop_graph(topology), sources);
}

namespace {

// Up to 64 chips spread evenly over `chips` (sorted, deduplicated).
std::vector<VertexId> spread(std::vector<VertexId> chips) {
  std::sort(chips.begin(), chips.end());
  chips.erase(std::unique(chips.begin(), chips.end()), chips.end());
  if (chips.size() <= 64) return chips;
  std::vector<VertexId> out;
  for (std::size_t i = 0; i < 64; ++i) out.push_back(chips[i * chips.size() / 64]);
  return out;
}

using BatchFn = std::vector<std::int64_t> (*)(const HopGraph&, const std::vector<VertexId>&, std::vector<VertexId>*);

// Largest eccentricity over `sources` (64 per pass), -1 when disconnected,
// then a second sweep from the periphery the first one found (the chips at
// the largest distance): the double-sweep lower bound, which reaches the
// diameter whenever a farthest chip of a sampled source is an endpoint of a
// diametral pair.
std::int64_t sweep(const HopGraph& g, const std::vector<VertexId>& sources, BatchFn batch, bool second_sweep,
                   std::uint64_t* bfs_sources) {
  std::int64_t diameter = 0;
  std::vector<VertexId> periphery, found;
  for (std::size_t begin = 0; begin < sources.size(); begin += 64) {
    const std::vector<VertexId> chunk(sources.begin() + static_cast<std::ptrdiff_t>(begin),
                                      sources.begin() + static_cast<std::ptrdiff_t>(std::min(sources.size(), begin + 64)));
    found.clear();
    const auto ecc = batch(g, chunk, second_sweep ? &found : nullptr);
    *bfs_sources += chunk.size();
    std::int64_t batch_max = 0;
    for (auto e : ecc) {
      if (e < 0) return -1;
      batch_max = std::max(batch_max, e);
    }
    if (batch_max > diameter) periphery.clear();
    if (batch_max >= diameter) periphery.insert(periphery.end(), found.begin(), found.end());
    diameter = std::max(diameter, batch_max);
  }
  if (second_sweep && !periphery.empty()) {
    const auto ecc = batch(g, spread(std::move(periphery)), nullptr);
    for (auto e : ecc) diameter = e < 0 ? -1 : std::max(diameter, e);
  }
  return diameter;
}

}  // namespace

Diameters measure_diameters(const Topology& topology, const MeasureOptions& options) {
  const HopGraph g = hop_graph(topology);
  std::uint64_t live = 0;
  for (auto alive : g.live_chip) live += alive;
  const double exact_work = std::ceil(static_cast<double>(live) / 64.0) * static_cast<double>(g.adjacency_entries());
  Diameters d;
  std::vector<VertexId> sources;
  d.exact = exact_work <= options.exact_diameter_budget;
  if (d.exact) {
    for (VertexId c = 0; c < g.chips; ++c) {
      if (g.live_chip[c]) sources.push_back(c);
    }
  } else {
    sources = sampled_sources(topology, options);
  }
  d.sources = sources.size();
  std::uint64_t bfs = 0;
  d.chip_hops = sweep(g, sources, batch_chip_eccentricity, !d.exact, &bfs);
  d.inter_node_hops = sweep(g, sources, batch_inter_node_eccentricity, !d.exact, &bfs);
  return d;
}

ReferenceFatTree reference_fat_tree(std::uint64_t chips, double injection_per_chip_Bps, double port_bandwidth_Bps,
                                    std::uint32_t radix, const NetworkPrices& prices) {
  if (radix < 4 || radix % 2 != 0) throw std::invalid_argument(fmt::format("reference_fat_tree: radix must be even and >= 4, got {}", radix));
  ReferenceFatTree ft;
  ft.radix = radix;
  ft.port_bandwidth_Bps = port_bandwidth_Bps > 0.0 ? port_bandwidth_Bps : injection_per_chip_Bps;
  const double ports_per_chip =
      ft.port_bandwidth_Bps > 0.0 ? std::ceil(injection_per_chip_Bps / ft.port_bandwidth_Bps * (1.0 - 1e-12)) : 0.0;
  ft.endpoint_ports = chips * static_cast<std::uint64_t>(std::max(0.0, ports_per_chip));
  // Capacity of an L-level non-blocking folded Clos of k-port switches: 2 (k/2)^L.
  ft.levels = 1;
  for (double capacity = radix; capacity < static_cast<double>(ft.endpoint_ports); capacity *= radix / 2.0) ++ft.levels;
  ft.switch_ports = ft.endpoint_ports * (2 * ft.levels - 1);
  ft.optical_links = ft.endpoint_ports * ft.levels;
  NetworkInventory inventory;
  inventory.optical_links = ft.optical_links;
  inventory.electrical_switch_ports = ft.switch_ports;
  ft.cost_usd = network_cost_usd(inventory, prices);
  ft.injection_bandwidth_Bps = static_cast<double>(chips) * injection_per_chip_Bps;
  ft.bisection_bandwidth_Bps = ft.injection_bandwidth_Bps / 2.0;
  return ft;
}

double max_flow_Bps(const Topology& topology, const std::vector<bool>& in_a, const std::vector<bool>& in_b) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, std::int64_t,
                      boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const std::uint32_t n = topology.vertex_count();
  if (in_a.size() != topology.chips() || in_b.size() != topology.chips())
    throw std::invalid_argument("max_flow_Bps: in_a and in_b need one entry per chip");
  Graph graph(n + 2);
  const auto source = n, sink = n + 1;
  auto capacity = boost::get(boost::edge_capacity, graph);
  auto reverse = boost::get(boost::edge_reverse, graph);
  // Capacities in whole bytes per second: exact integer arithmetic.
  std::int64_t total = 1;
  const auto add_pair = [&](std::uint32_t a, std::uint32_t b, std::int64_t ab, std::int64_t ba) {
    const auto e = boost::add_edge(a, b, graph).first;
    const auto r = boost::add_edge(b, a, graph).first;
    capacity[e] = ab;
    capacity[r] = ba;
    reverse[e] = r;
    reverse[r] = e;
  };
  for (const auto& link : topology.links()) {
    if (link.failed) continue;
    const auto bw = static_cast<std::int64_t>(std::llround(link.bandwidth.value));
    total += bw;
    // A full-duplex link as one undirected edge: a single commodity never
    // gains from sending both ways over one link.
    add_pair(link.a, link.b, bw, bw);
  }
  for (VertexId c = 0; c < topology.chips(); ++c) {
    if (topology.chip_failed(c)) continue;
    if (in_a[c] && in_b[c]) throw std::invalid_argument(fmt::format("max_flow_Bps: chip {} is on both sides", c));
    if (in_a[c]) add_pair(source, c, total, 0);
    if (in_b[c]) add_pair(c, sink, total, 0);
  }
  return static_cast<double>(boost::push_relabel_max_flow(graph, source, sink));
}

TopologyMetrics measure_topology(const Topology& topology, const NetworkPrices& prices, const MeasureOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  TopologyMetrics m;
  m.name = topology.name();
  m.kind = topology.kind();
  m.chips = topology.chips();
  m.nodes = topology.nodes();
  m.vertices = topology.vertex_count();
  for (const auto& link : topology.links()) (link.failed ? m.failed_links : m.links) += 1;
  for (VertexId c = 0; c < topology.chips(); ++c) m.live_chips += topology.chip_failed(c) ? 0 : 1;

  const auto diameters = measure_diameters(topology, options);
  m.diameter_hops = diameters.chip_hops;
  m.inter_node_diameter_hops = diameters.inter_node_hops;
  m.diameter_exact = diameters.exact;
  m.diameter_sources = diameters.sources;
  m.connected = diameters.chip_hops >= 0;

  // Injection: the topology's per-chip figure (its NIC or rail links), over
  // the live chips.
  m.injection_bandwidth_per_chip_Bps = topology.injection_bandwidth_per_chip().value;
  m.injection_bandwidth_Bps = m.injection_bandwidth_per_chip_Bps * static_cast<double>(m.live_chips);
  m.bisection_bandwidth_Bps = topology.bisection_bandwidth().value;

  // Per live chip, the bandwidth of its live network links: those that leave
  // its node (NIC, rail or torus links), and for a torus every torus link (a
  // torus node is a piece of the torus, not a fabric of its own).
  const bool torus = dynamic_cast<const TorusTopology*>(&topology) != nullptr;
  std::vector<double> ports(topology.chips(), 0.0);
  double widest_port = 0.0;
  for (const auto& link : topology.links()) {
    if (link.intra_node && !torus) continue;
    for (const VertexId end : {link.a, link.b}) {
      if (end >= topology.chips()) continue;
      widest_port = std::max(widest_port, link.bandwidth.value);
      if (!link.failed) ports[end] += link.bandwidth.value;
    }
  }
  double slowest_chip = m.live_chips > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  for (VertexId c = 0; c < topology.chips(); ++c) {
    if (!topology.chip_failed(c)) slowest_chip = std::min(slowest_chip, ports[c]);
  }

  // All-reduce (nccl-tests busBw = algBw * 2(n-1)/n). A ring all-reduce over n
  // chips sends 2(n-1)/n S bytes from every chip, all chips at once, so with
  // per-chip ring bandwidth B it takes 2(n-1)/n S / B and busBw = B. Every
  // topology here embeds rings that use each network port of every chip once
  // per direction with no two rings on one link:
  //   fat-tree, rail-optimized, simple: chips in index order under each leaf;
  //     a ring crosses each leaf's uplinks once, so neither the upper levels
  //     nor their oversubscription bind and B = the chip's NIC bandwidth;
  //     with several NICs per chip, one ring per NIC (rail) in parallel.
  //   torus: a product of k cycles decomposes into k edge-disjoint Hamiltonian
  //     cycles (railx.md 3.4), each run both ways: 2k rings over all 2k links.
  //   RailX: every rail is a Hamiltonian ring of its row or column, by
  //     construction; one ring per rail port in parallel (X and Y rails on two
  //     halves of the data, as a 2D all-reduce) gives the rails' aggregate.
  // Every chip handles the same bytes, so the ring runs at the pace of its
  // slowest member: B = the smallest per-chip network bandwidth (after
  // failures, the chip that kept the fewest ports sets B for all).
  m.allreduce_bandwidth_Bps = slowest_chip;

  // Uniform all-to-all: each chip sends at rate B spread evenly over the n-1
  // others. Across a bisection (n/2 chips each side) B * (n/2) * (n/2)/(n-1)
  // crosses each way, which the bisection must carry:
  //   B <= 4 (n-1) / n^2 * bisection,
  // and no chip sends faster than its ports. (For RailX this matches the
  // two-hop dimension-order routing, which loads every row link once: half of
  // the injection when bisection = injection / 8.)
  const double n = static_cast<double>(m.live_chips);
  const double bisection_bound = n > 1 ? 4.0 * (n - 1.0) / (n * n) * m.bisection_bandwidth_Bps : 0.0;
  m.alltoall_bandwidth_Bps = std::min(slowest_chip, bisection_bound);

  m.inventory = topology.inventory();
  m.cost_usd = network_cost_usd(m.inventory, prices);
  const auto per = [&](double bandwidth) { return bandwidth > 0.0 ? m.cost_usd / bandwidth : 0.0; };
  m.cost_per_injection_Bps = per(m.injection_bandwidth_Bps);
  m.cost_per_bisection_Bps = per(m.bisection_bandwidth_Bps);
  m.cost_per_allreduce_Bps = per(m.allreduce_bandwidth_Bps * n);
  m.cost_per_alltoall_Bps = per(m.alltoall_bandwidth_Bps * n);

  m.fat_tree = reference_fat_tree(
      m.chips, m.injection_bandwidth_per_chip_Bps,
      options.reference_port_bandwidth_Bps > 0.0 ? options.reference_port_bandwidth_Bps : widest_port,
      options.reference_fat_tree_radix, prices);
  const auto ratio = [](double ours, double theirs) { return theirs > 0.0 ? ours / theirs : 0.0; };
  const double ft_per_injection = ratio(m.fat_tree.cost_usd, m.fat_tree.injection_bandwidth_Bps);
  const double ft_per_bisection = ratio(m.fat_tree.cost_usd, m.fat_tree.bisection_bandwidth_Bps);
  m.cost_per_injection_vs_fat_tree = ratio(m.cost_per_injection_Bps, ft_per_injection);
  m.cost_per_bisection_vs_fat_tree = ratio(m.cost_per_bisection_Bps, ft_per_bisection);

  m.measure_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

FailureImpact failure_impact(const TopologyMetrics& healthy, const TopologyMetrics& failed, const Topology& failed_topology) {
  FailureImpact impact;
  for (std::uint32_t n = 0; n < failed_topology.nodes(); ++n) impact.failed_nodes += failed_topology.node_failed(n) ? 1 : 0;
  impact.failed_links = failed.failed_links;
  impact.chips_lost = healthy.live_chips - std::min(healthy.live_chips, failed.live_chips);
  impact.injection_lost_Bps = healthy.injection_bandwidth_Bps - failed.injection_bandwidth_Bps;
  impact.bisection_lost_Bps = healthy.bisection_bandwidth_Bps - failed.bisection_bandwidth_Bps;
  impact.allreduce_lost_Bps = healthy.allreduce_bandwidth_Bps - failed.allreduce_bandwidth_Bps;
  impact.alltoall_lost_Bps = healthy.alltoall_bandwidth_Bps - failed.alltoall_bandwidth_Bps;
  const auto change = [](std::int64_t before, std::int64_t after) { return before < 0 || after < 0 ? 0 : after - before; };
  impact.diameter_change_hops = change(healthy.diameter_hops, failed.diameter_hops);
  impact.inter_node_diameter_change_hops = change(healthy.inter_node_diameter_hops, failed.inter_node_diameter_hops);
  if (!failed.connected) impact.notes.push_back("the surviving chips are no longer connected");
  return impact;
}

}  // namespace eppsim
