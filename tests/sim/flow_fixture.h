#pragma once
// What the flow engine's tests and benchmark share: topologies by config, a
// cost model whose network is RoutedNetwork over the same topology (the
// analytic engine's routed pricing, compute from fixed times), and the
// placement the flow engine reads.
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <vector>

#include "models/network/routed_network.h"
#include "models/topology/topology.h"
#include "sim/engine/engine_registry.h"

namespace eppsim::testing {

inline LinkParams link(double bandwidth_Bps, double latency_s) {
  return LinkParams{BytesPerSecond(bandwidth_Bps), Seconds(latency_s)};
}

// The links the engines' tests put in the simple cluster: NVLink-class inside
// a node (300 GB/s, 1 us), a NIC of 50 GB/s and 4 us.
inline const LinkParams kNvlink = link(300e9, 1e-6);
inline const LinkParams kNic = link(50e9, 4e-6);

// A ring of `chips` chips (a chips x 1 torus, one chip per node).
inline TopologyConfig ring_topology(std::uint32_t chips, LinkParams l) {
  TopologyConfig config;
  config.name = "ring";
  config.nodes = chips;
  config.chips_per_node = 1;
  TorusConfig torus;
  torus.dims = {chips, 1};
  torus.link = l;
  config.network = torus;
  return config;
}

// The simple cluster: `nodes` nodes of `chips_per_node` chips on a node
// switch, one NIC per chip into one non-blocking switch.
inline TopologyConfig simple_topology(std::uint32_t nodes, std::uint32_t chips_per_node, LinkParams intra,
                                      LinkParams nic) {
  TopologyConfig config;
  config.name = "simple";
  config.nodes = nodes;
  config.chips_per_node = chips_per_node;
  config.node.link = intra;
  config.network = SimpleNetworkConfig{nic};
  return config;
}

// Compute: forward 1 ms, backward 2 ms, optimizer 0.5 ms; the network routed
// over `topology` with rank r on chip chip_of_rank[r].
class RoutedTestCost final : public CostModel {
 public:
  RoutedTestCost(std::shared_ptr<const Topology> topology, std::vector<VertexId> chip_of_rank)
      : network_(std::move(topology), std::move(chip_of_rank)) {}
  ComputeCost compute_cost(const ComputeWork& work) const override {
    return ComputeCost{{}, {}, Seconds(work.pass == Pass::Backward ? 2e-3 : 1e-3)};
  }
  Seconds optimizer_time(Bytes) const override { return Seconds(0.5e-3); }
  const NetworkTimeModel& network() const override { return network_; }

 private:
  RoutedNetwork network_;
};

// A topology with ranks on chips: the cost model and the placement of both engines.
struct FlowCluster {
  std::shared_ptr<const Topology> topology;
  std::vector<VertexId> chip_of_rank;
  std::unique_ptr<RoutedTestCost> cost;
  EnginePlacement placement;

  FlowCluster(const TopologyConfig& config, std::vector<VertexId> chips) : topology(build_topology(config)) {
    chip_of_rank = std::move(chips);
    cost = std::make_unique<RoutedTestCost>(topology, chip_of_rank);
    for (VertexId c : chip_of_rank) placement.node_of_rank.push_back(topology->node_of(c));
    placement.chip_of_rank = chip_of_rank;
    placement.topology = [t = topology] { return t; };
  }
  // Rank r on chip r, for every chip.
  explicit FlowCluster(const TopologyConfig& config) : FlowCluster(config, first_chips(config)) {}

  EngineContext context() const { return EngineContext{*cost, &placement}; }

 private:
  static std::vector<VertexId> first_chips(const TopologyConfig& config) {
    std::vector<VertexId> chips(config.nodes * config.chips_per_node);
    std::iota(chips.begin(), chips.end(), 0u);
    return chips;
  }
};

}  // namespace eppsim::testing
