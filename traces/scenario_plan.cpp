#include "traces/scenario_parts.h"

#include <cmath>

namespace eppsim::scenario_parts {

void resolve_plan(const proto::Plan& plan, ResolvedScenario* resolved, const FieldLocator& where) {
  if (resolved->collective) {
    if (!plan.strategy().empty() && plan.strategy() != kCollectiveStrategy) {
      where.fail("plan.strategy", fmt::format("a collective benchmark (workload.collective) has no training strategy; "
                                              "leave plan.strategy unset (or {}), got {}",
                                              quote_string(kCollectiveStrategy), quote_string(plan.strategy())));
    }
    resolved->strategy = std::string(kCollectiveStrategy);
  } else {
    resolved->strategy = plan.strategy().empty() ? std::string(kDefaultStrategy) : plan.strategy();
  }
  if (plan.zero_stage() > 3) where.fail("plan.zero_stage", fmt::format("must be 0, 1, 2 or 3, got {}", plan.zero_stage()));
  double fraction = plan.memory_fraction();
  if (fraction == 0.0) fraction = 1.0;
  if (!(fraction > 0.0 && fraction <= 1.0))
    where.fail("plan.memory_fraction", fmt::format("must be in (0, 1] (0 means the default 1.0), got {}", fraction));
  const Bytes memory = resolved->cluster.gpu.memory;
  resolved->memory_limit =
      fraction == 1.0 ? memory : Bytes(static_cast<std::uint64_t>(std::floor(static_cast<double>(memory.count) * fraction)));
}

}  // namespace eppsim::scenario_parts
