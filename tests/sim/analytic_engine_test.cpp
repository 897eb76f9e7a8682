#include "sim/engine/analytic_engine.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/plan/planner.h"
#include "sim/plan/schedule_builder.h"
#include "test_scenarios.h"
#include "schedule/program_ops.h"
#include "schedule/trace_events.h"

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
  // Every compute op's work is in the table, and the duration depends on the work alone.
  for (auto& c : *schedule->mutable_shared_computes()) {
    c.set_estimated_duration_ns(c.phase() == proto::FORWARD ? forward_ns : c.phase() == proto::BACKWARD ? backward_ns : 0);
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
  ASSERT_EQ(events_of(trace).size(), 3);
  EXPECT_EQ(events_of(trace)[2].rank(), 1u);
  EXPECT_EQ(events_of(trace)[2].end_ns(), 500'000'000);
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

// Shared endpoints. Links of 1 GB/s without latency: a transfer of 1e9 bytes
// takes one second alone.
testing::UniformNetworkCost gigabyte_network(std::uint32_t ranks) {
  return testing::UniformNetworkCost(LinkParams{BytesPerSecond(1e9), Seconds(0.0)}, ranks);
}

AnalyticEngineOptions on_nodes(const std::vector<std::uint32_t>& node_of_rank, bool share = true) {
  AnalyticEngineOptions options;
  options.node_of_rank = node_of_rank;
  options.share_endpoints = share;
  return options;
}

std::int64_t end_ns(const proto::Trace& trace, std::uint32_t rank, std::uint32_t op) {
  for (const OpEventRef e : events_of(trace)) {
    if (e.rank() == rank && e.op() == op) return e.end_ns();
  }
  ADD_FAILURE() << "no event for rank " << rank << " op " << op;
  return -1;
}

proto::ComputeOp fixed_compute(std::int64_t ns) {
  proto::ComputeOp work;
  work.set_phase(proto::FORWARD);
  work.set_estimated_duration_ns(ns);
  return work;
}

// `copies` all-gathers of 64 MB over ranks 0-3, each on its own stream and group.
proto::Schedule concurrent_all_gathers(std::uint32_t copies) {
  ScheduleBuilder b(4, "t", "hand");
  for (std::uint32_t c = 0; c < copies; ++c) {
    const auto stream = b.stream(fmt::format("comm{}", c));
    const auto group = b.add_group(fmt::format("g{}", c), {0, 1, 2, 3});
    for (std::uint32_t r = 0; r < 4; ++r) b.collective(r, stream, {}, proto::ALL_GATHER, group, 64'000'000);
  }
  return b.finish();
}

TEST(SharedEndpoints, TwoConcurrentAllGathersOnTheSameRanksTakeTwiceOne) {
  const std::vector<std::uint32_t> one_node(4, 0), own_nodes{0, 1, 2, 3};
  for (const auto& nodes : {one_node, own_nodes}) {
    const auto one = run_analytic(concurrent_all_gathers(1), gigabyte_network(4), on_nodes(nodes));
    const auto two = run_analytic(concurrent_all_gathers(2), gigabyte_network(4), on_nodes(nodes));
    ASSERT_GT(one.step_time_ns(), 0);
    EXPECT_EQ(two.step_time_ns(), 2 * one.step_time_ns());
    // Without sharing, each would have the ports to itself.
    const auto apart = run_analytic(concurrent_all_gathers(2), gigabyte_network(4), on_nodes(nodes, false));
    EXPECT_EQ(apart.step_time_ns(), one.step_time_ns());
  }
}

TEST(SharedEndpoints, UnrelatedTransfersDoNotSlowEachOther) {
  // 0 -> 1 and 2 -> 3 share no rank; 1 -> 0 uses the other direction of 0's and 1's ports.
  ScheduleBuilder b(4, "t", "hand");
  const auto s = b.stream("comm"), back = b.stream("back");
  b.send(0, s, {}, 1, 1'000'000'000, 0);
  b.recv(1, s, {}, 0, 1'000'000'000, 0);
  b.send(2, s, {}, 3, 1'000'000'000, 0);
  b.recv(3, s, {}, 2, 1'000'000'000, 0);
  b.send(1, back, {}, 0, 1'000'000'000, 1);
  b.recv(0, back, {}, 1, 1'000'000'000, 1);
  const auto trace = run_analytic(b.finish(), gigabyte_network(4), on_nodes({0, 1, 2, 3}));
  EXPECT_EQ(trace.step_time_ns(), 1'000'000'000);
  for (const OpEventRef e : events_of(trace)) EXPECT_EQ(e.end_ns(), 1'000'000'000) << "rank " << e.rank() << " op " << e.op();
}

// ZeRO-3 prefetch: the next layer's parameters all-gathered on one stream while
// the sequence-parallel all-to-all runs on another, over the same ranks.
TEST(SharedEndpoints, PrefetchAllGatherBesideAnAllToAllSlowsBoth) {
  const auto build = [](bool gather, bool exchange) {
    ScheduleBuilder b(4, "t", "hand");
    const auto prefetch = b.stream("prefetch"), sp = b.stream("sp");
    const auto params = b.add_group("zero3", {0, 1, 2, 3});
    const auto seq = b.add_group("sp", {0, 1, 2, 3});
    for (std::uint32_t r = 0; r < 4; ++r) {
      if (gather) b.collective(r, prefetch, {}, proto::ALL_GATHER, params, 40'000'000);
      if (exchange) b.collective(r, sp, {}, proto::ALL_TO_ALL, seq, 200'000'000);
    }
    return b.finish();
  };
  const std::vector<std::uint32_t> nodes{0, 1, 2, 3};
  const auto gather_alone = run_analytic(build(true, false), gigabyte_network(4), on_nodes(nodes)).step_time_ns();
  const auto exchange_alone = run_analytic(build(false, true), gigabyte_network(4), on_nodes(nodes)).step_time_ns();
  ASSERT_LT(gather_alone, exchange_alone);
  const auto both = run_analytic(build(true, true), gigabyte_network(4), on_nodes(nodes));
  // Half speed each until the all-gather is done, then the all-to-all alone.
  EXPECT_EQ(end_ns(both, 0, 0), 2 * gather_alone);
  EXPECT_EQ(end_ns(both, 0, 1), gather_alone + exchange_alone);
}

TEST(SharedEndpoints, AnActivityStartingHalfwayThroughAnother) {
  // 0 -> 1 (one second alone) from t = 0; 0 -> 2 (one second alone) from
  // t = 0.5, once rank 0's compute is done; both leave through rank 0's NIC.
  // Until 0.5 the first runs alone (half done), then each at half speed: the
  // first ends at 0.5 + 0.5 / 0.5 = 1.5, when the second has done 0.5 and
  // finishes the rest alone by 2.0.
  ScheduleBuilder b(3, "t", "hand");
  const auto first = b.stream("first"), second = b.stream("second");
  b.send(0, first, {}, 1, 1'000'000'000, 0);
  b.recv(1, first, {}, 0, 1'000'000'000, 0);
  const auto compute = b.compute(0, second, {}, fixed_compute(500'000'000));
  const std::array<OpIndex, 1> after{compute};
  b.send(0, second, after, 2, 1'000'000'000, 0);
  b.recv(2, second, {}, 0, 1'000'000'000, 0);
  const auto trace = run_analytic(testing::with_planner_estimates(b.finish()), gigabyte_network(3), on_nodes({0, 1, 2}));
  EXPECT_EQ(end_ns(trace, 0, 0), 1'500'000'000);
  EXPECT_EQ(end_ns(trace, 1, 0), 1'500'000'000);
  EXPECT_EQ(end_ns(trace, 0, 2), 2'000'000'000);
  EXPECT_EQ(end_ns(trace, 2, 0), 2'000'000'000);
}

TEST(SharedEndpoints, AnActivityHeldBackElsewhereGivesItsShareBack) {
  // A: 0 -> 1 and B: 0 -> 2 share rank 0's egress; B, C: 3 -> 2 and D: 4 -> 2
  // share rank 2's ingress, which holds each of them to 1/3. Max-min fairness
  // gives A the 2/3 of rank 0's egress that B leaves, not 1/2: A (one second
  // alone) ends at 1.5 s. B, C and D keep 1/3 and end at 3 s.
  ScheduleBuilder b(5, "t", "hand");
  const auto s = b.stream("comm");
  const std::array<std::pair<std::uint32_t, std::uint32_t>, 4> flows{{{0, 1}, {0, 2}, {3, 2}, {4, 2}}};
  const auto other = b.stream("other");
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const auto [src, dst] = flows[i];
    // A second flow on a rank goes on another stream so that all four start at once.
    const bool again = i == 1;
    b.send(src, again ? other : s, {}, dst, 1'000'000'000, static_cast<std::uint32_t>(i));
    b.recv(dst, dst == 2 && i > 1 ? b.stream(fmt::format("in{}", i)) : s, {}, src, 1'000'000'000,
           static_cast<std::uint32_t>(i));
  }
  const auto trace = run_analytic(b.finish(), gigabyte_network(5), on_nodes({0, 1, 2, 3, 4}));
  EXPECT_EQ(end_ns(trace, 0, 0), 1'500'000'000);  // A
  EXPECT_EQ(end_ns(trace, 0, 1), 3'000'000'000);  // B
  EXPECT_EQ(end_ns(trace, 3, 0), 3'000'000'000);  // C
  EXPECT_EQ(end_ns(trace, 4, 0), 3'000'000'000);  // D
}

TEST(SharedEndpoints, NvlinkTrafficDoesNotSlowNicTraffic) {
  // Ranks 0, 1 on node 0, rank 2 on node 1: 0 -> 1 leaves rank 0 through
  // NVLink, 0 -> 2 through its NIC; each takes its time alone.
  const auto build = [](bool nvlink, bool nic) {
    ScheduleBuilder b(3, "t", "hand");
    const auto a = b.stream("a"), c = b.stream("c");
    if (nvlink) {
      b.send(0, a, {}, 1, 1'000'000'000, 0);
      b.recv(1, a, {}, 0, 1'000'000'000, 0);
    }
    if (nic) {
      b.send(0, c, {}, 2, 1'000'000'000, 1);
      b.recv(2, c, {}, 0, 1'000'000'000, 1);
    }
    return b.finish();
  };
  const std::vector<std::uint32_t> nodes{0, 0, 1};
  const auto both = run_analytic(build(true, true), gigabyte_network(3), on_nodes(nodes));
  EXPECT_EQ(end_ns(both, 1, 0), 1'000'000'000);
  EXPECT_EQ(end_ns(both, 2, 0), 1'000'000'000);
  // The same two transfers with every rank on its own node share rank 0's NIC.
  const auto apart = run_analytic(build(true, true), gigabyte_network(3), on_nodes({0, 1, 2}));
  EXPECT_EQ(apart.step_time_ns(), 2'000'000'000);
}

TEST(SharedEndpoints, OnlyHierarchicalCollectivesAcrossNodesUseNvlinkToo) {
  // Ranks 0, 1 on node 0 and 2, 3 on node 1: an all-reduce over all four beside
  // a transfer 0 -> 1 over NVLink. Its NIC-bound algorithms leave NVLink to the
  // transfer; a hierarchical one shares NVLink with it.
  const auto build = [](proto::CollectiveAlgorithm algorithm) {
    ScheduleBuilder b(4, "t", "hand");
    const auto a = b.stream("a"), c = b.stream("c");
    const auto all = b.add_group("all", {0, 1, 2, 3});
    for (std::uint32_t r = 0; r < 4; ++r) b.collective(r, c, {}, proto::ALL_REDUCE, all, 4'000'000'000, algorithm);
    b.send(0, a, {}, 1, 1'000'000'000, 0);
    b.recv(1, a, {}, 0, 1'000'000'000, 0);
    return b.finish();
  };
  const std::vector<std::uint32_t> nodes{0, 0, 1, 1};
  for (const auto algorithm : {proto::ALGORITHM_AUTO, proto::RING}) {
    EXPECT_EQ(end_ns(run_analytic(build(algorithm), gigabyte_network(4), on_nodes(nodes)), 1, 1), 1'000'000'000);
  }
  EXPECT_EQ(end_ns(run_analytic(build(proto::HIERARCHICAL), gigabyte_network(4), on_nodes(nodes)), 1, 1),
            2'000'000'000);
}

TEST(SharedEndpoints, FixedDurationsAreNotShared) {
  // Two measured transfers out of rank 0 keep their recorded times.
  ScheduleBuilder b(3, "t", "hand");
  const auto s = b.stream("s"), t = b.stream("t");
  b.send(0, s, {}, 1, 1'000'000'000, 0);
  b.recv(1, s, {}, 0, 1'000'000'000, 0);
  b.send(0, t, {}, 2, 1'000'000'000, 0);
  b.recv(2, t, {}, 0, 1'000'000'000, 0);
  auto schedule = b.finish();
  for (const std::uint32_t r : {0u, 1u, 2u}) {
    auto& program = *schedule.mutable_programs(static_cast<int>(r));
    for (std::uint32_t i = 0; i < ops_of(program).size(); ++i) set_duration(program, i, proto::DURATION_FIXED, 700'000'000);
  }
  const auto trace = run_analytic(schedule, gigabyte_network(3), on_nodes({0, 1, 2}));
  EXPECT_EQ(trace.step_time_ns(), 700'000'000);
}

TEST(SharedEndpoints, TooFewNodesIsAnError) {
  EXPECT_THROW(run_analytic(concurrent_all_gathers(1), gigabyte_network(4), on_nodes({0, 0})), std::invalid_argument);
}

}  // namespace
}  // namespace eppsim
