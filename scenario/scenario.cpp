// The staged resolution of a scenario: each stage resolves its parts
// (scenario/scenario_parts.h) and nothing else.
#include "scenario/scenario.h"

#include <span>

#include <fmt/format.h>

#include "base/errors.h"
#include "scenario/scenario_parts.h"

namespace eppsim {
namespace {

using namespace scenario_parts;


}  // namespace

ResolvedScenario resolve_part(const ParsedScenario& parsed, ScenarioPart part) {
  const proto::Scenario& scenario = parsed.proto;
  const FieldLocator& where = *parsed.where;
  ResolvedScenario resolved;
  resolved.part = part;
  resolved.proto = scenario;
  resolved.source = where.source();
  resolved.locator = parsed.where;
  resolved.workload.seed = scenario.seed();

  // A collective benchmark runs no layers: its model is optional.
  const bool model_optional = scenario.workload().has_collective() && !scenario.has_model();
  if (part != ScenarioPart::Cluster && !model_optional) resolved.model = resolve_model(scenario.model(), where);
  static_cast<ClusterSpec&>(resolved.cluster) = resolve_cluster(scenario.cluster(), where);
  resolve_network(scenario.cluster(), &resolved, where);
  if (part == ScenarioPart::Full) {
    resolve_workload(scenario.workload(), parsed.base_dir, &resolved, where);
    resolve_plan(scenario.plan(), &resolved, where);
  }
  if (part != ScenarioPart::Cluster) {
    resolve_cost_model(scenario.cost_model(), parsed.base_dir, &resolved, where);
    // The name only: the engine registry (sim/engine/engine_registry.h) knows the engines.
    resolved.simulation.engine = scenario.simulation().engine().empty() ? std::string(kDefaultEngine) : scenario.simulation().engine();
    resolved.simulation.shared_endpoints = !scenario.simulation().has_shared_endpoints() || scenario.simulation().shared_endpoints();
    resolved.simulation.identical_replicas =
        !scenario.simulation().has_identical_replicas() || scenario.simulation().identical_replicas();
    const std::vector<std::uint32_t> failed(scenario.cluster().failures().nodes().begin(),
                                            scenario.cluster().failures().nodes().end());
    resolved.simulation.faults = resolve_faults(scenario, resolved.cluster, failed, where);
  }
  return resolved;
}

ResolvedScenario resolve_cluster_part(const ParsedScenario& scenario) { return resolve_part(scenario, ScenarioPart::Cluster); }

ResolvedScenario resolve_simulation_part(const ParsedScenario& scenario) {
  return resolve_part(scenario, ScenarioPart::Simulation);
}

ResolvedScenario resolve_full(const ParsedScenario& scenario) { return resolve_part(scenario, ScenarioPart::Full); }

ResolvedScenario resolve_scenario(const proto::Scenario& scenario, std::string_view source,
                                  const std::filesystem::path& base_dir) {
  return resolve_full(parsed_scenario(scenario, source, base_dir));
}

ResolvedScenario load_scenario(const std::filesystem::path& path, const std::vector<std::string>& overrides,
                               ScenarioPart part) {
  return resolve_part(parse_scenario_file(path, overrides), part);
}

ResolvedScenario load_embedded_showcase(const std::vector<std::string>& overrides) {
  return resolve_full(parse_embedded_showcase(overrides));
}

TopologyConfig network_of(const ResolvedScenario& scenario) {
  if (scenario.cluster.topology) return *scenario.cluster.topology;
  TopologyConfig config;
  config.name = "simple";
  config.nodes = scenario.cluster.nodes;
  config.chips_per_node = scenario.cluster.gpus_per_node;
  config.node.kind = NodeFabricKind::Switched;
  config.node.link = scenario.cluster.intra_node;
  config.network = SimpleNetworkConfig{scenario.cluster.inter_node};
  config.failures = resolve_failures(scenario.proto.cluster().failures(), scenario.cluster, scenario.where());
  return config;
}

}  // namespace eppsim
