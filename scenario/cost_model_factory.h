#pragma once
// Builds a scenario's CostModel (models/cost_model.h) for a placement of ranks:
// the compute model the scenario resolved (cost_model.compute), the network it
// chose (cost_model.network: closed forms over the cluster's links, or routed
// over cluster.topology), its all-to-alls derated by cost_model.all_to_all_efficiency
// (models/network/all_to_all_efficiency_network.h), wrapped in a CalibratedNetwork when the calibration
// has collective fits (they price what they cover, the network the rest), and
// the GPU's HBM bandwidth for optimizer steps.
// With routed pricing the model owns the topology; it is built on the first
// communication query (a scenario that only plans compute never pays for it).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "models/cost_model.h"
#include "scenario/scenario.h"

namespace eppsim {

// Where a rank runs: its node and its GPU inside the node.
struct RankPlacement {
  std::uint32_t node = 0;
  std::uint32_t local_gpu = 0;
};

// The scenario's default placement of `ranks` ranks: rank r on the r-th usable
// GPU, node-major over the live nodes (ResolvedScenario::node_of_rank).
// Throws InputError when `ranks` exceeds the usable GPUs.
std::vector<RankPlacement> default_placement(const ResolvedScenario& scenario, std::uint32_t ranks);

// Throws InputError naming the rank when a placement names a node the cluster
// lacks, a failed node, or a local GPU the node lacks.
std::shared_ptr<const CostModel> make_cost_model(const ResolvedScenario& scenario,
                                                 std::span<const RankPlacement> placement);

}  // namespace eppsim
