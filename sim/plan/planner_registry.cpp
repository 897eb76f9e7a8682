#include "sim/plan/planner_registry.h"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"

namespace eppsim {

std::span<const PlannerRegistration> planner_registry() {
  static const std::vector<PlannerRegistration> registry = [] {
    std::vector<PlannerRegistration> all;
    for (auto module : {packed_1f1b_registrations, ulysses_registrations, seq1f1b_registrations, flexsp_registrations,
                        epp_registrations}) {
      for (auto& registration : module()) all.push_back(std::move(registration));
    }
    return all;
  }();
  return registry;
}

std::vector<std::string> planner_names() {
  std::vector<std::string> names;
  for (const auto& registration : planner_registry()) names.push_back(registration.name);
  return names;
}

std::unique_ptr<Planner> make_planner(std::string_view strategy, const ResolvedScenario& scenario) {
  if (scenario.part != ScenarioPart::Full) {
    throw std::logic_error(fmt::format("make_planner: {} is not fully resolved", scenario.source));
  }
  for (const auto& registration : planner_registry()) {
    if (registration.name == strategy) return registration.make(scenario);
  }
  scenario.where().fail("plan.strategy", fmt::format("unknown strategy {} (known: {})", quote_string(strategy),
                                                     fmt::join(planner_names(), ", ")));
}

}  // namespace eppsim
