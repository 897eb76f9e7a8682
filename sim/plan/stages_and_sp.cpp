#include "sim/plan/stages_and_sp.h"

#include <fmt/format.h>

#include "models/sequence_parallel_cost.h"

namespace eppsim {

void check_stages_within_layers(const ResolvedScenario& scenario, std::string_view field, std::uint32_t stages) {
  if (stages > scenario.model.layers) {
    scenario.where().fail(field, fmt::format("must be <= the model's {} layers, got {}", scenario.model.layers, stages));
  }
}

void check_sp_divides_heads(const ResolvedScenario& scenario, std::string_view field, std::uint32_t sp) {
  if (!ulysses_degree_fits(scenario.model, sp)) {
    scenario.where().fail(field, fmt::format("must divide the model's {} attention heads and {} KV heads, got {}",
                                             scenario.model.attention_heads, scenario.model.kv_heads, sp));
  }
}

StagesAndSp resolve_stages_and_sp(const ResolvedScenario& scenario, std::string_view options_field, std::uint32_t stages,
                                  std::uint32_t sp) {
  const std::string stages_field = fmt::format("{}.pipeline_stages", options_field);
  const std::string sp_field = fmt::format("{}.sp_degree", options_field);
  const std::uint32_t gpus = scenario.usable_gpus();
  const std::uint32_t per_node = scenario.cluster.gpus_per_node;
  if (stages == 0) stages = static_cast<std::uint32_t>(scenario.cluster.live_nodes.size());
  if (sp == 0) sp = per_node;
  check_stages_within_layers(scenario, stages_field, stages);
  if (sp > per_node || per_node % sp != 0) {
    scenario.where().fail(sp_field,
                          fmt::format("must divide cluster.gpus_per_node {} (SP stays inside a node), got {}", per_node, sp));
  }
  check_sp_divides_heads(scenario, sp_field, sp);
  if (gpus % (static_cast<std::uint64_t>(stages) * sp) != 0) {
    scenario.where().fail(stages_field,
                          fmt::format("pipeline_stages x sp_degree ({} x {}) must divide the {} GPUs", stages, sp, gpus));
  }
  return StagesAndSp{stages, sp, gpus / (stages * sp)};
}

}  // namespace eppsim
