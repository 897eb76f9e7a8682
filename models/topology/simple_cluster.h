#pragma once
// The simple cluster of cluster_spec.h as a graph: each node's chips on their
// node fabric (node_fabric.h), and each chip's NIC (one Optical link,
// "chipN-leaf0") into one non-blocking electrical switch ("leaf0").
//
// The scenario's latencies are end to end (cluster_spec.h), so each NIC link
// carries half the inter-node latency (chip -> switch -> chip adds up to the
// spec) and, for a Switched node, each chip's link into the node switch half
// the intra-node latency. (Other topologies take node.link per link.)
// Priced as chips electrical switch ports (one switch); bisection = chips/2 NIC
// links.
#include "models/topology/node_fabric.h"
#include "models/topology/topology.h"

namespace eppsim {

class SimpleClusterTopology final : public Topology {
 public:
  explicit SimpleClusterTopology(const TopologyConfig& config);

  std::string kind() const override { return "simple"; }
  void route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const override;
  BytesPerSecond injection_bandwidth_per_chip() const override { return live_injection_per_chip(); }
  BytesPerSecond bisection_bandwidth() const override;
  NetworkInventory inventory() const override;

  const NodeFabric& node_fabric() const { return fabric_; }
  VertexId network_switch() const { return switch_; }
  // The NIC link of a chip.
  LinkId nic_link(VertexId chip) const { return first_nic_link_ + chip; }

 private:
  NodeFabric fabric_;
  SimpleNetworkConfig network_;
  VertexId switch_ = 0;
  LinkId first_nic_link_ = 0;
};

}  // namespace eppsim
