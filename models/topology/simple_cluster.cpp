#include "models/topology/simple_cluster.h"

#include <fmt/format.h>

#include <stdexcept>

namespace eppsim {

SimpleClusterTopology::SimpleClusterTopology(const TopologyConfig& config)
    : Topology(config.name, config.nodes, config.chips_per_node),
      network_(std::get<SimpleNetworkConfig>(config.network)) {
  if (!(network_.inter_node.bandwidth.value > 0.0)) {
    throw_topology_error(name(), "inter_node.bandwidth", "must be > 0");
  }
  // cluster_spec.h's latencies are end to end: a switched node's two hops
  // (chip -> node switch -> chip) carry half each, as the NIC links do.
  NodeFabricConfig node = config.node;
  if (node.kind == NodeFabricKind::Switched) node.link.latency = node.link.latency * 0.5;
  fabric_.build(*this, node);
  switch_ = add_vertex(VertexKind::LeafSwitch);
  first_nic_link_ = static_cast<LinkId>(links().size());
  Link link;
  link.bandwidth = network_.inter_node.bandwidth;
  link.latency = network_.inter_node.latency * 0.5;
  link.medium = LinkMedium::Optical;
  for (VertexId chip = 0; chip < chips(); ++chip) {
    link.a = chip;
    link.b = switch_;
    add_link(link);
  }
  finalize();
}

void SimpleClusterTopology::route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const {
  path->clear();
  check_route_endpoints(src, dst);
  if (src == dst) return;
  bool ok;
  if (node_of(src) == node_of(dst)) {
    ok = fabric_.route(*this, src, dst, path);
  } else {
    path->push_back(nic_link(src));
    path->push_back(nic_link(dst));
    ok = !link(nic_link(src)).failed && !link(nic_link(dst)).failed;
  }
  if (!ok) route_over_live_links(src, dst, flow, path);
}

BytesPerSecond SimpleClusterTopology::bisection_bandwidth() const {
  return BytesPerSecond(static_cast<double>(chips() / 2) * network_.inter_node.bandwidth.value);
}

NetworkInventory SimpleClusterTopology::inventory() const {
  NetworkInventory inv = Topology::inventory();
  inv.electrical_switches = 1;
  inv.electrical_switch_ports = chips();
  return inv;
}

}  // namespace eppsim
