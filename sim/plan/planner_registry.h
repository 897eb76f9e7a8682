#pragma once
// The strategies a scenario may name. Each planner registers its name(s), the
// resolution of its options and its factory: the options are read from the
// scenario's plan block and checked ONCE, into a typed options struct that the
// factory receives, with errors located by the scenario's FieldLocator
// ("s.textproto:18: plan.epp.sp_degree: must divide ..."). run, plan and
// compare all build their planners here.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/plan/planner.h"
#include "scenario/scenario.h"

namespace eppsim {

struct PlannerRegistration {
  std::string name;
  // Resolves and checks the scenario's options for this strategy, then builds
  // the planner; throws InputError naming file, line, field, rule and --set.
  std::function<std::unique_ptr<Planner>(const ResolvedScenario&)> make;
};

// A registration from a typed resolution and a factory over its result.
template <typename Options, typename Factory>
PlannerRegistration register_planner(std::string name, Options (*resolve)(const ResolvedScenario&), Factory factory) {
  return PlannerRegistration{
      std::move(name), [resolve, factory = std::move(factory)](const ResolvedScenario& scenario) -> std::unique_ptr<Planner> {
        return factory(resolve(scenario));
      }};
}

// Every registered strategy, in a stable order (that of planner_names()).
std::span<const PlannerRegistration> planner_registry();

// Each planner module's registrations (defined next to the planner).
std::vector<PlannerRegistration> packed_1f1b_registrations();
std::vector<PlannerRegistration> ulysses_registrations();
std::vector<PlannerRegistration> seq1f1b_registrations();
std::vector<PlannerRegistration> flexsp_registrations();
std::vector<PlannerRegistration> epp_registrations();

}  // namespace eppsim
