#pragma once
// Scenarios: strict text-format parsing, --set overrides, validation, and
// resolution of presets and unit strings into the typed specs of models/.
// Resolution is staged, so that a command resolves only the parts it uses:
// `eppsim topo` the cluster, `eppsim sim` the cluster, model, cost model and
// engine, planning everything. The strategy stays a name here: each planner
// resolves and checks its own options (sim/plan/planner_registry.h) through
// the scenario's FieldLocator.
//
// Every error is an InputError naming the source, the line where known, the
// field path and the rule:
//   "quick.textproto:12: cluster.nodes: must be > 0, got 0"
//   "quick.textproto:7:3: Message type "eppsim.proto.Cluster" has no field named "nodez"."
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/cluster_spec.h"
#include "models/compute_cost.h"
#include "models/cost_model.h"
#include "models/interference.h"
#include "models/length_distribution.h"
#include "models/topology/network_cost.h"
#include "models/topology/topology.h"
#include "models/transformer_spec.h"
#include "scenario/field_locator.h"
#include "scenario/scenario_faults.h"
#include "proto/scenario.pb.h"

namespace eppsim {

// The default of plan.strategy.
inline constexpr std::string_view kDefaultStrategy = "packed-1f1b";
// The strategy name of a collective micro-benchmark's Schedule (workload.collective).
inline constexpr std::string_view kCollectiveStrategy = "collective";
// The default of simulation.engine.
inline constexpr std::string_view kDefaultEngine = "analytic";

// How much of a scenario a resolution covers; each part includes the ones before.
enum class ScenarioPart {
  Cluster,     // cluster: GPUs, links, topology, failures, prices (`eppsim topo`)
  Simulation,  // + model, cost_model and simulation.engine (`eppsim sim`)
  Full,        // + workload and the plan block's shared fields (plan, run, compare)
};

// A scenario as written, with the --set overrides applied, not yet resolved.
struct ParsedScenario {
  proto::Scenario proto;
  std::shared_ptr<const FieldLocator> where;  // never null
  std::filesystem::path base_dir;             // relative paths in the scenario resolve against it
};

struct FlexSpModel;  // models/flexsp_preset.h

// workload.collective resolved: a collective micro-benchmark (scenario.proto's
// CollectiveBenchmark has the semantics).
struct CollectiveBenchmarkSpec {
  proto::CollectiveKind kind = proto::ALL_REDUCE;
  proto::CollectiveAlgorithm algorithm = proto::ALGORITHM_AUTO;
  Bytes size;                     // per-rank buffer of one iteration
  std::uint32_t chunks = 1;
  std::uint32_t group_size = 0;   // members
  std::uint32_t stride = 1;       // usable GPUs between consecutive members
  std::uint32_t iterations = 1;
};

// The scenario's cluster (its `cluster` block): the chips and links, the
// network they sit on, the prices, and which nodes are up.
// The network name of the simple cluster (cluster.network).
inline constexpr std::string_view kSimpleNetworkName = "simple";

// What the cluster costs beyond its network and over what time
// (cluster.capital), for the capital cost and cost per token of every report.
struct ClusterEconomics {
  double gpu_usd = 0.0;            // default: the GPU preset's price, else 0 (no cost reported)
  double node_usd = 0.0;
  double amortisation_years = 5.0;
  double utilisation = 1.0;
};

struct ScenarioCluster : ClusterSpec {
  // cluster.topology, when set (otherwise the simple cluster of the spec), and
  // the networks to compare it with; failures are part of each config.
  std::optional<TopologyConfig> topology;
  std::vector<TopologyConfig> compare_topologies;
  NetworkPrices prices;  // documented defaults, overridden by cluster.prices
  ClusterEconomics economics;
  // Nodes not listed in cluster.failures.nodes, ascending: planners place ranks
  // on these only, node-major.
  std::vector<std::uint32_t> live_nodes;

  // The network the run uses: the topology's name, or "simple".
  std::string network_name() const { return topology ? topology->name : std::string(kSimpleNetworkName); }
  std::uint32_t usable_gpus() const { return static_cast<std::uint32_t>(live_nodes.size()) * gpus_per_node; }
  // Rank r runs on local GPU r % gpus_per_node of the (r / gpus_per_node)-th live node.
  std::uint32_t node_of_rank(std::uint32_t rank) const { return live_nodes[rank / gpus_per_node]; }
};

// The batch to plan (the `workload` block).
struct ScenarioWorkload {
  std::shared_ptr<const LengthDistribution> lengths;
  std::uint32_t global_batch = 0;
  std::uint32_t repeats = 1;  // workload.repeats: each drawn sequence appears this many times
  std::uint64_t max_length = 0;
  OverMaxLength over_max_length = OverMaxLength::Truncate;
  // Set when the workload is a collective micro-benchmark instead of a training
  // step; lengths, global_batch and max_length then stay unset, and the
  // scenario's model is the default TransformerSpec (empty name) when it names none.
  std::optional<CollectiveBenchmarkSpec> collective;
  std::uint64_t seed = 0;  // the scenario's seed: the batch is sampled with it
};

// The `plan` block's shared fields (each strategy resolves its own options:
// sim/plan/planner_registry.h).
struct ScenarioPlan {
  // plan.strategy (default kDefaultStrategy; kCollectiveStrategy for a
  // collective benchmark), unchecked: the planner registry knows the names.
  std::string strategy;
  Bytes memory_limit;  // GPU memory * plan.memory_fraction
};

// The `simulation` and `faults` blocks.
struct ScenarioSimulation {
  std::string engine;  // simulation.engine (default kDefaultEngine), unchecked: the engine registry knows the names
  bool shared_endpoints = true;  // simulation.shared_endpoints: the analytic engine shares NIC and NVLink ports
  bool identical_replicas = true;  // simulation.identical_replicas (schedule/identical_replicas.h)
  std::vector<FaultSpec> faults;  // the simulated faults of the step
};

// What the cost model's factory builds a cost model from (the cost_model
// block resolved): private to scenario/cost_model_factory.h.
struct CostModelIngredients;

// The cost model (the `cost_model` block).
struct ScenarioCost {
  // The CostModel planners estimate with and engines time by, bound to the
  // default placement (rank r on the r-th usable GPU, ScenarioCluster::
  // node_of_rank) of all usable GPUs; scenario/cost_model_factory.h builds one
  // for another placement from the ingredients.
  std::shared_ptr<const CostModel> model;
  // Its compute part: the FLOPs and HBM traffic the Schedule's ops record.
  std::shared_ptr<const ComputeCostModel> compute;
  // cost_model.interference: each factor from the scenario, else the
  // calibration's InterferenceFit of its class, else the published default.
  Interference interference;
  // FlexSP's measured constants when cost_model.flexsp_preset names them.
  const FlexSpModel* flexsp_preset = nullptr;
  std::shared_ptr<const CostModelIngredients> ingredients;
};

// Everything a planner and an engine need, resolved and validated, in parts;
// the parts beyond `part` keep their defaults.
struct ResolvedScenario {
  ScenarioPart part = ScenarioPart::Full;
  proto::Scenario proto;  // as parsed, with overrides applied
  std::string source;     // file name (or "<embedded showcase>") for messages
  // Locates fields of `proto` for errors found after resolution (a planner's
  // options); never null.
  std::shared_ptr<const FieldLocator> locator;
  ScenarioCluster cluster;
  TransformerSpec model;
  ScenarioWorkload workload;
  ScenarioPlan plan;
  ScenarioSimulation simulation;
  ScenarioCost cost;

  std::uint32_t usable_gpus() const { return cluster.usable_gpus(); }
  std::uint32_t node_of_rank(std::uint32_t rank) const { return cluster.node_of_rank(rank); }
  const FieldLocator& where() const { return *locator; }
};

// The network the scenario's chips sit on: cluster.topology, or the simple
// cluster (node fabric + one NIC per GPU into one non-blocking switch).
TopologyConfig network_of(const ResolvedScenario& scenario);

// Strict text format: unknown fields, bad syntax and duplicate singular fields
// are errors with line:column.
proto::Scenario parse_scenario_text(std::string_view text, std::string_view source);

// "FIELD=VALUE" with FIELD a dotted path such as "plan.packed_1f1b.pipeline_stages"
// or "cluster.gpu.preset"; VALUE in text-format syntax (strings need no quotes).
// Errors name the override and the rule.
void apply_override(proto::Scenario* scenario, std::string_view assignment);

// Parses `text` (named `source` in messages) and applies the overrides in
// order; the locator knows every field's line. Relative paths in the scenario
// resolve against `base_dir`.
ParsedScenario parse_scenario(std::string_view text, const std::string& source, const std::filesystem::path& base_dir,
                              const std::vector<std::string>& overrides = {});
// Reads a scenario file and parses it as parse_scenario does, relative paths
// resolving against the file's folder.
ParsedScenario parse_scenario_file(const std::filesystem::path& path, const std::vector<std::string>& overrides = {});
// The embedded showcase (scenarios/showcase.textproto compiled in: the bare `eppsim`), parsed.
std::string_view embedded_showcase_text();
ParsedScenario parse_embedded_showcase(const std::vector<std::string>& overrides = {});
// A scenario built in code: no line numbers in its errors.
ParsedScenario parsed_scenario(const proto::Scenario& scenario, std::string_view source,
                               const std::filesystem::path& base_dir);

// The staged resolutions: each checks every rule of its part (positive counts,
// parseable units, known presets, divisible shapes) and resolves presets,
// units, the length source and the cost model; nothing outside its part is read.
ResolvedScenario resolve_cluster_part(const ParsedScenario& scenario);
ResolvedScenario resolve_simulation_part(const ParsedScenario& scenario);
ResolvedScenario resolve_full(const ParsedScenario& scenario);
ResolvedScenario resolve_part(const ParsedScenario& scenario, ScenarioPart part);

// resolve_full of parsed_scenario.
ResolvedScenario resolve_scenario(const proto::Scenario& scenario, std::string_view source,
                                  const std::filesystem::path& base_dir);

// parse + overrides + resolve `part`. Line numbers of validation errors refer to the file.
ResolvedScenario load_scenario(const std::filesystem::path& path, const std::vector<std::string>& overrides = {},
                               ScenarioPart part = ScenarioPart::Full);
ResolvedScenario load_embedded_showcase(const std::vector<std::string>& overrides = {});

}  // namespace eppsim
