#include "sim/engine/analytic_engine.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/plan/planner.h"
#include "sim/plan/schedule_builder.h"
#include "test_scenarios.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

// A network where communication costs nothing (compute: the planner's estimates,
// fixed by testing::with_planner_estimates).
testing::UniformNetworkCost free_network(std::uint32_t ranks) {
  return testing::UniformNetworkCost(LinkParams{BytesPerSecond(std::numeric_limits<double>::infinity()), Seconds(0.0)}, ranks);
}

testing::UniformNetworkCost slow_network(std::uint32_t ranks) {
  return testing::UniformNetworkCost(LinkParams{BytesPerSecond(1e9), Seconds(1e-6)}, ranks);
}

// Gives every forward `forward_ns`, every backward `backward_ns`, the optimizer nothing.
void set_durations(proto::Schedule* schedule, std::int64_t forward_ns, std::int64_t backward_ns) {
  for (auto& program : *schedule->mutable_programs()) {
    for (auto& op : *program.mutable_ops()) {
      if (!op.has_compute()) continue;
      auto* c = op.mutable_compute();
      c->set_estimated_duration_ns(c->phase() == proto::FORWARD ? forward_ns : c->phase() == proto::BACKWARD ? backward_ns : 0);
    }
  }
}

class TextbookOneFOneB : public ::testing::TestWithParam<std::tuple<std::uint32_t, std::uint32_t>> {};

// m equal micro-batches on p stages with free communication take (m + p - 1)(t_f + t_b).
TEST_P(TextbookOneFOneB, StepTimeMatchesTheClosedForm) {
  const auto [stages, micro_batches] = GetParam();
  const auto scenario = testing::fixed_length_scenario(1, stages, stages, micro_batches, 1024, 1024);
  auto schedule = make_planner("packed-1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>(micro_batches, 1024));
  ASSERT_EQ(schedule.summary().micro_batches(), micro_batches);
  const std::int64_t tf = 1'000'000, tb = 2'000'000;
  set_durations(&schedule, tf, tb);
  const auto trace = run_analytic(testing::with_planner_estimates(schedule), free_network(stages));
  EXPECT_EQ(trace.step_time_ns(), static_cast<std::int64_t>(micro_batches + stages - 1) * (tf + tb));
}

INSTANTIATE_TEST_SUITE_P(StagesAndMicroBatches, TextbookOneFOneB,
                         ::testing::Values(std::make_tuple(2u, 1u), std::make_tuple(2u, 4u), std::make_tuple(4u, 2u),
                                           std::make_tuple(4u, 4u), std::make_tuple(4u, 16u), std::make_tuple(8u, 8u),
                                           std::make_tuple(8u, 32u), std::make_tuple(3u, 5u)));

TEST(AnalyticEngine, CommunicationStretchesThePipeline) {
  const auto scenario = testing::fixed_length_scenario(1, 4, 4, 8, 1024, 1024);
  auto schedule = make_planner("packed-1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>(8, 1024));
  set_durations(&schedule, 1'000'000, 2'000'000);
  const auto free = run_analytic(testing::with_planner_estimates(schedule), free_network(4));
  const auto slow = run_analytic(testing::with_planner_estimates(schedule), slow_network(4));
  EXPECT_GT(slow.step_time_ns(), free.step_time_ns());
}

TEST(AnalyticEngine, StreamsOverlap) {
  ScheduleBuilder b(2, "t", "hand");
  const auto compute = b.stream("compute");
  const auto comm = b.stream("comm");
  proto::ComputeOp work;
  work.set_phase(proto::FORWARD);
  work.set_estimated_duration_ns(1'000'000'000);
  b.compute(0, compute, {}, work);
  b.send(0, comm, {}, 1, 1'000'000'000, 0);  // 1 GB at 1 GB/s: one second, beside the compute
  b.recv(1, comm, {}, 0, 1'000'000'000, 0);
  const auto trace = run_analytic(testing::with_planner_estimates(b.finish()), slow_network(2));
  EXPECT_NEAR(static_cast<double>(trace.step_time_ns()), 1e9 + 1e3, 1.0);
}

TEST(AnalyticEngine, DependenciesOrderOpsAcrossStreams) {
  ScheduleBuilder b(2, "t", "hand");
  const auto compute = b.stream("compute");
  const auto comm = b.stream("comm");
  proto::ComputeOp work;
  work.set_phase(proto::FORWARD);
  work.set_estimated_duration_ns(500'000'000);
  const auto f = b.compute(0, compute, {}, work);
  const std::array<OpIndex, 1> after{f};
  b.send(0, comm, after, 1, 0, 0);
  b.recv(1, comm, {}, 0, 0, 0);
  const auto trace = run_analytic(testing::with_planner_estimates(b.finish()), free_network(2));
  // The receive on rank 1 ends when the data leaves rank 0, after its compute.
  ASSERT_EQ(trace.events_size(), 3);
  EXPECT_EQ(trace.events(2).rank(), 1u);
  EXPECT_EQ(trace.events(2).end_ns(), 500'000'000);
}

TEST(AnalyticEngine, TracksMemoryPerRank) {
  ScheduleBuilder b(1, "t", "hand");
  const auto s = b.stream("compute");
  b.memory(0, s, {}, true, 10, proto::ACTIVATIONS);
  b.memory(0, s, {}, true, 5, proto::ACTIVATIONS);
  b.memory(0, s, {}, false, 10, proto::ACTIVATIONS);
  b.memory(0, s, {}, true, 2, proto::WORKSPACE);
  const auto trace = run_analytic(testing::with_planner_estimates(b.finish()), free_network(1));
  ASSERT_EQ(trace.memory_size(), 4);
  EXPECT_EQ(trace.memory(1).bytes(), 15u);
  EXPECT_EQ(trace.memory(3).bytes(), 7u);
}

TEST(AnalyticEngine, FreeingMoreThanAllocatedIsAnError) {
  ScheduleBuilder b(1, "t", "hand");
  const auto s = b.stream("compute");
  b.memory(0, s, {}, true, 10, proto::ACTIVATIONS);
  b.memory(0, s, {}, false, 11, proto::ACTIVATIONS);
  EXPECT_THROW(run_analytic(testing::with_planner_estimates(b.finish()), free_network(1)), ScheduleMismatch);
}

TEST(AnalyticEngine, DeadlockReportNamesTheBlockedOpsAndTheMismatchedTag) {
  ScheduleBuilder b(2, "t", "hand");
  const auto comm = b.stream("comm");
  b.send(0, comm, {}, 1, 64, 1);
  b.recv(1, comm, {}, 0, 64, 2);
  try {
    run_analytic(testing::with_planner_estimates(b.finish()), free_network(2));
    FAIL() << "expected a deadlock";
  } catch (const ScheduleDeadlock& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("rank 0 op 0 (send to rank 1, tag 1"));
    EXPECT_THAT(what, HasSubstr("rank 1 op 0 (recv from rank 0, tag 2"));
    EXPECT_THAT(what, HasSubstr("posted instead"));
  }
}

TEST(AnalyticEngine, DeadlockReportNamesMissingCollectiveMembers) {
  ScheduleBuilder b(3, "t", "hand");
  const auto comm = b.stream("comm");
  const auto g = b.add_group("all", {0, 1, 2});
  b.collective(0, comm, {}, proto::ALL_REDUCE, g, 1024);
  b.collective(1, comm, {}, proto::ALL_REDUCE, g, 1024);
  b.recv(2, comm, {}, 0, 8, 9);  // rank 2 waits for a send that never comes, before its all-reduce
  b.collective(2, comm, {}, proto::ALL_REDUCE, g, 1024);
  try {
    run_analytic(testing::with_planner_estimates(b.finish()), free_network(3));
    FAIL() << "expected a deadlock";
  } catch (const ScheduleDeadlock& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("rank 0 op 0 (all-reduce on group 0"));
    EXPECT_THAT(what, HasSubstr("waiting for group members 2"));
    EXPECT_THAT(what, HasSubstr("rank 2 op 0 (recv from rank 0, tag 9"));
    EXPECT_THAT(what, HasSubstr("1 further ops wait"));
  }
}

TEST(AnalyticEngine, SizeMismatchIsReported) {
  ScheduleBuilder b(2, "t", "hand");
  const auto comm = b.stream("comm");
  b.send(0, comm, {}, 1, 64, 1);
  b.recv(1, comm, {}, 0, 32, 1);
  EXPECT_THROW(run_analytic(testing::with_planner_estimates(b.finish()), free_network(2)), ScheduleMismatch);
}

TEST(AnalyticEngine, DeadlockReportsAreCappedByTheOptions) {
  ScheduleBuilder b(2, "t", "hand");
  const auto comm = b.stream("comm");
  for (std::uint32_t r = 0; r < 2; ++r) b.recv(r, comm, {}, 1 - r, 8, 0);
  AnalyticEngineOptions options;
  options.max_blocked_ops_reported = 1;
  try {
    run_analytic(testing::with_planner_estimates(b.finish()), free_network(2), options);
    FAIL() << "expected a deadlock";
  } catch (const ScheduleDeadlock& e) {
    EXPECT_THAT(e.what(), HasSubstr("... and 1 more blocked ops"));
  }
}

}  // namespace
}  // namespace eppsim
