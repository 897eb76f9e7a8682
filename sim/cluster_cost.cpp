#include "sim/cluster_cost.h"

#include "models/topology/network_cost.h"
#include "models/topology/topology.h"

namespace eppsim {

std::optional<proto::ClusterCost> cluster_cost(const ResolvedScenario& scenario, double tokens_per_s) {
  const ClusterEconomics& economics = scenario.cluster.economics;
  if (economics.gpu_usd <= 0.0 || !(tokens_per_s > 0.0)) return std::nullopt;
  constexpr double kHoursPerYear = 8766.0;  // 365.25 days
  proto::ClusterCost cost;
  cost.set_network_usd(network_cost_usd(build_topology(network_of(scenario))->inventory(), scenario.cluster.prices));
  cost.set_gpus_usd(economics.gpu_usd * scenario.cluster.total_gpus());
  cost.set_nodes_usd(economics.node_usd * scenario.cluster.nodes);
  cost.set_capital_usd(cost.network_usd() + cost.gpus_usd() + cost.nodes_usd());
  cost.set_amortisation_years(economics.amortisation_years);
  cost.set_utilisation(economics.utilisation);
  cost.set_usd_per_hour(cost.capital_usd() / (economics.amortisation_years * kHoursPerYear));
  cost.set_usd_per_million_tokens(cost.usd_per_hour() / (3600.0 * tokens_per_s * economics.utilisation) * 1e6);
  return cost;
}

}  // namespace eppsim
