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

#include <optional>

#include "models/cost_model.h"
#include "models/network/all_to_all_efficiency_network.h"
#include "models/network/calibrated_network.h"
#include "models/shaped_compute_cost.h"
#include "scenario/scenario.h"

namespace eppsim {

// How communication is priced (cost_model.network): the simple cluster's closed
// forms, or routed over cluster.topology.
enum class NetworkPricing { ClosedForm, Routed };

// The cost_model block resolved (scenario_cost_model.cpp), beside the compute
// model in ScenarioCost: what make_cost_model builds a placement's model from.
struct CostModelIngredients {
  // cost_model.compute SHAPED: its parameters, cost_model.shaped over the GPU's
  // defaults (models/shaped_compute_cost.h); unset for the other compute models.
  std::optional<ShapedComputeParams> shaped_compute;
  NetworkPricing network_pricing = NetworkPricing::ClosedForm;
  // The calibration's collective fits (models/network/calibrated_network.h):
  // when any, they price the communication they cover in place of the network model.
  std::vector<CommFit> comm_fits;
  // cost_model.all_to_all_efficiency: an all-to-all over d ranks takes the
  // network's time / efficiency(d) (models/network/all_to_all_efficiency_network.h).
  std::vector<AllToAllEfficiencyPoint> all_to_all_efficiency;
};

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
// lacks, a failed node, or a local GPU the node lacks; std::logic_error for a
// scenario resolved without its cost model (ScenarioPart::Cluster).
std::shared_ptr<const CostModel> make_cost_model(const ResolvedScenario& scenario,
                                                 std::span<const RankPlacement> placement);

}  // namespace eppsim
