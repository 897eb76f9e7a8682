#pragma once
// k-ary fat-tree (folded Clos of k-port electrical switches) over every chip's
// NICs, and the Clos builder the rail-optimized topologies share.
//
// Leaf ports split down:up by the oversubscription: down = floor(k * d/(d+u)),
// up = k - down (1:1 gives k/2 each). NIC port p = chip * nics_per_chip + nic
// goes to leaf p / down, port p % down ("chipC-leafL"). Only the leaves the
// NICs need are built, and the levels above in proportion (ClosFabric below),
// so the tree stays non-blocking above the leaves at any size; 3 levels of
// radix 64 at 1:1 fit exactly 64^3/4 = 65,536 NIC ports.
//
// Vertices: chips, node switches (node_fabric.h), "leafN", "spineN"
// (2 levels: spines; 3 levels: each pod's aggregation switches, pod-major),
// "coreN". NIC and switch links are Optical.
//
// Routing: within a node over the node fabric; otherwise NIC, up to the lowest
// common level, down. ECMP: every up-going choice (NIC, up-port, parallel link)
// is picked by hashing (src, dst, flow) (ecmp_hash); failed links are skipped,
// trying the other equal-cost choices; when none is live the generic BFS
// router finds a longer path.
//
// Bisection (per direction, closed form): half of min(NIC links, leaf
// up-links) times the link bandwidth (with a single leaf: half the NIC links);
// the aggregation and core levels are built non-blocking, so the leaf level
// (the oversubscription) is the narrowest.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/topology/node_fabric.h"
#include "models/topology/topology.h"

namespace eppsim {

// Leaf (down, up) ports of a k-port leaf at down:up oversubscription; throws
// InputError (naming `field`) when a side gets no port.
std::pair<std::uint32_t, std::uint32_t> leaf_port_split(const std::string& topology_name, std::string_view field,
                                                        std::uint32_t radix, std::uint32_t oversubscription_down,
                                                        std::uint32_t oversubscription_up);

// The switch levels above a set of leaves, each leaf with `up` up-ports, of
// `radix`-port switches.
//   1 level:  a single leaf; nothing above.
//   2 levels: S = up/m spines; leaf up-port j goes to spine j / m over m
//             parallel links, m the largest divisor of `up` with leaves*m <= radix.
//   3 levels: leaves in consecutive pods (pod_sizes, each <= radix/2); each pod
//             has `up` aggregation switches, leaf up-port j to the pod's agg j;
//             each agg has radix/2 up-ports; agg a of every pod reaches the
//             core group a of (radix/2)/m cores, up-port j to core j / m over m
//             parallel links, m the largest divisor of radix/2 with pods*m <= radix.
// Several ClosFabrics may share one topology (rail-only: one per rail): add
// every fabric's spines, then every fabric's cores, then the links.
class ClosFabric {
 public:
  // `leaves` leaf vertices are first_leaf .. first_leaf + leaves - 1.
  void plan(const std::string& topology_name, std::string_view field, std::uint32_t leaves, std::uint32_t up,
            std::uint32_t radix, std::uint32_t levels, std::vector<std::uint32_t> pod_sizes);
  void add_spines(Topology& topology);
  void add_cores(Topology& topology);
  void add_links(Topology& topology, VertexId first_leaf, const LinkParams& params);

  // Appends the switch links from leaf a to leaf b (indices within this
  // fabric, a != b), skipping failed links among the equal-cost choices.
  // Returns false, leaving `path` as it was, when every choice has a failed link.
  bool route(const Topology& topology, std::uint32_t leaf_a, std::uint32_t leaf_b, std::uint64_t hash,
             std::vector<LinkId>* path) const;

  std::uint32_t levels() const { return levels_; }
  std::uint32_t leaves() const { return leaves_; }
  std::uint32_t up_ports() const { return up_; }
  std::uint32_t spines() const;
  std::uint32_t cores() const;
  std::uint32_t pods() const { return static_cast<std::uint32_t>(pod_first_.size()); }
  // Links built: leaf up-links plus aggregation up-links.
  std::uint64_t links() const;
  std::uint32_t pod_of(std::uint32_t leaf) const { return pod_of_leaf_[leaf]; }

 private:
  LinkId leaf_up_link(std::uint32_t leaf, std::uint32_t j) const { return leaf_up_base_ + leaf * up_ + j; }
  LinkId agg_up_link(std::uint32_t agg, std::uint32_t j) const { return agg_up_base_ + agg * (radix_ / 2) + j; }

  std::uint32_t leaves_ = 0;
  std::uint32_t up_ = 0;
  std::uint32_t radix_ = 0;
  std::uint32_t levels_ = 1;
  std::uint32_t parallel_ = 1;  // m: parallel links leaf-spine (2 levels) or agg-core (3 levels)
  std::vector<std::uint32_t> pod_first_;
  std::vector<std::uint32_t> pod_of_leaf_;
  VertexId first_spine_ = 0;
  VertexId first_core_ = 0;
  LinkId leaf_up_base_ = 0;
  LinkId agg_up_base_ = 0;
};

class FatTreeTopology final : public Topology {
 public:
  explicit FatTreeTopology(const TopologyConfig& config);

  std::string kind() const override { return "fat-tree"; }
  void route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const override;
  BytesPerSecond injection_bandwidth_per_chip() const override { return live_injection_per_chip(); }
  BytesPerSecond bisection_bandwidth() const override;
  NetworkInventory inventory() const override;

  const FatTreeConfig& config() const { return config_; }
  const NodeFabric& node_fabric() const { return fabric_; }
  const ClosFabric& clos() const { return clos_; }
  std::uint32_t leaves() const { return clos_.leaves(); }
  std::uint32_t leaf_down_ports() const { return down_; }
  std::uint32_t leaf_up_ports() const { return up_; }
  std::uint32_t leaf_of(VertexId chip, std::uint32_t nic) const { return (chip * config_.nics_per_chip + nic) / down_; }
  LinkId nic_link(VertexId chip, std::uint32_t nic) const { return nic_base_ + chip * config_.nics_per_chip + nic; }

 private:
  FatTreeConfig config_;
  NodeFabric fabric_;
  ClosFabric clos_;
  std::uint32_t down_ = 0;
  std::uint32_t up_ = 0;
  VertexId first_leaf_ = 0;
  LinkId nic_base_ = 0;
};

// Picks a live NIC link of `chip` among `count` (nic_link(i) = base + i),
// starting at hash % count; -1 when all failed.
std::int64_t pick_live_nic(const Topology& topology, LinkId base, std::uint32_t count, std::uint64_t hash);

}  // namespace eppsim
