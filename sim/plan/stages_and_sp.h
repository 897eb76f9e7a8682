#pragma once
// The pipeline stages and sequence-parallel degree of the planners that run
// Ulysses SP groups inside 1F1B pipelines (epp and its variants, seq1f1b), and
// the checks every planner makes of a stage count or an SP degree. Each check
// fails through the scenario's FieldLocator at the option's field:
//   "<file>:<line>: plan.<strategy>.<option>: <rule>, got <value>"
#include <cstdint>
#include <string_view>

#include "scenario/scenario.h"

namespace eppsim {

struct StagesAndSp {
  std::uint32_t pipeline_stages = 1;
  std::uint32_t sp_degree = 1;
  std::uint32_t data_parallel = 1;  // usable GPUs / (stages x SP)
};

// `options_field` is the strategy's options block ("plan.epp"); `stages` and
// `sp` its pipeline_stages and sp_degree, 0 for the defaults: one stage per live
// node, SP over a node's GPUs. Rules: stages <= the model's layers; SP divides
// cluster.gpus_per_node (SP stays inside a node) and the model's attention and
// KV heads; stages x SP divides the usable GPUs.
StagesAndSp resolve_stages_and_sp(const ResolvedScenario& scenario, std::string_view options_field, std::uint32_t stages,
                                  std::uint32_t sp);

// `field` (a stage count) must be <= the model's layers.
void check_stages_within_layers(const ResolvedScenario& scenario, std::string_view field, std::uint32_t stages);
// `field` (an SP degree) must divide the model's attention and KV heads
// (Ulysses splits heads over the group: sequence_parallel_cost.h's ulysses_degree_fits).
void check_sp_divides_heads(const ResolvedScenario& scenario, std::string_view field, std::uint32_t sp);

}  // namespace eppsim
