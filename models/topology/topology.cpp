#include "models/topology/topology.h"

#include <fmt/format.h>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <charconv>
#include <stdexcept>

#include "base/errors.h"
#include "models/topology/fat_tree.h"
#include "models/topology/rail_optimized.h"
#include "models/topology/railx.h"
#include "models/topology/simple_cluster.h"
#include "models/topology/torus.h"

namespace eppsim {

std::uint64_t channel_flow_hash(VertexId src, VertexId dst, std::uint32_t channel) {
  std::uint64_t x = (static_cast<std::uint64_t>(src) << 32 | dst) ^ (static_cast<std::uint64_t>(channel) * 0x9E3779B97F4A7C15ull);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// ---------------------------------------------------------------------------
// Topology

Topology::Topology(std::string name, std::uint32_t nodes, std::uint32_t chips_per_node)
    : name_(std::move(name)), nodes_(nodes), chips_per_node_(chips_per_node) {
  if (nodes == 0 || chips_per_node == 0) throw std::logic_error("Topology: nodes and chips_per_node must be > 0");
  const std::uint64_t chips = static_cast<std::uint64_t>(nodes) * chips_per_node;
  if (chips >= 0xffffffffull) throw std::logic_error("Topology: too many chips for 32-bit vertex ids");
  kinds_.assign(chips, VertexKind::Chip);
  kind_first_[static_cast<int>(VertexKind::Chip)] = 0;
  kind_count_[static_cast<int>(VertexKind::Chip)] = static_cast<std::uint32_t>(chips);
}

const char* Topology::kind_prefix(VertexKind kind) {
  switch (kind) {
    case VertexKind::Chip: return "chip";
    case VertexKind::NodeSwitch: return "nodeswitch";
    case VertexKind::LeafSwitch: return "leaf";
    case VertexKind::SpineSwitch: return "spine";
    case VertexKind::CoreSwitch: return "core";
  }
  return "vertex";
}

VertexId Topology::add_vertex(VertexKind kind) {
  const int k = static_cast<int>(kind);
  const auto id = static_cast<VertexId>(kinds_.size());
  if (kind_count_[k] == 0) {
    kind_first_[k] = id;
  } else if (kinds_.back() != kind) {
    throw std::logic_error(fmt::format("Topology::add_vertex: vertices of kind '{}' must be added contiguously",
                                       kind_prefix(kind)));
  }
  ++kind_count_[k];
  kinds_.push_back(kind);
  return id;
}

LinkId Topology::add_link(const Link& link) {
  if (link.a >= kinds_.size() || link.b >= kinds_.size() || link.a == link.b) {
    throw std::logic_error(fmt::format("Topology::add_link: bad endpoints {} - {} ({} vertices)", link.a, link.b,
                                       kinds_.size()));
  }
  if (links_.size() >= 0xffffffffull) throw std::logic_error("Topology::add_link: too many links for 32-bit ids");
  links_.push_back(link);
  return static_cast<LinkId>(links_.size() - 1);
}

std::string Topology::vertex_name(VertexId v) const {
  const VertexKind kind = kinds_.at(v);
  return fmt::format("{}{}", kind_prefix(kind), v - kind_first_[static_cast<int>(kind)]);
}

VertexId Topology::vertex_by_name(std::string_view name) const {
  for (int k = 0; k < 5; ++k) {
    const std::string_view prefix = kind_prefix(static_cast<VertexKind>(k));
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    const std::string_view digits = name.substr(prefix.size());
    std::uint64_t index = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || end != digits.data() + digits.size() || (digits.size() > 1 && digits[0] == '0')) break;
    if (index >= kind_count_[k]) {
      throw InputError(fmt::format("topology '{}': no vertex '{}' ({} has {} {} vertices, {}0..{}{})", name_, name,
                                   name_, kind_count_[k], prefix, prefix, prefix,
                                   kind_count_[k] == 0 ? 0 : kind_count_[k] - 1));
    }
    return kind_first_[k] + static_cast<VertexId>(index);
  }
  throw InputError(fmt::format(
      "topology '{}': no vertex '{}' (names are chipN, nodeswitchN, leafN, spineN, coreN)", name_, name));
}

std::optional<LinkId> Topology::find_live_link(VertexId a, VertexId b) const {
  if (a >= vertex_count() || b >= vertex_count()) return std::nullopt;
  const bool a_smaller = neighbors(a).size() <= neighbors(b).size();
  const VertexId from = a_smaller ? a : b;
  const VertexId to = a_smaller ? b : a;
  for (const auto& [n, id] : neighbors(from)) {
    if (n == to && !links_[id].failed) return id;
  }
  return std::nullopt;
}

void Topology::finalize() {
  const std::size_t n = kinds_.size();
  offsets_.assign(n + 1, 0);
  for (const auto& l : links_) {
    if (l.failed) continue;
    ++offsets_[l.a + 1];
    ++offsets_[l.b + 1];
  }
  for (std::size_t v = 0; v < n; ++v) offsets_[v + 1] += offsets_[v];
  adjacency_.assign(offsets_[n], {});
  std::vector<std::uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
  double injection = 0.0;
  for (LinkId id = 0; id < links_.size(); ++id) {
    const auto& l = links_[id];
    if (l.failed) continue;
    adjacency_[fill[l.a]++] = {l.b, id};
    adjacency_[fill[l.b]++] = {l.a, id};
    if (!l.intra_node) {
      if (l.a < chips() && !chip_failed(l.a)) injection += l.bandwidth.value;
      if (l.b < chips() && !chip_failed(l.b)) injection += l.bandwidth.value;
    }
  }
  std::uint64_t live_chips = chips();
  for (std::uint32_t node = 0; node < failed_nodes_.size(); ++node) {
    if (failed_nodes_[node]) live_chips -= chips_per_node_;
  }
  live_injection_per_chip_ = BytesPerSecond(live_chips == 0 ? 0.0 : injection / static_cast<double>(live_chips));
  std::lock_guard lock(router_mutex_);
  router_.reset();
}

void Topology::mark_node_failed(std::uint32_t node) {
  if (node >= nodes_) throw std::logic_error("Topology::mark_node_failed: node out of range");
  if (offsets_.size() != kinds_.size() + 1) finalize();
  if (failed_nodes_.size() != nodes_) failed_nodes_.assign(nodes_, false);
  failed_nodes_[node] = true;
  for (VertexId chip = node * chips_per_node_; chip < (node + 1) * chips_per_node_; ++chip) {
    for (const auto& [n, id] : neighbors(chip)) {
      links_[id].failed = true;
      if (kinds_[n] == VertexKind::NodeSwitch) {
        for (const auto& [m, sid] : neighbors(n)) {
          (void)m;
          links_[sid].failed = true;
        }
      }
    }
  }
}

void Topology::apply_failures(const FailureConfig& failures) {
  if (failures.nodes.empty() && failures.links.empty()) return;
  if (offsets_.size() != kinds_.size() + 1) finalize();
  for (const auto node : failures.nodes) {
    if (node >= nodes_) {
      throw InputError(fmt::format("topology '{}': failures.nodes: node {} does not exist ({} nodes)", name_, node,
                                   nodes_));
    }
    mark_node_failed(node);
  }
  for (const auto& [a_name, b_name] : failures.links) {
    const VertexId a = vertex_by_name(a_name);
    const VertexId b = vertex_by_name(b_name);
    // One live link per listed pair; neighbors() may still list links failed
    // above (the adjacency is rebuilt at the end), so check the flag.
    std::optional<LinkId> found;
    bool any = false;
    for (const auto& [n, id] : neighbors(a)) {
      if (n != b) continue;
      any = true;
      if (!links_[id].failed) {
        found = id;
        break;
      }
    }
    if (!any) {
      for (const auto& l : links_) {
        if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) {
          any = true;
          break;
        }
      }
    }
    if (!any) {
      throw InputError(fmt::format("topology '{}': failures.links: no link joins {} and {}", name_, a_name, b_name));
    }
    if (found) links_[*found].failed = true;
  }
  finalize();
}

NetworkInventory Topology::inventory() const {
  NetworkInventory inv;
  std::vector<std::uint32_t> degree(kinds_.size(), 0);
  for (const auto& l : links_) {
    switch (l.medium) {
      case LinkMedium::Electrical: ++inv.electrical_links; break;
      case LinkMedium::Optical: ++inv.optical_links; break;
      case LinkMedium::OpticalCircuit: ++inv.optical_circuits; break;
    }
    ++degree[l.a];
    ++degree[l.b];
  }
  for (VertexId v = 0; v < kinds_.size(); ++v) {
    const auto k = kinds_[v];
    if (k == VertexKind::LeafSwitch || k == VertexKind::SpineSwitch || k == VertexKind::CoreSwitch) {
      ++inv.electrical_switches;
      inv.electrical_switch_ports += degree[v];
    }
  }
  return inv;
}

void Topology::check_route_endpoints(VertexId src, VertexId dst) const {
  if (src >= chips() || dst >= chips()) {
    throw std::runtime_error(fmt::format("topology '{}': route from vertex {} to vertex {}: both must be chips (< {})",
                                         name_, src, dst, chips()));
  }
  for (const VertexId v : {src, dst}) {
    if (chip_failed(v)) {
      throw std::runtime_error(fmt::format("topology '{}': no route from chip{} to chip{}: chip{} is on failed node {}",
                                           name_, src, dst, v, node_of(v)));
    }
  }
}

void Topology::route_over_live_links(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const {
  if (!route_shortest_path(src, dst, flow, path)) {
    throw std::runtime_error(fmt::format("topology '{}': no route from chip{} to chip{} over the live links", name(),
                                         src, dst));
  }
}

bool Topology::route_shortest_path(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const {
  std::shared_ptr<const ShortestPathRouter> router;
  {
    std::lock_guard lock(router_mutex_);
    if (!router_) router_ = std::make_shared<const ShortestPathRouter>(*this);
    router = router_;
  }
  return router->route(src, dst, flow, path);
}

// ---------------------------------------------------------------------------
// ShortestPathRouter

struct ShortestPathRouter::Graph {
  using Csr = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, LinkId>;
  Csr g;
};

ShortestPathRouter::ShortestPathRouter(const Topology& topology) : graph_(std::make_unique<Graph>()) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  std::vector<LinkId> ids;
  edges.reserve(2 * topology.links().size());
  ids.reserve(2 * topology.links().size());
  for (LinkId id = 0; id < topology.links().size(); ++id) {
    const auto& l = topology.link(id);
    if (l.failed) continue;
    edges.emplace_back(l.a, l.b);
    ids.push_back(id);
    edges.emplace_back(l.b, l.a);
    ids.push_back(id);
  }
  graph_->g = Graph::Csr(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), ids.begin(),
                         topology.vertex_count());
}

ShortestPathRouter::~ShortestPathRouter() = default;

std::vector<std::uint32_t> ShortestPathRouter::distances(VertexId src) const {
  const auto& g = graph_->g;
  const auto n = boost::num_vertices(g);
  std::vector<std::uint32_t> dist(n, kUnreachable);
  if (src >= n) return dist;
  dist[src] = 0;
  auto dist_map = boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g));
  std::vector<boost::default_color_type> color(n, boost::white_color);
  auto color_map = boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, g));
  boost::breadth_first_search(
      g, src,
      boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist_map, boost::on_tree_edge()))).color_map(color_map));
  return dist;
}

bool ShortestPathRouter::route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const {
  path->clear();
  if (src == dst) return true;
  const auto& g = graph_->g;
  const std::vector<std::uint32_t> dist = distances(dst);  // links are full duplex: symmetric
  if (src >= dist.size() || dist[src] == kUnreachable) return false;
  VertexId v = src;
  std::uint64_t h = mix64(flow ^ (static_cast<std::uint64_t>(src) << 32 | dst));
  std::vector<std::pair<VertexId, LinkId>> next;
  while (v != dst) {
    next.clear();
    auto [e_begin, e_end] = boost::out_edges(static_cast<Graph::Csr::vertex_descriptor>(v), g);
    for (auto it = e_begin; it != e_end; ++it) {
      const auto e = *it;
      const auto t = static_cast<VertexId>(boost::target(e, g));
      if (dist[t] + 1 == dist[v]) next.emplace_back(t, g[e]);
    }
    if (next.empty()) return false;  // cannot happen on a symmetric graph
    h = mix64(h);
    const auto& [t, id] = next[h % next.size()];
    path->push_back(id);
    v = t;
  }
  return true;
}

// ---------------------------------------------------------------------------
// build_topology

void throw_topology_error(const std::string& topology_name, std::string_view field, const std::string& rule) {
  throw InputError(fmt::format("topology '{}': {}: {}", topology_name, field, rule));
}

std::unique_ptr<Topology> build_topology(const TopologyConfig& config) {
  if (config.nodes == 0) throw_topology_error(config.name, "nodes", "must be > 0, got 0");
  if (config.chips_per_node == 0) throw_topology_error(config.name, "gpus_per_node", "must be > 0, got 0");
  if (static_cast<std::uint64_t>(config.nodes) * config.chips_per_node >= (1ull << 31)) {
    throw_topology_error(config.name, "nodes",
                         fmt::format("{} nodes x {} chips is too many chips (limit 2^31)", config.nodes,
                                     config.chips_per_node));
  }
  std::unique_ptr<Topology> topology = std::visit(
      [&](const auto& network) -> std::unique_ptr<Topology> {
        using T = std::decay_t<decltype(network)>;
        if constexpr (std::is_same_v<T, SimpleNetworkConfig>) {
          return std::make_unique<SimpleClusterTopology>(config);
        } else if constexpr (std::is_same_v<T, FatTreeConfig>) {
          return std::make_unique<FatTreeTopology>(config);
        } else if constexpr (std::is_same_v<T, RailOptimizedConfig>) {
          return std::make_unique<RailOptimizedTopology>(config);
        } else if constexpr (std::is_same_v<T, TorusConfig>) {
          return std::make_unique<TorusTopology>(config);
        } else {
          return std::make_unique<RailXTopology>(config);
        }
      },
      config.network);
  topology->apply_failures(config.failures);
  return topology;
}

}  // namespace eppsim
