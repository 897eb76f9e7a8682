#include "sim/plan/planner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/errors.h"
#include "sim/plan/packed_1f1b.h"

namespace eppsim {

std::vector<std::string> planner_names() { return {"packed-1f1b"}; }

std::unique_ptr<Planner> make_planner(std::string_view strategy) {
  if (strategy == "packed-1f1b") return std::make_unique<Packed1F1BPlanner>();
  throw InputError(fmt::format("unknown strategy '{}' (known: {})", strategy, fmt::join(planner_names(), ", ")));
}

std::vector<std::uint64_t> sample_batch(const ResolvedScenario& scenario) {
  return sample_global_batch(*scenario.lengths, scenario.global_batch, scenario.max_length, scenario.over_max_length,
                             scenario.seed);
}

}  // namespace eppsim
