#pragma once
// The chips of one node and their internal links, shared by every topology
// whose nodes have their own fabric (simple, fat-tree, rail-optimized, RailX).
//
//   Switched  one NodeSwitch vertex per node ("nodeswitchN"), one link per chip
//             into it (NVSwitch-like: any two chips of the node are 2 hops apart
//             at full link bandwidth).
//   Mesh      direct chip links along `dims` (local chip index = x0 + d0*(x1 +
//             d1*x2 ...), so the first dimension varies fastest).
//   Torus     Mesh plus the wrap-around link in every dimension of size >= 2 (a
//             dimension of size 2 gets two parallel links, the direct one and
//             the wrap-around, as the chip torus does).
// Every link is Electrical with intra_node = true. Routing inside a node:
// Switched: chip -> switch -> chip; Mesh/Torus: dimension order, shortest
// direction per dimension (ties: positive direction).
#include <cstdint>
#include <string>
#include <vector>

#include "models/topology/topology.h"

namespace eppsim {

class NodeFabric {
 public:
  NodeFabric() = default;

  // Adds every node's switch (Switched) and internal links to `topology`, whose
  // chips must be its only vertices so far. Throws InputError (naming
  // node.dims or node.link) for a grid that does not match the chips per node.
  void build(Topology& topology, const NodeFabricConfig& config);

  // Appends the links from chip a to chip b (same node, a != b) to `path`.
  // Returns false, leaving `path` as it was, when a link on the way failed.
  bool route(const Topology& topology, VertexId a, VertexId b, std::vector<LinkId>* path) const;
  // Hops from local chip a to local chip b along route().
  std::uint32_t hops(std::uint32_t local_a, std::uint32_t local_b) const;

  NodeFabricKind kind() const { return kind_; }
  // The node switch of `node` (Switched with more than one chip per node).
  VertexId node_switch(std::uint32_t node) const { return first_switch_ + node; }
  bool has_node_switch() const { return kind_ == NodeFabricKind::Switched && chips_per_node_ > 1; }
  std::uint32_t links_per_node() const { return links_per_node_; }

 private:
  // Link from local chip `local` to its + neighbour in dimension d, as an
  // offset in the node's link block; -1 when none.
  std::int32_t plus_link(std::uint32_t local, std::uint32_t d) const { return plus_link_[local * dims_.size() + d]; }

  NodeFabricKind kind_ = NodeFabricKind::Switched;
  std::uint32_t chips_per_node_ = 1;
  VertexId first_switch_ = 0;
  LinkId first_link_ = 0;
  std::uint32_t links_per_node_ = 0;
  std::vector<std::uint32_t> dims_;
  std::vector<std::uint32_t> strides_;
  std::vector<std::int32_t> plus_link_;
};

}  // namespace eppsim
