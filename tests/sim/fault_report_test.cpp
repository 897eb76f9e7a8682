// The report of a run with simulated faults (sim/fault_report.h): the slowdown
// against the healthy run, and an incomplete step reported without a step time.
#include "sim/fault_report.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/compare.h"
#include "sim/run.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

// scenarios/faults.textproto with its node failure moved to `node_failure_at`.
ResolvedScenario faults_scenario(const std::string& node_failure_at) {
  std::ifstream in(fs::path(EPPSIM_SOURCE_DIR) / "scenarios" / "faults.textproto");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "at: \"60s\" node_failure";
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos);
  text.replace(at, from.size(), "at: \"" + node_failure_at + "\" node_failure");
  return resolve_full(parse_scenario(text, "faults.textproto", fs::path(EPPSIM_SOURCE_DIR) / "scenarios"));
}

TEST(FaultReport, ACompletedStepGivesItsSlowdownAgainstTheHealthyOne) {
  const auto result = run_scenario(faults_scenario("60s"));
  const auto& r = result.report;
  ASSERT_TRUE(r.has_faults());
  const auto& f = r.faults();
  EXPECT_TRUE(f.step_completed());
  ASSERT_TRUE(r.has_step_time_s());
  EXPECT_GT(f.healthy_step_time_s(), 0.0);
  EXPECT_NEAR(f.slowdown(), r.step_time_s() / f.healthy_step_time_s(), 1e-12);
  EXPECT_GT(f.slowdown(), 1.0);  // a straggler and a degraded NIC cost time
  ASSERT_EQ(f.injected_size(), 3);
  // In time order: the link at 0, the straggler at 100 ms, the node failure after the step.
  EXPECT_EQ(f.injected(0).kind(), "link_degraded");
  EXPECT_EQ(f.injected(1).kind(), "straggler");
  EXPECT_TRUE(f.injected(1).struck());
  EXPECT_THAT(f.injected(1).ranks(), ::testing::ElementsAre(1u));
  EXPECT_EQ(f.injected(2).kind(), "node_failure");
  EXPECT_FALSE(f.injected(2).struck());
  EXPECT_THAT(human_summary(result), HasSubstr("after the step ended: no effect"));
}

TEST(FaultReport, AnIncompleteStepHasNoStepTimeThroughputOrMfu) {
  const auto scenario = faults_scenario("500ms");
  const auto result = run_scenario(scenario);
  const auto& r = result.report;
  EXPECT_FALSE(r.has_step_time_s());
  EXPECT_FALSE(r.has_tokens_per_s());
  EXPECT_FALSE(r.has_mfu());
  const auto& f = r.faults();
  EXPECT_FALSE(f.step_completed());
  EXPECT_FALSE(f.has_slowdown());
  EXPECT_DOUBLE_EQ(f.stopped_at_s(), 0.5);
  EXPECT_THAT(f.stop_reason(), HasSubstr("node 1 fails at 500 ms: its ranks 4, 5, 6, 7 stop"));
  EXPECT_GT(f.ops_done_fraction(), 0.0);
  EXPECT_LT(f.ops_done_fraction(), 1.0);
  EXPECT_GT(f.unfinished_size(), 0);
  const std::string summary = human_summary(result);
  EXPECT_THAT(summary, HasSubstr("STEP DID NOT COMPLETE: stopped at 500 ms"));
  EXPECT_THAT(summary, ::testing::Not(HasSubstr("step time")));
  EXPECT_THAT(summary, ::testing::Not(HasSubstr("tokens/s")));
  // compare lists such a strategy with the failures, saying why.
  const auto comparison = compare_strategies(scenario, {"packed-1f1b"});
  ASSERT_EQ(comparison.comparison.failures_size(), 1);
  EXPECT_THAT(comparison.comparison.failures(0).message(), HasSubstr("did not complete under the scenario's faults"));
}

}  // namespace
}  // namespace eppsim
