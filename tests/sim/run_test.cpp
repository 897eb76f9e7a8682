// The main flow as a library (sim/run.h): what each step needs of the scenario.
#include "sim/run.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/errors.h"
#include "traces/scenario.h"

namespace eppsim {
namespace {

// `eppsim sim SCHEDULE --cluster SCENARIO` resolves the cluster, model and
// cost model only: a plan or workload block it cannot use does not stop it.
TEST(Run, SimulatesAScheduleWithoutAPlan) {
  const std::vector<std::string> small = {"workload.global_batch=16"};
  const auto planned = plan_scenario(load_embedded_quickstart(small));
  const auto reference = run_scenario(load_embedded_quickstart(small));

  const std::vector<std::string> broken_plan = {"plan.strategy=magic", "plan.zero_stage=9", "plan.memory_fraction=7",
                                                "plan.packed_1f1b.pipeline_stages=0", "workload.global_batch=0"};
  const auto cluster = resolve_simulation_part(parse_embedded_quickstart(broken_plan));
  const auto run = simulate_schedule(planned.schedule, cluster, 0.0);
  EXPECT_EQ(run.report.step_time_s(), reference.report.step_time_s());
  EXPECT_EQ(run.report.strategy(), "packed-1f1b");
  // Planning still needs everything.
  EXPECT_THROW(resolve_full(parse_embedded_quickstart(broken_plan)), InputError);
}

}  // namespace
}  // namespace eppsim
