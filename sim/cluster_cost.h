#pragma once
// What a run's cluster costs, and a million of its tokens (proto ClusterCost):
// the network's parts from the topology it trains on (the simple cluster's
// graph without one) priced by cluster.prices (models/topology/network_cost.h),
// plus its GPUs and nodes at cluster.capital's gpu_usd and node_usd, spread over
// amortisation_years at the stated utilisation. Capital only: no power, space
// or staff.
#include <optional>

#include "proto/report.pb.h"
#include "scenario/scenario.h"

namespace eppsim {

// nullopt when the GPUs have no price (ClusterEconomics::gpu_usd 0) or the
// step has no throughput; the topology is built to count its parts.
std::optional<proto::ClusterCost> cluster_cost(const ResolvedScenario& scenario, double tokens_per_s);

}  // namespace eppsim
