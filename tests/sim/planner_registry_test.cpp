#include "sim/plan/planner_registry.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "sim/plan/planner.h"
#include "test_scenarios.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;

const std::string kScenario = testing::test_scenario_text(2, 8, R"(name: "r"
    model { preset: "llama2-7b" }
    workload { lengths { fixed: 4096 } global_batch: 16 max_length: 8192 }
    plan {
      strategy: "magic"
      packed_1f1b { pipeline_stages: 2 micro_batch_tokens: 8192 }
    })");

TEST(PlannerRegistry, NamesInTheirStableOrder) {
  EXPECT_THAT(planner_names(), ElementsAre("packed-1f1b", "ulysses", "ulysses-adaptive", "seq1f1b", "flexsp", "epp",
                                           "epp-no-ckpt", "epp-full-ckpt", "epp-even-split", "epp-flex"));
  std::vector<std::string> registered;
  for (const auto& registration : planner_registry()) registered.push_back(registration.name);
  EXPECT_EQ(registered, planner_names());
}

TEST(PlannerRegistry, EveryNameBuildsItsPlanner) {
  const auto scenario = resolve_full(parse_scenario(kScenario, "s.textproto", "."));
  for (const auto& name : planner_names()) {
    const auto planner = make_planner(name, scenario);
    ASSERT_NE(planner, nullptr) << name;
    EXPECT_EQ(planner->name(), name);
  }
}

TEST(PlannerRegistry, UnknownNameListsTheKnownOnes) {
  EXPECT_EQ(testing::planner_error(kScenario),
            "s.textproto:6: plan.strategy: unknown strategy \"magic\" (known: packed-1f1b, ulysses, ulysses-adaptive, "
            "seq1f1b, flexsp, epp, epp-no-ckpt, epp-full-ckpt, epp-even-split, epp-flex)");
  EXPECT_THAT(testing::planner_error(kScenario, {"plan.strategy=warp"}),
              ::testing::EndsWith("epp-flex) (set by --set plan.strategy=warp)"));
  EXPECT_EQ(testing::planner_error(kScenario, {"plan.strategy=packed-1f1b"}), "");
}

TEST(PlannerRegistry, NeedsTheFullScenario) {
  const auto simulation = resolve_simulation_part(parse_scenario(kScenario, "s.textproto", "."));
  EXPECT_THROW(make_planner("packed-1f1b", simulation), std::logic_error);
}

}  // namespace
}  // namespace eppsim
