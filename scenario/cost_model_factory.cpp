#include "scenario/cost_model_factory.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "models/network/all_to_all_efficiency_network.h"
#include "models/network/calibrated_network.h"
#include "models/network/closed_form_network.h"
#include "models/cluster_cost_model.h"
#include "base/errors.h"
#include "models/network/routed_network.h"

namespace eppsim {
namespace {

// Routed pricing whose topology is built on the first query.
class DeferredRoutedNetwork final : public NetworkTimeModel {
 public:
  DeferredRoutedNetwork(TopologyConfig config, std::vector<VertexId> chip_of_rank)
      : config_(std::move(config)), chip_of_rank_(std::move(chip_of_rank)) {}

  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const override {
    return routed().p2p_time(src_rank, dst_rank, size);
  }
  Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                          Bytes size) const override {
    return routed().collective_time(kind, algorithm, ranks, size);
  }
  CollectiveRoute collective_route(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                                   Bytes size) const override {
    return routed().collective_route(kind, algorithm, ranks, size);
  }

 private:
  const RoutedNetwork& routed() const {
    std::call_once(built_, [this] {
      network_ = std::make_unique<RoutedNetwork>(build_topology(config_), std::move(chip_of_rank_));
    });
    return *network_;
  }

  TopologyConfig config_;
  mutable std::vector<VertexId> chip_of_rank_;
  mutable std::once_flag built_;
  mutable std::unique_ptr<RoutedNetwork> network_;
};

}  // namespace

std::vector<RankPlacement> default_placement(const ResolvedScenario& scenario, std::uint32_t ranks) {
  if (ranks > scenario.usable_gpus()) {
    throw InputError(fmt::format("{}: {} ranks need {} GPUs, but the cluster has only {} usable GPUs", scenario.source,
                                 ranks, ranks, scenario.usable_gpus()));
  }
  std::vector<RankPlacement> placement(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) placement[r] = {scenario.node_of_rank(r), scenario.cluster.local_gpu_of(r)};
  return placement;
}

std::shared_ptr<const CostModel> make_cost_model(const ResolvedScenario& scenario,
                                                 std::span<const RankPlacement> placement) {
  const ClusterSpec& cluster = scenario.cluster;
  for (std::uint32_t r = 0; r < placement.size(); ++r) {
    const RankPlacement& p = placement[r];
    if (p.node >= cluster.nodes) {
      throw InputError(
          fmt::format("placement: rank {} is placed on node {}, but the cluster has {} nodes", r, p.node, cluster.nodes));
    }
    if (!std::binary_search(scenario.cluster.live_nodes.begin(), scenario.cluster.live_nodes.end(), p.node)) {
      throw InputError(
          fmt::format("placement: rank {} is placed on node {}, which cluster.failures lists as failed", r, p.node));
    }
    if (p.local_gpu >= cluster.gpus_per_node) {
      throw InputError(fmt::format("placement: rank {} is placed on local GPU {} of node {}, which has {} GPUs", r,
                                   p.local_gpu, p.node, cluster.gpus_per_node));
    }
  }
  if (scenario.cost.ingredients == nullptr) {
    throw std::logic_error(fmt::format("make_cost_model: {}'s cost model is not resolved (resolve the Simulation part)",
                                       scenario.source));
  }
  const CostModelIngredients& ingredients = *scenario.cost.ingredients;
  std::shared_ptr<const NetworkTimeModel> network;
  if (ingredients.network_pricing == NetworkPricing::Routed) {
    std::vector<VertexId> chips(placement.size());
    for (std::size_t r = 0; r < placement.size(); ++r)
      chips[r] = placement[r].node * cluster.gpus_per_node + placement[r].local_gpu;
    network = std::make_shared<DeferredRoutedNetwork>(network_of(scenario), std::move(chips));
  } else {
    std::vector<std::uint32_t> nodes(placement.size());
    for (std::size_t r = 0; r < placement.size(); ++r) nodes[r] = placement[r].node;
    network = std::make_shared<ClosedFormNetwork>(cluster.intra_node, cluster.inter_node, std::move(nodes));
  }
  if (!ingredients.all_to_all_efficiency.empty())
    network = std::make_shared<AllToAllEfficiencyNetwork>(std::move(network), ingredients.all_to_all_efficiency);
  if (!ingredients.comm_fits.empty()) {
    std::vector<std::uint32_t> nodes(placement.size());
    for (std::size_t r = 0; r < placement.size(); ++r) nodes[r] = placement[r].node;
    network = std::make_shared<CalibratedNetwork>(ingredients.comm_fits, std::move(network), std::move(nodes));
  }
  return std::make_shared<ClusterCostModel>(scenario.cost.compute, std::move(network), cluster.gpu.memory_bandwidth);
}

}  // namespace eppsim
