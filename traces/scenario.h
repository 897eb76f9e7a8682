#pragma once
// Scenarios: strict text-format parsing, --set overrides, validation, and
// resolution of presets and unit strings into the typed specs of models/.
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
#include "models/length_distribution.h"
#include "models/topology/network_cost.h"
#include "models/topology/topology.h"
#include "models/transformer_spec.h"
#include "traces/scenario.pb.h"

namespace eppsim {

struct FlexSpModel;  // models/flexsp_preset.h

// How communication is priced (cost_model.network): the simple cluster's closed
// forms, or routed over cluster.topology.
enum class NetworkPricing { ClosedForm, Routed };

// Everything a planner and an engine need, resolved and validated.
struct ResolvedScenario {
  proto::Scenario proto;  // as parsed, with overrides applied
  std::string source;     // file name (or "<embedded quickstart>") for messages
  TransformerSpec model;
  ClusterSpec cluster;
  std::shared_ptr<const LengthDistribution> lengths;
  std::uint32_t global_batch = 0;
  std::uint64_t max_length = 0;
  OverMaxLength over_max_length = OverMaxLength::Truncate;
  std::uint64_t seed = 0;
  std::string strategy;   // plan.strategy (default "packed-1f1b")
  std::string engine;     // simulation.engine (default "analytic")
  Bytes memory_limit;     // GPU memory * plan.memory_fraction
  // The cost model (cost_model): its compute part, how the network is priced,
  // FlexSP's measured constants when cost_model.flexsp_preset names them, and
  // the CostModel planners estimate with, bound to the default placement (rank
  // r on the r-th usable GPU, node_of_rank) of all usable GPUs.
  // traces/cost_model_factory.h builds one for another placement.
  std::shared_ptr<const ComputeCostModel> compute_cost;
  NetworkPricing network_pricing = NetworkPricing::ClosedForm;
  const FlexSpModel* flexsp_preset = nullptr;
  std::shared_ptr<const CostModel> cost;
  // cluster.topology, when set (otherwise the simple cluster of `cluster`), and
  // the networks to compare it with; failures are part of each config.
  std::optional<TopologyConfig> topology;
  std::vector<TopologyConfig> compare_topologies;
  NetworkPrices prices;  // documented defaults, overridden by cluster.prices
  // Nodes not listed in cluster.failures.nodes, ascending: planners place ranks
  // on these only, node-major.
  std::vector<std::uint32_t> live_nodes;

  std::uint32_t usable_gpus() const {
    return static_cast<std::uint32_t>(live_nodes.size()) * cluster.gpus_per_node;
  }
  // Rank r runs on local GPU r % gpus_per_node of the (r / gpus_per_node)-th live node.
  std::uint32_t node_of_rank(std::uint32_t rank) const { return live_nodes[rank / cluster.gpus_per_node]; }
  std::uint32_t local_gpu_of_rank(std::uint32_t rank) const { return rank % cluster.gpus_per_node; }
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

// Checks every rule (positive counts, parseable units, known presets, divisible
// shapes) and resolves presets, units, the length source and the cost model.
// Relative paths in the scenario (workload.lengths.file) resolve against
// `base_dir`.
ResolvedScenario resolve_scenario(const proto::Scenario& scenario, std::string_view source,
                                  const std::filesystem::path& base_dir);

// parse + overrides + resolve. Line numbers of validation errors refer to the file.
ResolvedScenario load_scenario(const std::filesystem::path& path, const std::vector<std::string>& overrides = {});

// The embedded quickstart (scenarios/quickstart.textproto compiled in).
std::string_view embedded_quickstart_text();
ResolvedScenario load_embedded_quickstart(const std::vector<std::string>& overrides = {});

}  // namespace eppsim
