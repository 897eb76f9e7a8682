#pragma once
// A cluster network as a graph: chips, switches and full-duplex links, with
// routing by rule (never an all-pairs table) and the inventory that prices it.
//
// Vertices [0, chips()) are the chips, node-major (chip = node * chips_per_node
// + local index); switches follow. Every link is full duplex; its bandwidth is
// per direction. Derived classes (fat_tree.h, rail_optimized.h, torus.h,
// railx.h, simple_cluster.h) build the graph and route on it.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "models/cluster_spec.h"
#include "base/mix64.h"
#include "base/units.h"

namespace eppsim {

using VertexId = std::uint32_t;
using LinkId = std::uint32_t;

enum class VertexKind : std::uint8_t { Chip, NodeSwitch, LeafSwitch, SpineSwitch, CoreSwitch };

// What a link costs: on-board/copper, a pluggable optical link (a transceiver at
// each end and a fibre), or an optical circuit through an OCS (the same plus one
// OCS port at each end).
enum class LinkMedium : std::uint8_t { Electrical, Optical, OpticalCircuit };

struct Link {
  VertexId a = 0;
  VertexId b = 0;
  BytesPerSecond bandwidth;  // per direction
  Seconds latency;
  LinkMedium medium = LinkMedium::Electrical;
  bool intra_node = false;   // both ends inside one node (chips or the node's own switch)
  std::int32_t rail = -1;    // rail index (rail-optimized, RailX), -1 when none
  bool failed = false;
};

// Parts to price (models/network_cost.h).
struct NetworkInventory {
  std::uint64_t electrical_links = 0;
  std::uint64_t optical_links = 0;          // pluggable optics: 2 transceivers + 1 fibre each
  std::uint64_t optical_circuits = 0;       // through an OCS: 2 transceivers + 1 fibre + 2 OCS ports each
  std::uint64_t electrical_switch_ports = 0;  // ports of the packet switches built (used or not)
  std::uint64_t optical_switch_ports = 0;     // OCS ports installed
  std::uint64_t electrical_switches = 0;
  std::uint64_t optical_switches = 0;
};

// The ECMP hash of channel `channel`'s flow from chip src to chip dst: the
// `flow` argument of Topology::route for the flows of a collective's channel
// (point-to-point messages use channel 0). The routed network and the flow
// engine route by it, so both put a flow on the same path.
std::uint64_t channel_flow_hash(VertexId src, VertexId dst, std::uint32_t channel);

struct FailureConfig;
class ShortestPathRouter;

class Topology {
 public:
  virtual ~Topology() = default;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const std::string& name() const { return name_; }
  // "simple", "fat-tree", "rail-optimized", "rail-only", "torus", "railx-ring", "railx-all-to-all"
  virtual std::string kind() const = 0;

  std::uint32_t chips() const { return nodes_ * chips_per_node_; }
  std::uint32_t nodes() const { return nodes_; }
  std::uint32_t chips_per_node() const { return chips_per_node_; }
  std::uint32_t node_of(VertexId chip) const { return chip / chips_per_node_; }
  std::uint32_t vertex_count() const { return static_cast<std::uint32_t>(kinds_.size()); }
  VertexKind vertex_kind(VertexId v) const { return kinds_[v]; }
  // "chip12", "nodeswitch3", "leaf5", "spine2", "core0": stable names for
  // reports and for Failures.links.
  virtual std::string vertex_name(VertexId v) const;
  // The vertex a name from vertex_name() denotes; throws InputError naming it
  // when no such vertex exists.
  VertexId vertex_by_name(std::string_view name) const;
  // How many vertices of `kind` were built (each kind's vertices are contiguous).
  std::uint32_t vertices_of_kind(VertexKind kind) const { return kind_count_[static_cast<int>(kind)]; }
  VertexId first_vertex_of_kind(VertexKind kind) const { return kind_first_[static_cast<int>(kind)]; }

  const std::vector<Link>& links() const { return links_; }
  const Link& link(LinkId id) const { return links_[id]; }
  // Live (non-failed) links at v: (neighbour, link).
  std::span<const std::pair<VertexId, LinkId>> neighbors(VertexId v) const {
    return {adjacency_.data() + offsets_[v], adjacency_.data() + offsets_[v + 1]};
  }
  bool chip_failed(VertexId chip) const { return failed_nodes_.size() > node_of(chip) && failed_nodes_[node_of(chip)]; }
  bool node_failed(std::uint32_t node) const { return failed_nodes_.size() > node && failed_nodes_[node]; }
  // A live link joining a and b (the first one, when parallel links join them).
  std::optional<LinkId> find_live_link(VertexId a, VertexId b) const;

  // Marks failed nodes (every link of their chips and of their node switch) and
  // failed links (by vertex names; one live link per listed pair, so listing a
  // pair twice fails two parallel links), then rebuilds the live adjacency.
  // Throws InputError for an unknown node or vertex name, or two vertices no
  // link joins. build_topology calls it; topologies that rebuild around failed
  // nodes (RailX) also read the failed nodes from their config.
  void apply_failures(const FailureConfig& failures);

  // The links one flow from chip `src` to chip `dst` traverses, in order, over
  // live links. `flow` picks among equal-cost paths (ECMP hash). Throws
  // std::runtime_error naming both chips when no route exists.
  virtual void route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const = 0;

  // Bandwidth per direction each chip can push into the inter-node network
  // (sum of its live NIC / rail links).
  virtual BytesPerSecond injection_bandwidth_per_chip() const = 0;
  // Bisection bandwidth per direction from the construction's closed form.
  virtual BytesPerSecond bisection_bandwidth() const = 0;
  virtual NetworkInventory inventory() const;

  // Generic ECMP shortest path over the live links (a BFS; O(vertices + links)
  // per call). Rule-based routers fall back to it when failures break their
  // rule. Returns false when dst cannot be reached.
  bool route_shortest_path(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const;

 protected:
  // What every rule-based router does when its rule fails: the shortest path
  // over the live links, or std::runtime_error naming both chips.
  void route_over_live_links(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const;

  Topology(std::string name, std::uint32_t nodes, std::uint32_t chips_per_node);
  VertexId add_vertex(VertexKind kind);
  LinkId add_link(const Link& link);
  void mark_node_failed(std::uint32_t node);
  void mark_link_failed(LinkId id) { links_[id].failed = true; }
  // Builds the adjacency of live links; call after the last add_link and after
  // marking failures.
  void finalize();
  // Average over live chips of the bandwidth of their live links that leave
  // the node (computed by finalize()).
  BytesPerSecond live_injection_per_chip() const { return live_injection_per_chip_; }
  // Throws std::runtime_error unless src and dst are chips of live nodes.
  void check_route_endpoints(VertexId src, VertexId dst) const;
  // Vertex names: "<prefix><index within its kind>".
  static const char* kind_prefix(VertexKind kind);
  std::vector<Link>& mutable_links() { return links_; }

 private:
  friend class NodeFabric;
  friend class ClosFabric;
  std::string name_;
  std::uint32_t nodes_;
  std::uint32_t chips_per_node_;
  std::vector<VertexKind> kinds_;
  std::vector<Link> links_;
  std::vector<std::uint32_t> offsets_;
  std::vector<std::pair<VertexId, LinkId>> adjacency_;
  std::vector<bool> failed_nodes_;
  std::array<VertexId, 5> kind_first_{};
  std::array<std::uint32_t, 5> kind_count_{};
  BytesPerSecond live_injection_per_chip_;
  mutable std::mutex router_mutex_;
  mutable std::shared_ptr<const ShortestPathRouter> router_;  // built on first use

 public:
  // Chips of failed nodes (all of the node's chips), as set by apply_failures.
  const std::vector<bool>& failed_nodes() const { return failed_nodes_; }
};

// Breadth-first search over a topology's live links (a Boost.Graph compressed
// sparse row graph, built once): hop distances and ECMP shortest paths, for
// fallbacks, diameters and for checking rule-based routes in tests.
class ShortestPathRouter {
 public:
  explicit ShortestPathRouter(const Topology& topology);
  ~ShortestPathRouter();
  ShortestPathRouter(const ShortestPathRouter&) = delete;
  ShortestPathRouter& operator=(const ShortestPathRouter&) = delete;

  static constexpr std::uint32_t kUnreachable = 0xffffffffu;
  // Hops from src to every vertex (kUnreachable where none).
  std::vector<std::uint32_t> distances(VertexId src) const;
  // One shortest path, chosen among the equal-cost ones by `flow`; false when
  // dst cannot be reached.
  bool route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const;

 private:
  struct Graph;
  std::unique_ptr<Graph> graph_;
};

// The ECMP hash of one flow between two chips.
constexpr std::uint64_t ecmp_hash(VertexId src, VertexId dst, std::uint64_t flow) {
  return mix64(flow ^ (static_cast<std::uint64_t>(src) * 0x9e3779b97f4a7c15ull) ^
               (static_cast<std::uint64_t>(dst) * 0xc2b2ae3d27d4eb4full));
}

// Configuration of each topology, with units resolved (the scenario loader
// builds these from topology.proto).
enum class NodeFabricKind { Switched, Mesh, Torus };

struct NodeFabricConfig {
  NodeFabricKind kind = NodeFabricKind::Switched;
  std::vector<std::uint32_t> dims;  // Mesh / Torus chip grid; product = chips per node
  LinkParams link;
};

struct FatTreeConfig {
  std::uint32_t radix = 0;
  std::uint32_t levels = 3;
  std::uint32_t oversubscription_down = 1;  // leaf down:up ports
  std::uint32_t oversubscription_up = 1;
  std::uint32_t nics_per_chip = 1;
  LinkParams link;
};

struct RailOptimizedConfig {
  std::uint32_t radix = 0;
  std::uint32_t scalable_unit_nodes = 0;
  std::uint32_t oversubscription_down = 1;
  std::uint32_t oversubscription_up = 1;
  bool rail_only = false;
  std::uint32_t nics_per_chip = 1;
  LinkParams link;
};

struct TorusConfig {
  std::vector<std::uint32_t> dims;           // chip grid
  std::vector<std::uint32_t> optical_block;  // empty: all links electrical
  std::uint32_t links_per_neighbor = 1;
  LinkParams link;
};

enum class RailMode { Ring, AllToAll };

struct RailXConfig {
  std::uint32_t nx = 0;
  std::uint32_t ny = 0;
  RailMode mode = RailMode::AllToAll;
  std::uint32_t ports_per_chip_x = 1;
  std::uint32_t ports_per_chip_y = 1;
  std::uint32_t rails_x = 0;  // 0: all X ports of the node (chips * ports_per_chip_x / 2 rails of 2 ports)
  std::uint32_t rails_y = 0;
  LinkParams link;
  std::uint32_t ocs_radix = 300;
};

// The simple cluster of cluster_spec.h: node switch + one NIC per chip into a
// single non-blocking switch.
struct SimpleNetworkConfig {
  LinkParams inter_node;
};

struct FailureConfig {
  std::vector<std::uint32_t> nodes;
  std::vector<std::pair<std::string, std::string>> links;  // vertex names
};

struct TopologyConfig {
  std::string name;
  std::uint32_t nodes = 0;
  std::uint32_t chips_per_node = 0;
  NodeFabricConfig node;
  std::variant<SimpleNetworkConfig, FatTreeConfig, RailOptimizedConfig, TorusConfig, RailXConfig> network;
  FailureConfig failures;
};

// Throws InputError "topology 'NAME': FIELD: RULE" (field relative to the
// scenario's Topology message, e.g. "fat_tree.radix").
[[noreturn]] void throw_topology_error(const std::string& topology_name, std::string_view field, const std::string& rule);

// Builds the topology; throws InputError naming the rule when the parameters
// cannot work (odd radix, too few ports for the chips, grid not matching the
// node count, an unknown vertex in a failed link, ...).
std::unique_ptr<Topology> build_topology(const TopologyConfig& config);

}  // namespace eppsim
