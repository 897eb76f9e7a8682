#include "sim/trace_ranks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "sim/run.h"
#include "tests/sim/test_scenarios.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(TraceRanks, ParsesAllAutoAndLists) {
  EXPECT_EQ(parse_trace_ranks("all").mode, TraceRanks::Mode::All);
  EXPECT_EQ(parse_trace_ranks("auto").mode, TraceRanks::Mode::Auto);
  EXPECT_EQ(parse_trace_ranks("0,3-4"), (TraceRanks{TraceRanks::Mode::Listed, "0,3-4"}));
  EXPECT_THROW(parse_trace_ranks(""), InputError);
}

// epp on the quickstart: 2 stages x 8 SP; its groups are the SP groups (8
// ranks) and the stages' gradient groups (8).
TEST(TraceRanks, AutoKeepsARankOfEachStageAndGroupSize) {
  const auto scenario = testing::load_quickstart({"plan.strategy=epp"});
  const auto schedule = plan_scenario(scenario).schedule;
  EXPECT_THAT(ranks_of_interest(schedule, nullptr), ElementsAre(0, 8));
  proto::TraceCoverage coverage;
  const TraceSelection selection = select_trace_ranks({TraceRanks::Mode::Auto, {}}, schedule, nullptr, &coverage);
  EXPECT_THAT(selection.ranks, ElementsAre(0, 8));
  EXPECT_TRUE(selection.slowest_rank);
  EXPECT_EQ(coverage.reason(), "--trace-ranks auto");
}

TEST(TraceRanks, ByDefaultEveryRankUpToANumberOfOpsThenAuto) {
  const auto scenario = testing::load_quickstart({"plan.strategy=epp"});
  const auto schedule = plan_scenario(scenario).schedule;
  std::uint64_t ops = 0;
  for (const auto& program : schedule.programs()) ops += static_cast<std::uint64_t>(program.code_size());
  proto::TraceCoverage coverage;
  const TraceRanks by_default;
  EXPECT_THAT(select_trace_ranks(by_default, schedule, nullptr, &coverage, ops).ranks, IsEmpty());
  EXPECT_FALSE(select_trace_ranks(by_default, schedule, nullptr, &coverage, ops).slowest_rank);
  EXPECT_THAT(select_trace_ranks(by_default, schedule, nullptr, &coverage, ops - 1).ranks, ElementsAre(0, 8));
  EXPECT_THAT(coverage.reason(), HasSubstr(fmt::format("auto by default: the step has {} ops, past {};", ops, ops - 1)));
  EXPECT_THAT(select_trace_ranks({TraceRanks::Mode::All, {}}, schedule, nullptr, &coverage, 0).ranks, IsEmpty());
}

TEST(TraceRanks, AListIsCheckedAgainstTheSchedulesRanks) {
  const auto scenario = testing::load_quickstart({"plan.strategy=epp"});
  const auto schedule = plan_scenario(scenario).schedule;
  proto::TraceCoverage coverage;
  EXPECT_THAT(select_trace_ranks({TraceRanks::Mode::Listed, "5,1-2"}, schedule, nullptr, &coverage).ranks,
              ElementsAre(1, 2, 5));
  EXPECT_EQ(coverage.reason(), "--trace-ranks 5,1-2");
  try {
    select_trace_ranks({TraceRanks::Mode::Listed, "3,16"}, schedule, nullptr, &coverage);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--trace-ranks 3,16: there are ranks 0 to 15"));
  }
}

// The report is that of the whole trace whichever ranks it keeps.
TEST(TraceRanks, TheReportCoversEveryRankWhicheverRanksTheTraceKeeps) {
  const auto scenario = testing::load_quickstart({"plan.strategy=epp"});
  const RunResult all = run_scenario(scenario, TraceDetail{true, {TraceRanks::Mode::All, {}}});
  RunResult some = run_scenario(scenario, TraceDetail{true, {TraceRanks::Mode::Listed, "3"}});
  ASSERT_TRUE(some.report.has_trace_ranks());
  EXPECT_THAT(some.report.trace_ranks().ranks(), ElementsAre(3));
  EXPECT_THAT(human_summary(some), HasSubstr("  trace        op events of 1 of 16 ranks (--trace-ranks 3): 3\n"));
  EXPECT_FALSE(all.report.has_trace_ranks());
  some.report.clear_trace_ranks();
  EXPECT_EQ(some.report.SerializeAsString(), all.report.SerializeAsString());
}

}  // namespace
}  // namespace eppsim
