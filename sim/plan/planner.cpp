#include "sim/plan/planner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/errors.h"
#include "sim/plan/flexsp.h"
#include "sim/plan/packed_1f1b.h"
#include "sim/plan/seq1f1b.h"
#include "sim/plan/ulysses.h"

namespace eppsim {

std::vector<std::string> planner_names() { return {"packed-1f1b", "ulysses", "ulysses-adaptive", "seq1f1b", "flexsp"}; }

std::unique_ptr<Planner> make_planner(std::string_view strategy) {
  if (strategy == "packed-1f1b") return std::make_unique<Packed1F1BPlanner>();
  if (strategy == "ulysses") return std::make_unique<UlyssesPlanner>();
  if (strategy == "ulysses-adaptive") return std::make_unique<UlyssesAdaptivePlanner>();
  if (strategy == "seq1f1b") return std::make_unique<Seq1F1BPlanner>();
  if (strategy == "flexsp") return std::make_unique<FlexSpPlanner>();
  throw InputError(fmt::format("unknown strategy '{}' (known: {})", strategy, fmt::join(planner_names(), ", ")));
}

std::vector<std::uint64_t> sample_batch(const ResolvedScenario& scenario) {
  return sample_global_batch(*scenario.lengths, scenario.global_batch, scenario.max_length, scenario.over_max_length,
                             scenario.seed);
}

}  // namespace eppsim
