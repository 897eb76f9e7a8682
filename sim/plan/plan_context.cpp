#include "sim/plan/plan_context.h"

namespace eppsim {

PlanContext::PlanContext(const ResolvedScenario& scenario, const ScheduleEvaluator& evaluate)
    : source(scenario.source),
      name(scenario.proto.name()),
      model(scenario.model),
      gpus_per_node(scenario.cluster.gpus_per_node),
      live_nodes(scenario.cluster.live_nodes),
      cost(scenario.cost.model),
      flexsp_preset(scenario.cost.flexsp_preset),
      memory_limit(scenario.plan.memory_limit),
      memory_bandwidth(scenario.cluster.gpu.memory_bandwidth),
      max_length(scenario.workload.max_length) {
  if (evaluate) simulate = [evaluate, &scenario](const proto::Schedule& schedule) { return evaluate(schedule, scenario); };
}

}  // namespace eppsim
