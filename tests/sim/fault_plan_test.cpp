// Simulated faults in both engines (sim/engine/fault_plan.h): stragglers,
// degraded and failed links, failed nodes, and the checks that need the
// schedule and the topology.
#include "sim/engine/fault_plan.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "sim/engine/analytic_engine.h"
#include "sim/engine/flow_engine.h"
#include "tests/sim/flow_fixture.h"
#include "tests/schedule/schedule_fixture.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using testing::FlowCluster;
using testing::HandSchedule;

using testing::kNic;
using testing::kNvlink;
const FieldLocator kWhere("f.textproto");

FaultSpec straggler(std::uint32_t rank, double slowdown, double at_s) {
  FaultSpec f;
  f.kind = FaultKind::Straggler;
  f.rank = rank;
  f.factor = slowdown;
  f.at = Seconds(at_s);
  return f;
}

FaultSpec link_fault(FaultKind kind, std::string a, std::string b, double factor, double at_s) {
  FaultSpec f;
  f.kind = kind;
  f.link = {std::move(a), std::move(b)};
  f.factor = factor;
  f.at = Seconds(at_s);
  return f;
}

FaultSpec node_failure(std::uint32_t node, double at_s) {
  FaultSpec f;
  f.kind = FaultKind::NodeFailure;
  f.node = node;
  f.at = Seconds(at_s);
  return f;
}

// Both engines on `cluster` with `faults`: {analytic, flow}.
std::vector<proto::Trace> run_both(const proto::Schedule& schedule, const FlowCluster& cluster,
                                   const std::vector<FaultSpec>& faults) {
  const FaultPlan plan = make_fault_plan(faults, schedule.num_ranks(), cluster.placement, kWhere);
  AnalyticEngineOptions options;
  options.node_of_rank = cluster.placement.node_of_rank;
  options.faults = &plan;
  EngineContext context = cluster.context();
  context.faults = &plan;
  return {run_analytic(schedule, *cluster.cost, options), run_flow(schedule, context)};
}

// Rank 0 computes `ops` forwards of 1 ms each (flow_fixture's RoutedTestCost).
HandSchedule compute_only(std::uint32_t ops) {
  HandSchedule h(1);
  for (std::uint32_t i = 0; i < ops; ++i) h.compute(0, 0);
  return h;
}

TEST(FaultPlan, AStragglerStretchesComputeFromItsTimeOn) {
  const FlowCluster cluster(testing::simple_topology(1, 1, kNvlink, kNic));
  const FaultPlan plan = make_fault_plan(std::vector{straggler(0, 3.0, 0.5)}, 1, cluster.placement, kWhere);
  EXPECT_DOUBLE_EQ(plan.compute_time_s(0, 0.0, 0.25), 0.25);        // before it
  EXPECT_DOUBLE_EQ(plan.compute_time_s(0, 0.0, 1.0), 0.5 + 0.5 * 3);  // across it: prorated
  EXPECT_DOUBLE_EQ(plan.compute_time_s(0, 1.0, 1.0), 3.0);            // after it
  // A later straggler on the same rank sets a new factor from its time on.
  const FaultPlan two = make_fault_plan(std::vector{straggler(0, 2.0, 0.0), straggler(0, 4.0, 1.0)}, 1, cluster.placement, kWhere);
  EXPECT_DOUBLE_EQ(two.compute_time_s(0, 0.0, 1.0), 1.0 + 0.5 * 4);
}

TEST(FaultPlan, AStragglerFromTheStartDoublesACompute_OnlyStep) {
  const FlowCluster cluster(testing::simple_topology(1, 1, kNvlink, kNic));
  const auto schedule = compute_only(3).schedule();
  for (const auto& trace : run_both(schedule, cluster, {straggler(0, 2.0, 0.0)})) {
    EXPECT_FALSE(trace.has_incomplete()) << trace.engine();
    EXPECT_EQ(trace.step_time_ns(), 6'000'000) << trace.engine();
  }
}

TEST(FaultPlan, AStragglerFromMidStepProratesTheOpItHits) {
  // Ops of 1 ms: the second runs 0.5 ms at full speed, then 0.5 ms of work at
  // half speed (1 ms); the third takes 2 ms.
  const FlowCluster cluster(testing::simple_topology(1, 1, kNvlink, kNic));
  const auto schedule = compute_only(3).schedule();
  for (const auto& trace : run_both(schedule, cluster, {straggler(0, 2.0, 1.5e-3)})) {
    EXPECT_EQ(trace.step_time_ns(), 4'500'000) << trace.engine();
    ASSERT_EQ(events_of(trace).size(), 3);
    EXPECT_EQ(events_of(trace)[1].end_ns(), 2'500'000) << trace.engine();
  }
}

TEST(FaultPlan, ADegradedLinkSlowsATransferFromItsTimeOn) {
  // 100 MB over chip 0's 50 GB/s NIC: 4 us + 2 ms alone. At 1 ms, the link
  // drops to half: the 1.004 ms of work left takes 2.008 ms.
  const FlowCluster cluster(testing::simple_topology(2, 1, kNvlink, kNic));
  HandSchedule h(2);
  h.send(0, 1, 1, 100'000'000, 0);
  h.recv(1, 1, 0, 100'000'000, 0);
  for (const auto& trace :
       run_both(h.schedule(), cluster, {link_fault(FaultKind::LinkDegraded, "chip0", "leaf0", 0.5, 1e-3)})) {
    EXPECT_NEAR(static_cast<double>(trace.step_time_ns()), 3'008'000.0, 2.0) << trace.engine();
  }
  // The same fault after the transfer changes nothing.
  for (const auto& trace :
       run_both(h.schedule(), cluster, {link_fault(FaultKind::LinkDegraded, "chip0", "leaf0", 0.5, 5e-3)})) {
    EXPECT_NEAR(static_cast<double>(trace.step_time_ns()), 2'004'000.0, 2.0) << trace.engine();
  }
}

TEST(FaultPlan, ANodeFailureStopsTheStepAtItsTime) {
  // Rank 0 computes 3 ms, then sends to rank 1 on node 1, which fails at 1.5 ms.
  const FlowCluster cluster(testing::simple_topology(2, 1, kNvlink, kNic));
  HandSchedule h(2);
  h.compute(0, 0);
  h.compute(0, 0);
  h.compute(0, 0);
  h.send(0, 1, 1, 1'000'000, 0, {2});
  h.recv(1, 1, 0, 1'000'000, 0);
  for (const auto& trace : run_both(h.schedule(), cluster, {node_failure(1, 1.5e-3)})) {
    ASSERT_TRUE(trace.has_incomplete()) << trace.engine();
    const auto& incomplete = trace.incomplete();
    EXPECT_EQ(incomplete.stopped_ns(), 1'500'000) << trace.engine();
    EXPECT_THAT(incomplete.reason(), HasSubstr("node 1 fails at 1.5 ms: its ranks 1 stop"));
    EXPECT_EQ(incomplete.ops_done(), 1u) << trace.engine();
    EXPECT_EQ(incomplete.ops_total(), 5u);
    EXPECT_THAT(incomplete.unfinished(), ::testing::Contains(HasSubstr("rank 0 op 1 (stream compute): running since")));
    EXPECT_THAT(incomplete.unfinished(), ::testing::Contains(HasSubstr("rank 1 op 0 (recv from rank 0, tag 0, 1000000 bytes, stream comm): waiting for rank 0's send")));
  }
}

TEST(FaultPlan, ALinkFailureThatCutsRanksOffIsFatal) {
  // One chip per node: chip 1's NIC is its only way out.
  const FlowCluster cluster(testing::simple_topology(2, 1, kNvlink, kNic));
  HandSchedule h(2);
  h.compute(0, 0);
  h.send(0, 1, 1, 1'000'000, 0, {0});
  h.recv(1, 1, 0, 1'000'000, 0);
  const std::vector faults{link_fault(FaultKind::LinkFailure, "chip1", "leaf0", 0.0, 0.5e-3)};
  const FaultPlan plan = make_fault_plan(faults, 2, cluster.placement, kWhere);
  ASSERT_NE(plan.first_fatal(), nullptr);
  EXPECT_THAT(plan.first_fatal()->reason, HasSubstr("link chip1-leaf0 fails at 500 us: ranks 1 can no longer reach rank 0"));
  for (const auto& trace : run_both(h.schedule(), cluster, faults)) {
    ASSERT_TRUE(trace.has_incomplete()) << trace.engine();
    EXPECT_EQ(trace.incomplete().stopped_ns(), 500'000) << trace.engine();
    EXPECT_EQ(trace.incomplete().ops_done(), 0u) << trace.engine();
  }
}

TEST(FaultPlan, TransfersOverAFailedLinkThatCutsNothingOffStall) {
  // Two chips per node: chip 0 can still reach the others through its node
  // switch, but its transfer was routed over its NIC, which fails at 0.
  const FlowCluster cluster(testing::simple_topology(2, 2, kNvlink, kNic));
  HandSchedule h(4);
  h.compute(1, 0);
  h.send(0, 1, 2, 1'000'000, 0);
  h.recv(2, 1, 0, 1'000'000, 0);
  const std::vector faults{link_fault(FaultKind::LinkFailure, "chip0", "leaf0", 0.0, 0.0)};
  EXPECT_EQ(make_fault_plan(faults, 4, cluster.placement, kWhere).first_fatal(), nullptr);
  for (const auto& trace : run_both(h.schedule(), cluster, faults)) {
    ASSERT_TRUE(trace.has_incomplete()) << trace.engine();
    EXPECT_EQ(trace.incomplete().stopped_ns(), 1'000'000) << trace.engine();  // rank 1's compute was the last to end
    EXPECT_THAT(trace.incomplete().reason(), HasSubstr("transfers stalled on failed links"));
    EXPECT_EQ(trace.incomplete().ops_done(), 1u) << trace.engine();
  }
}

TEST(FaultPlan, ChecksRanksAndLinksAgainstTheScheduleAndTopology) {
  const FlowCluster cluster(testing::simple_topology(2, 1, kNvlink, kNic));
  auto error_of = [&](FaultSpec f) {
    f.index = 3;
    try {
      make_fault_plan(std::vector{f}, 2, cluster.placement, kWhere);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of(straggler(2, 2.0, 0.0)),
              HasSubstr("f.textproto: faults[3].straggler.rank: rank 2 does not exist (the schedule has 2 ranks)"));
  EXPECT_THAT(error_of(link_fault(FaultKind::LinkDegraded, "chip0", "chip1", 0.5, 0.0)),
              HasSubstr("faults[3].link_degraded.link: no live link joins chip0 and chip1"));
  EXPECT_THAT(error_of(link_fault(FaultKind::LinkFailure, "chip0", "spine9", 0.0, 0.0)),
              HasSubstr("faults[3].link_failure.link: "));
}

}  // namespace
}  // namespace eppsim
