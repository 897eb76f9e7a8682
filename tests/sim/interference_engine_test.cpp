// Interference (analytic_engine.h, flow_engine.h): compute slowed beside
// communication, communication slowed beside compute, in both engines. Times
// below are worked out by hand from the model.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "models/network/closed_form_network.h"
#include "sim/engine/analytic_engine.h"
#include "sim/engine/flow_engine.h"
#include "sim/plan/planner.h"
#include "tests/sim/flow_fixture.h"
#include "tests/sim/test_scenarios.h"
#include "tests/schedule/schedule_fixture.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using testing::HandSchedule;

// Optimizer ops take memory_traffic_bytes nanoseconds (1e9 bytes: one
// second); links of 1 GB/s without latency (1e9 bytes: one second).
class TimedCost final : public CostModel {
 public:
  explicit TimedCost(std::uint32_t ranks)
      : network_(LinkParams{BytesPerSecond(1e9), Seconds(0.0)}, LinkParams{BytesPerSecond(1e9), Seconds(0.0)},
                 std::vector<std::uint32_t>(ranks, 0)) {}
  ComputeCost compute_cost(const ComputeWork&) const override { throw std::logic_error("optimizer ops only"); }
  Seconds optimizer_time(Bytes traffic) const override { return Seconds(static_cast<double>(traffic.count) * 1e-9); }
  const NetworkTimeModel& network() const override { return network_; }

 private:
  ClosedFormNetwork network_;
};

// A compute op of `seconds` on `rank`'s stream 0.
std::uint32_t work(HandSchedule& h, std::uint32_t rank, double seconds, std::initializer_list<std::uint32_t> deps = {}) {
  auto optimizer = HandSchedule::forward_layer();
  optimizer.set_phase(proto::OPTIMIZER);
  optimizer.set_memory_traffic_bytes(static_cast<std::uint64_t>(std::llround(seconds * 1e9)));
  return h.compute(rank, 0, deps, optimizer);
}

// Distinct factors per class, so that a test sees which one applied.
Interference factors() {
  Interference in;
  in.enabled = true;
  in.set_constant(TrafficClass::PointToPoint, {1.5, 2.0});
  in.set_constant(TrafficClass::IntraNodeCollective, {1.25, 1.0});
  in.set_constant(TrafficClass::InterNodeCollective, {1.1, 4.0});
  return in;
}

AnalyticEngineOptions with(const Interference& in, std::vector<std::uint32_t>* nodes = nullptr, bool share = true) {
  AnalyticEngineOptions o;
  o.interference = in;
  o.share_endpoints = share;
  if (nodes != nullptr) o.node_of_rank = *nodes;
  return o;
}

double end_s(const proto::Trace& trace, std::uint32_t rank, std::uint32_t op) {
  for (const OpEventRef e : events_of(trace)) {
    if (e.rank() == rank && e.op() == op) return static_cast<double>(e.end_ns()) * 1e-9;
  }
  ADD_FAILURE() << "no event for rank " << rank << " op " << op;
  return -1.0;
}

constexpr double kNs = 1.5e-9;  // the trace's rounding to nanoseconds

// Rank 0 computes 1 s while it sends 0.5 s of data to rank 1.
proto::Schedule compute_beside_transfer(bool fixed_compute = false) {
  HandSchedule h(2);
  work(h, 0, 1.0);
  if (fixed_compute) {
    h.fix_duration(0, 0, 1'000'000'000);
  }
  h.send(0, 1, 1, 500'000'000, 0);
  h.recv(1, 1, 0, 500'000'000, 0);
  return h.schedule();
}

TEST(Interference, ComputeAndTransferSlowEachOther) {
  const TimedCost cost(2);
  const auto schedule = compute_beside_transfer();
  // Disabled: each takes its own time.
  const auto apart = run_analytic(schedule, cost);
  EXPECT_NEAR(end_s(apart, 0, 0), 1.0, kNs);
  EXPECT_NEAR(end_s(apart, 0, 1), 0.5, kNs);
  // Point-to-point: compute at 1/1.5, the transfer at 1/2 while rank 0
  // computes: the transfer's 0.5 s take 1 s; by then the compute did 1/1.5 of
  // its second and finishes the last third at full speed.
  for (const bool share : {true, false}) {
    const auto trace = run_analytic(schedule, cost, with(factors(), nullptr, share));
    EXPECT_NEAR(end_s(trace, 0, 1), 1.0, kNs) << share;
    EXPECT_NEAR(end_s(trace, 0, 0), 1.0 + (1.0 - 1.0 / 1.5), kNs) << share;
  }
}

TEST(Interference, FixedOpsAreNeitherSlowedNorSlowing) {
  const TimedCost cost(2);
  const auto trace = run_analytic(compute_beside_transfer(true), cost, with(factors()));
  EXPECT_NEAR(end_s(trace, 0, 0), 1.0, kNs);
  EXPECT_NEAR(end_s(trace, 0, 1), 0.5, kNs);
}

TEST(Interference, OverlapStartingMidOpChangesTheRateThen) {
  // Rank 0 computes 1 s; rank 1 computes 0.4 s, then receives 0.2 s of data
  // from rank 0: the transfer runs from 0.4 s at 1/2 (rank 0 computes) and
  // ends at 0.8 s; rank 0's compute did 0.4 s of work alone, then 0.4 / 1.5
  // beside the transfer, and finishes the rest alone.
  HandSchedule h(2);
  work(h, 0, 1.0);
  h.send(0, 1, 1, 200'000'000, 0);
  const std::uint32_t first = work(h, 1, 0.4);
  h.recv(1, 1, 0, 200'000'000, 0, {first});
  const TimedCost cost(2);
  const auto trace = run_analytic(h.schedule(), cost, with(factors()));
  EXPECT_NEAR(end_s(trace, 1, 0), 0.4, kNs);
  EXPECT_NEAR(end_s(trace, 0, 1), 0.8, kNs);
  EXPECT_NEAR(end_s(trace, 0, 0), 0.8 + (1.0 - 0.4 - 0.4 / 1.5), kNs);
}

TEST(Interference, CollectivesTakeTheirNodesClass) {
  // Rank 0 computes 1 s beside an all-gather of ranks 0 and 1; the collective
  // is intra-node when both ranks share a node, inter-node otherwise.
  HandSchedule h(2);
  work(h, 0, 1.0);
  const std::uint32_t g = h.group({0, 1});
  h.collective(0, 1, g, 400'000'000, proto::ALL_GATHER);
  h.collective(1, 1, g, 400'000'000, proto::ALL_GATHER);
  const TimedCost cost(2);
  const double d = end_s(run_analytic(h.schedule(), cost), 0, 1);  // the collective alone
  ASSERT_GT(d, 0.05);
  ASSERT_LT(d, 0.5);
  std::vector<std::uint32_t> one_node{0, 0}, two_nodes{0, 1};
  // Intra-node: compute at 1/1.25 while the collective runs, which is not slowed.
  auto trace = run_analytic(h.schedule(), cost, with(factors(), &one_node));
  EXPECT_NEAR(end_s(trace, 0, 1), d, kNs);
  EXPECT_NEAR(end_s(trace, 0, 0), d + (1.0 - d / 1.25), kNs);
  // Inter-node: compute at 1/1.1 throughout (1.1 s); the collective at 1/4
  // until then, the rest at full speed.
  trace = run_analytic(h.schedule(), cost, with(factors(), &two_nodes));
  EXPECT_NEAR(end_s(trace, 0, 0), 1.1, kNs);
  EXPECT_NEAR(end_s(trace, 0, 1), 1.1 + (d - 1.1 / 4.0), kNs);
}

TEST(Interference, SeveralClassesAtOnceTakeTheLargestFactor) {
  // A transfer (1.5) and an intra-node collective (1.25) beside the compute.
  HandSchedule h(2, {"compute", "comm", "coll"});
  work(h, 0, 1.0);
  h.send(0, 1, 1, 100'000'000, 0);
  h.recv(1, 1, 0, 100'000'000, 0);
  const std::uint32_t g = h.group({0, 1});
  h.collective(0, 2, g, 300'000'000, proto::ALL_GATHER);
  h.collective(1, 2, g, 300'000'000, proto::ALL_GATHER);
  Interference in = factors();
  in.by_size[0][0].factors.comm_slowdown = 1.0;  // the transfer keeps its time: 0.1 s
  std::vector<std::uint32_t> one_node{0, 0};
  const TimedCost cost(2);
  const double d = end_s(run_analytic(h.schedule(), cost, with(Interference{}, &one_node, false)), 0, 2);
  ASSERT_GT(d, 0.2);
  ASSERT_LT(d, 0.5);
  const auto trace = run_analytic(h.schedule(), cost, with(in, &one_node, false));
  EXPECT_NEAR(end_s(trace, 0, 1), 0.1, kNs);
  EXPECT_NEAR(end_s(trace, 0, 2), d, kNs);
  EXPECT_NEAR(end_s(trace, 0, 0), d + (1.0 - 0.1 / 1.5 - (d - 0.1) / 1.25), kNs);
}

TEST(Interference, DisabledOrUnitFactorsLeaveThePlannedStepAlone) {
  const auto scenario = testing::fixed_length_scenario(1, 4, 4, 8, 1024, 1024);
  const auto schedule = make_planner("packed-1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>(8, 1024));
  std::vector<std::uint32_t> nodes(4, 0);
  const auto plain = run_analytic(schedule, *scenario.cost.model, with(Interference{}, &nodes));
  Interference disabled = factors();
  disabled.enabled = false;
  EXPECT_EQ(run_analytic(schedule, *scenario.cost.model, with(disabled, &nodes)).SerializeAsString(), plain.SerializeAsString());
  Interference unit;
  unit.enabled = true;
  for (auto& points : unit.by_size) points = {{0.0, {1.0, 1.0}}};
  const auto same = run_analytic(schedule, *scenario.cost.model, with(unit, &nodes));
  ASSERT_EQ(events_of(same).size(), events_of(plain).size());
  for (int i = 0; i < events_of(plain).size(); ++i) {
    EXPECT_NEAR(events_of(same)[i].end_ns(), events_of(plain)[i].end_ns(), 1) << i;
  }
  // Enabled with the defaults, the step only gets longer.
  Interference defaults;
  defaults.enabled = true;
  EXPECT_GT(run_analytic(schedule, *scenario.cost.model, with(defaults, &nodes)).step_time_ns(), plain.step_time_ns());
}

TEST(Interference, StragglersCompose) {
  // Rank 0 is a straggler (2x) from 0.25 s on; its 1 s of compute runs beside
  // a 0.5 s transfer (p2p: compute 1.5, comm 2): 0-0.25 s at 1/1.5, 0.25-1 s
  // at 1/3, then alone at 1/2.
  FaultSpec straggler;
  straggler.kind = FaultKind::Straggler;
  straggler.rank = 0;
  straggler.factor = 2.0;
  straggler.at = Seconds(0.25);
  EngineFault fault;
  fault.spec = straggler;
  fault.at_s = 0.25;
  fault.ranks = {0};
  const FaultPlan plan({fault}, {}, 2);
  AnalyticEngineOptions o = with(factors());
  o.faults = &plan;
  const TimedCost cost(2);
  const auto trace = run_analytic(compute_beside_transfer(), cost, o);
  EXPECT_NEAR(end_s(trace, 0, 1), 1.0, kNs);
  const double left = 1.0 - 0.25 / 1.5 - 0.75 / 3.0;
  EXPECT_NEAR(end_s(trace, 0, 0), 1.0 + 2.0 * left, kNs);
}

// The flow engine against the analytic engine on the same small schedule:
// compute beside a transfer over a NIC, comm not slowed (the flow engine
// slows a message by bytes, not its latency).
// Two 1 ms computes on rank 0 (RoutedTestCost) beside a send of `bytes` from it to rank 1.
proto::Schedule computes_beside_send(std::uint64_t bytes) {
  HandSchedule h(2);
  h.compute(0, 0);
  h.compute(0, 0, {0});
  h.send(0, 1, 1, bytes, 0);
  h.recv(1, 1, 0, bytes, 0);
  return h.schedule();
}

struct BothTraces {
  proto::Trace analytic, flow;
};
BothTraces run_both(const proto::Schedule& schedule, const testing::FlowCluster& cluster, const Interference& in) {
  AnalyticEngineOptions o;
  o.node_of_rank = cluster.placement.node_of_rank;
  o.interference = in;
  EngineContext context = cluster.context();
  context.interference = in;
  return {run_analytic(schedule, *cluster.cost, o), run_flow(schedule, context)};
}

TEST(Interference, BothEnginesAgreeOnComputeBesideATransfer) {
  const auto config = testing::simple_topology(2, 1, testing::link(300e9, 1e-6), testing::link(50e9, 4e-6));
  const testing::FlowCluster cluster(config);
  const proto::Schedule schedule = computes_beside_send(25'000'000);
  Interference in = factors();
  in.by_size[0][0].factors.comm_slowdown = 1.0;
  const auto [analytic, flow] = run_both(schedule, cluster, in);
  const double d = end_s(analytic, 0, 2);
  ASSERT_LT(d, 1e-3);
  EXPECT_NEAR(end_s(analytic, 0, 1), d + (2e-3 - d / 1.5), 1e-8);
  EXPECT_NEAR(end_s(flow, 0, 1), end_s(analytic, 0, 1), 0.01 * end_s(analytic, 0, 1));
  EXPECT_NEAR(end_s(flow, 0, 2), d, 0.01 * d);
  // And with the comm slowed: the flow engine slows the message's bytes.
  in.by_size[0][0].factors.comm_slowdown = 2.0;
  const auto [slowed_analytic, slowed_flow] = run_both(schedule, cluster, in);
  const double analytic_s = end_s(slowed_analytic, 0, 2);
  const double flow_s = end_s(slowed_flow, 0, 2);
  EXPECT_NEAR(analytic_s, 2.0 * d, 1e-8);
  EXPECT_NEAR(flow_s, analytic_s, 0.02 * analytic_s);
}

// Factors by message size: a 25 MB send takes its point's compute factor
// (1.5), a 1 KB send its own (1: no slowdown), in both engines.
TEST(Interference, BothEnginesTakeTheFactorsOfTheMessageSize) {
  const auto config = testing::simple_topology(2, 1, testing::link(300e9, 1e-6), testing::link(50e9, 4e-6));
  const testing::FlowCluster cluster(config);
  Interference in = factors();
  in.by_size[0] = {{1e3, {1.0, 1.0}}, {25e6, {1.5, 1.0}}};
  for (const std::uint64_t bytes : {std::uint64_t{25'000'000}, std::uint64_t{1'000}}) {
    const auto [analytic, flow] = run_both(computes_beside_send(bytes), cluster, in);
    const double d = end_s(analytic, 0, 2);
    const double compute_end = bytes == 1'000 ? 2e-3 : d + (2e-3 - d / 1.5);
    EXPECT_NEAR(end_s(analytic, 0, 1), compute_end, 1e-8) << bytes;
    EXPECT_NEAR(end_s(flow, 0, 1), compute_end, 0.01 * compute_end) << bytes;
  }
}

// A message already on the network when compute starts beside it: the
// analytic engine slows it from then on, the flow engine cannot (flow_engine.h)
// and leaves it at its rate; the compute is slowed in both.
TEST(Interference, TheFlowEngineSlowsAMessageOnlyAsItStarts) {
  const auto config = testing::simple_topology(2, 1, testing::link(300e9, 1e-6), testing::link(50e9, 4e-6));
  const testing::FlowCluster cluster(config);
  HandSchedule h(2);
  h.compute(0, 0);  // 1 ms, measured: takes no part
  h.fix_duration(0, 0, 500'000);
  h.compute(0, 0, {0});  // 1 ms from 0.5 ms
  h.send(0, 1, 1, 150'000'000, 0);
  h.recv(1, 1, 0, 150'000'000, 0);
  Interference in = factors();  // point-to-point: compute 1.5, comm 2
  AnalyticEngineOptions o;
  o.node_of_rank = cluster.placement.node_of_rank;
  const double d = end_s(run_analytic(h.schedule(), *cluster.cost, o), 0, 2);  // the transfer alone
  ASSERT_GT(d, 2.1e-3);
  o.interference = in;
  const auto analytic = run_analytic(h.schedule(), *cluster.cost, o);
  EngineContext context = cluster.context();
  context.interference = in;
  const auto flow = run_flow(h.schedule(), context);
  // Compute from 0.5 ms at 1/1.5 beside the transfer (it outlasts the compute in both).
  EXPECT_NEAR(end_s(analytic, 0, 1), 0.5e-3 + 1.5e-3, 1e-9);
  EXPECT_NEAR(end_s(flow, 0, 1), 0.5e-3 + 1.5e-3, 1e-8);
  // The transfer: at 1/2 from 0.5 ms to 2 ms in the analytic engine, untouched in the flow engine.
  EXPECT_NEAR(end_s(analytic, 0, 2), 2e-3 + (d - 0.5e-3 - 1.5e-3 / 2.0), 1e-9);
  EXPECT_NEAR(end_s(flow, 0, 2), d, 0.01 * d);
}

// A collective beside compute in both engines: its class by the members'
// nodes (intra-node here: compute at 1/1.25; inter-node: at 1/1.1), and a
// compute op that starts while the collective runs.
TEST(Interference, BothEnginesAgreeOnComputeBesideACollective) {
  for (const std::uint32_t nodes : {1u, 2u}) {
    const auto config = testing::simple_topology(nodes, 2 / nodes, testing::link(100e9, 1e-6), testing::link(50e9, 4e-6));
    const testing::FlowCluster cluster(config);
    HandSchedule h(2);
    h.compute(0, 0);
    h.compute(0, 0, {0});
    h.compute(1, 0);  // rank 1 computes 1 ms, then joins the collective
    const std::uint32_t g = h.group({0, 1});
    h.collective(0, 1, g, 40'000'000, proto::ALL_GATHER);
    h.collective(1, 1, g, 40'000'000, proto::ALL_GATHER, {0});
    Interference in = factors();
    for (auto& points : in.by_size) points[0].factors.comm_slowdown = 1.0;
    AnalyticEngineOptions o;
    o.node_of_rank = cluster.placement.node_of_rank;
    o.interference = in;
    const auto analytic = run_analytic(h.schedule(), *cluster.cost, o);
    EngineContext context = cluster.context();
    context.interference = in;
    const auto flow = run_flow(h.schedule(), context);
    const double f = nodes == 1 ? 1.25 : 1.1;
    const double start = 1e-3, d = end_s(analytic, 0, 2) - start;
    ASSERT_GT(d, 0.0);
    ASSERT_LT(d, 1e-3 * f);
    // Rank 0: 1 ms alone, then its second op beside the collective for d.
    EXPECT_NEAR(end_s(analytic, 0, 1), start + d + (1e-3 - d / f), 1e-9) << nodes;
    EXPECT_NEAR(end_s(flow, 0, 1), end_s(analytic, 0, 1), 0.01 * end_s(analytic, 0, 1)) << nodes;
    EXPECT_NEAR(end_s(flow, 0, 2), end_s(analytic, 0, 2), 0.02 * end_s(analytic, 0, 2)) << nodes;
  }
}

}  // namespace
}  // namespace eppsim
