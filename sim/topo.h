#pragma once
// `eppsim topo`: build a scenario's network (and the networks it is compared
// with), measure each (models/topology/topology_metrics.h) and report the
// metrics and cost side by side in topology.json.
#include <filesystem>
#include <string>

#include "models/topology/network_cost.h"
#include "models/topology/topology.h"
#include "models/topology/topology_metrics.h"
#include "scenario/scenario.h"
#include "proto/topology_report.pb.h"

namespace eppsim {

// Builds and measures one network; build_time_s covers build_topology. With
// failures in the config, the same network without them is measured too and
// the report's `failures` says what was lost.
proto::TopologyReport study_topology(const TopologyConfig& config, const NetworkPrices& prices,
                                     const MeasureOptions& options = {});

// The scenario's network (cluster.topology, or the simple cluster when it has
// none) with cluster.compare_topologies as `comparisons`, all at the
// scenario's prices. Reads only the cluster: a scenario resolved with
// resolve_cluster_part (ScenarioPart::Cluster) is enough.
proto::TopologyReport run_topology_study(const ResolvedScenario& scenario);

// A table for people: one line per network.
std::string topology_summary(const proto::TopologyReport& report);

// DIR/topology.json (atomic; DIR is created when missing).
void write_topology_report(const proto::TopologyReport& report, const std::filesystem::path& dir);

}  // namespace eppsim
