// The Schedule's semantics (docs/architecture.md, "The Schedule"), pinned for every
// registered engine: small hand-built schedules on a cost model with fixed
// compute and link times, so each expected time is a short sum.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "models/network/routed_network.h"
#include "models/topology/topology.h"
#include "sim/engine/engine_registry.h"
#include "tests/schedule/schedule_fixture.h"
#include "schedule/executor/executor_core.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using testing::HandSchedule;

// The cluster of every test: one chip per node, each chip's NIC into one
// switch; chip to chip takes 1 us + 1 ns per byte (1 GB/s).
constexpr std::uint32_t kNodes = 4;
std::shared_ptr<const Topology> test_topology() {
  TopologyConfig config;
  config.name = "conformance";
  config.nodes = kNodes;
  config.chips_per_node = 1;
  config.node.link = LinkParams{BytesPerSecond(1e9), Seconds(1e-6)};
  config.network = SimpleNetworkConfig{LinkParams{BytesPerSecond(1e9), Seconds(1e-6)}};
  return build_topology(config);
}

// Forward 1 ms, backward 2 ms, recompute 1 ms, optimizer 0.5 ms; messages and
// collectives routed over the test cluster (rank r on node r; a message 1 us +
// 1 ns per byte), which engines that price the network themselves (the flow
// engine) reproduce when nothing contends.
class FixedCostModel final : public CostModel {
 public:
  ComputeCost compute_cost(const ComputeWork& work) const override {
    return ComputeCost{{}, {}, Seconds(work.pass == Pass::Backward ? 2e-3 : 1e-3)};
  }
  Seconds optimizer_time(Bytes) const override { return Seconds(0.5e-3); }
  const NetworkTimeModel& network() const override { return network_; }

 private:
  RoutedNetwork network_{test_topology(), {0, 1, 2, 3}};
};

// Rank r on node r's chip.
EnginePlacement test_placement() {
  EnginePlacement placement;
  placement.node_of_rank = {0, 1, 2, 3};
  placement.chip_of_rank = {0, 1, 2, 3};
  placement.topology = [topology = test_topology()] { return topology; };
  return placement;
}

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kUs = 1'000;

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  proto::Trace run(const proto::Schedule& schedule) const {
    return run_engine(GetParam(), schedule, EngineContext{cost_, &placement_});
  }
  std::string failure(const proto::Schedule& schedule) const {
    try {
      run(schedule);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }

  std::int64_t collective_ns(std::vector<std::uint32_t> ranks, std::uint64_t bytes) const {
    return std::llround(
        cost_.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, ranks, Bytes(bytes)).value * 1e9);
  }

  FixedCostModel cost_;
  EnginePlacement placement_ = test_placement();
};

OpEventRef event(const proto::Trace& trace, std::uint32_t rank, std::uint32_t op) {
  for (const OpEventRef e : events_of(trace)) {
    if (e.rank() == rank && e.op() == op) return e;
  }
  throw std::runtime_error("no event");
}

TEST_P(Conformance, OpsOnAStreamRunInOrderAndStreamsOverlap) {
  HandSchedule h(2);
  h.compute(0, 0);
  h.compute(0, 0);
  h.send(0, 1, 1, 1000, 0);  // 2 us beside the computes
  h.recv(1, 1, 0, 1000, 0);
  const auto trace = run(h.schedule());
  EXPECT_EQ(trace.engine(), GetParam());
  EXPECT_EQ(trace.num_ranks(), 2u);
  EXPECT_EQ(events_of(trace).size(), 4);
  EXPECT_EQ(event(trace, 0, 1).start_ns(), 1 * kMs);
  EXPECT_EQ(event(trace, 0, 2).end_ns(), 2 * kUs);
  EXPECT_EQ(trace.step_time_ns(), 2 * kMs);
}

TEST_P(Conformance, AnOpMayListItsStreamPredecessorAsADependencyToo) {
  HandSchedule h(1);
  const auto first = h.compute(0, 0);
  h.compute(0, 0, {first});  // waits for op 0 twice over: it starts when op 0 ends
  const auto trace = run(h.schedule());
  EXPECT_EQ(event(trace, 0, 1).start_ns(), 1 * kMs);
  EXPECT_EQ(trace.step_time_ns(), 2 * kMs);
}

TEST_P(Conformance, DependenciesOrderOpsAcrossStreams) {
  HandSchedule h(2);
  const auto f = h.compute(0, 0);
  h.send(0, 1, 1, 1000, 0, {f});
  h.recv(1, 1, 0, 1000, 0);
  const auto trace = run(h.schedule());
  EXPECT_EQ(event(trace, 1, 0).end_ns(), 1 * kMs + 2 * kUs);
}

TEST_P(Conformance, ATransferStartsWhenBothSidesHavePostedSoWaitingIsIdle) {
  HandSchedule h(2);
  h.compute(0, 1);
  h.send(0, 1, 1, 1000, 0);
  h.recv(1, 1, 0, 1000, 0);  // posted at 0, the send only after 1 ms
  const auto trace = run(h.schedule());
  EXPECT_EQ(event(trace, 1, 0).start_ns(), 1 * kMs);
  EXPECT_EQ(event(trace, 1, 0).end_ns(), 1 * kMs + 2 * kUs);
  EXPECT_EQ(event(trace, 0, 1).start_ns(), 1 * kMs);
  EXPECT_EQ(event(trace, 1, 0).kind(), proto::RECV);
  EXPECT_EQ(event(trace, 1, 0).peer(), 0u);
  EXPECT_EQ(event(trace, 1, 0).size_bytes(), 1000u);
}

TEST_P(Conformance, TagsSelectTheMatchingReceive) {
  HandSchedule h(2, {"compute", "a", "b"});
  h.send(0, 1, 1, 1000, 1);
  h.send(0, 1, 1, 1000, 2);
  h.recv(1, 1, 0, 1000, 2);  // the second message first, on its own stream
  h.recv(1, 2, 0, 1000, 1);
  const auto trace = run(h.schedule());
  EXPECT_EQ(event(trace, 1, 1).end_ns(), 2 * kUs);
  EXPECT_EQ(event(trace, 1, 0).end_ns(), 4 * kUs);
}

TEST_P(Conformance, MessagesWithOneTagMatchInPostingOrder) {
  HandSchedule h(2);
  h.send(0, 1, 1, 1000, 1);
  h.send(0, 1, 1, 3000, 1);
  h.recv(1, 1, 0, 1000, 1);
  h.recv(1, 1, 0, 3000, 1);
  const auto trace = run(h.schedule());
  EXPECT_EQ(event(trace, 1, 1).end_ns(), 2 * kUs + 4 * kUs);
  h.program(1).set_size_bytes(0, 3000);
  h.program(1).set_size_bytes(1, 1000);
  EXPECT_THAT(failure(h.schedule()), HasSubstr("rank 0 op 0 sends 1000 bytes (tag 1) to rank 1, whose op 0 receives 3000 bytes"));
}

TEST_P(Conformance, ReceivesOnSeveralStreamsMeetSendsInPostingOrder) {
  HandSchedule h(2, {"compute", "a", "b"});
  h.send(0, 1, 1, 1000, 7);
  h.send(0, 1, 1, 3000, 7);
  h.compute(1, 1);
  h.recv(1, 1, 0, 3000, 7);  // the first receive in program order, posted once the compute is done
  h.recv(1, 2, 0, 1000, 7);  // posted at once: it meets the first send
  const auto trace = run(h.schedule());
  EXPECT_EQ(event(trace, 1, 2).end_ns(), 2 * kUs);
  EXPECT_EQ(event(trace, 1, 1).end_ns(), 1 * kMs + 4 * kUs);
  h.program(1).set_size_bytes(2, 2000);
  EXPECT_THAT(failure(h.schedule()), HasSubstr("rank 0 op 0 sends 1000 bytes (tag 7) to rank 1, whose op 2 receives 2000 bytes"));
}

TEST_P(Conformance, ReceivesInAnotherTagOrderOnOneStreamDeadlock) {
  HandSchedule h(2);
  h.send(0, 1, 1, 8, 1);
  h.send(0, 1, 1, 8, 2);
  h.recv(1, 1, 0, 8, 2);
  h.recv(1, 1, 0, 8, 1);
  EXPECT_THROW(run(h.schedule()), ScheduleDeadlock);
  const auto what = failure(h.schedule());
  EXPECT_THAT(what, HasSubstr("deadlock: 4 of 4 ops never finished on 2 ranks; 2 ops are blocked on peers:"));
  EXPECT_THAT(what, HasSubstr("rank 0 op 0 (send to rank 1, tag 1, 8 bytes, stream comm): no matching receive; posted "
                              "instead: rank 1 op 0 (recv from rank 0, tag 2, 8 bytes, stream comm)"));
  EXPECT_THAT(what, HasSubstr("2 further ops wait on these through stream order or dependencies"));
}

TEST_P(Conformance, AMissingPeerIsNamed) {
  HandSchedule h(2);
  h.recv(1, 1, 0, 8, 3);
  EXPECT_THAT(failure(h.schedule()),
              HasSubstr("rank 1 op 0 (recv from rank 0, tag 3, 8 bytes, stream comm): no matching send; rank 0 has posted "
                        "no send to rank 1"));
}

TEST_P(Conformance, TheKthCollectiveOfAGroupMeetsTheKthOfEveryMember) {
  HandSchedule h(3);
  const auto g01 = h.group({0, 1});
  const auto g12 = h.group({1, 2});
  h.collective(0, 1, g01, 1000);
  h.collective(0, 1, g01, 2000);
  h.collective(1, 1, g12, 1000);  // rank 1 takes part in group 1-2 first
  h.collective(1, 1, g01, 1000);
  h.collective(1, 1, g01, 2000);
  h.collective(2, 1, g12, 1000);
  const auto trace = run(h.schedule());
  const std::int64_t first = collective_ns({0, 1}, 1000), second = collective_ns({0, 1}, 2000);
  EXPECT_EQ(first, 3 * kUs);  // a ring of two: 2 steps of 500 bytes, 1 us + 0.5 us each
  EXPECT_EQ(collective_ns({1, 2}, 1000), first);
  EXPECT_EQ(event(trace, 2, 0).end_ns(), first);
  EXPECT_EQ(event(trace, 0, 0).start_ns(), first);  // rank 0 waited for rank 1
  EXPECT_EQ(event(trace, 0, 0).end_ns(), 2 * first);
  EXPECT_EQ(event(trace, 0, 1).end_ns(), 2 * first + second);
  EXPECT_EQ(event(trace, 1, 2).end_ns(), 2 * first + second);
  EXPECT_EQ(event(trace, 1, 2).group(), g01);
  EXPECT_EQ(event(trace, 1, 2).collective(), proto::ALL_REDUCE);
}

TEST_P(Conformance, CollectivesOfAnotherKindOrSizeMismatch) {
  HandSchedule h(2);
  const auto g = h.group({0, 1});
  h.collective(0, 1, g, 8, proto::ALL_REDUCE);
  h.collective(1, 1, g, 8, proto::ALL_GATHER);
  EXPECT_THROW(run(h.schedule()), ScheduleMismatch);
  h.program(1).set_detail(0, proto::ALL_REDUCE);  // a COLLECTIVE's detail is its kind
  h.program(1).set_size_bytes(0, 16);
  EXPECT_THAT(failure(h.schedule()),
              HasSubstr("collective 0 on group 0: rank 1 op 0 is a all-reduce of 16 bytes, but rank 0 op 0 is a all-reduce "
                        "of 8 bytes"));
}

TEST_P(Conformance, ACollectiveWaitsForMissingMembers) {
  HandSchedule h(3);
  const auto g = h.group({0, 1, 2});
  h.collective(0, 1, g, 8);
  h.collective(1, 1, g, 8);
  h.recv(2, 1, 0, 8, 9);
  h.collective(2, 1, g, 8);
  const auto what = failure(h.schedule());
  EXPECT_THAT(what, HasSubstr("rank 0 op 0 (all-reduce on group 0, 8 bytes, stream comm): waiting for group members 2"));
  EXPECT_THAT(what, HasSubstr("rank 2 op 0 (recv from rank 0, tag 9"));
  EXPECT_THAT(what, HasSubstr("1 further ops wait"));
}

TEST_P(Conformance, MemoryIsSampledPerRankAndOverFreeingMismatches) {
  HandSchedule h(2);
  h.memory(0, 0, true, 10);
  h.compute(0, 0);
  h.memory(0, 0, true, 5);
  h.memory(0, 0, false, 10);
  h.memory(1, 0, true, 7);
  const auto trace = run(h.schedule());
  ASSERT_EQ(trace.memory_size(), 4);
  EXPECT_EQ(trace.memory(0).rank(), 0u);
  EXPECT_EQ(trace.memory(1).bytes(), 15u);
  EXPECT_EQ(trace.memory(1).time_ns(), 1 * kMs);
  EXPECT_EQ(trace.memory(2).bytes(), 5u);
  EXPECT_EQ(trace.memory(3).rank(), 1u);
  EXPECT_EQ(trace.memory(3).bytes(), 7u);
  EXPECT_EQ(event(trace, 0, 2).start_ns(), event(trace, 0, 2).end_ns());
  h.memory(1, 0, false, 8);
  EXPECT_THAT(failure(h.schedule()), HasSubstr("rank 1 op 1 frees 8 B but only 7 B are allocated"));
}

// Ranks with no ops, and an op id block shared by two ranks (ops are numbered
// rank by rank: the executor core finds an op's rank from its id).
TEST_P(Conformance, EveryOpRunsOnItsOwnRankWhateverTheProgramsLengths) {
  HandSchedule h(kNodes);
  for (int k = 0; k < 8; ++k) h.compute(1, 0);
  h.send(1, 0, 3, 1000, 0);
  h.recv(3, 1, 1, 1000, 0);
  constexpr std::uint64_t kPast32Bits = (std::uint64_t{5} << 30) + 3;
  h.memory(3, 1, true, kPast32Bits);
  h.memory(3, 1, false, kPast32Bits);
  const auto trace = run(h.schedule());
  EXPECT_EQ(events_of(trace).size(), 12);
  for (std::uint32_t k = 0; k < 8; ++k) EXPECT_EQ(event(trace, 1, k).start_ns(), k * kMs) << k;
  EXPECT_EQ(event(trace, 1, 8).end_ns(), 8 * kMs + 2 * kUs);
  EXPECT_EQ(event(trace, 3, 0).end_ns(), 8 * kMs + 2 * kUs);
  ASSERT_EQ(trace.memory_size(), 2);
  EXPECT_EQ(trace.memory(0).rank(), 3u);
  EXPECT_EQ(trace.memory(0).bytes(), kPast32Bits);
  EXPECT_EQ(trace.memory(1).bytes(), 0u);
}

TEST_P(Conformance, ComputeTakesTheCostModelsTimeByPhase) {
  HandSchedule h(1);
  auto work = HandSchedule::forward_layer();
  h.compute(0, 0, {}, work);
  work.set_phase(proto::BACKWARD);
  h.compute(0, 0, {}, work);
  work.set_phase(proto::OPTIMIZER);
  h.compute(0, 0, {}, work);
  const auto trace = run(h.schedule());
  EXPECT_EQ(trace.step_time_ns(), 1 * kMs + 2 * kMs + kMs / 2);
  EXPECT_EQ(event(trace, 0, 1).phase(), proto::BACKWARD);
}

TEST_P(Conformance, FixedDurationsOverrideTheCostModel) {
  HandSchedule h(2);
  const auto g = h.group({0, 1});
  h.compute(0, 0);
  h.send(0, 0, 1, 1000, 0);
  h.recv(1, 0, 0, 1000, 0);
  h.collective(0, 0, g, 8);
  h.collective(1, 0, g, 8);
  struct Fixed {
    std::uint32_t rank, op;
    std::int64_t ns;
  };
  for (const auto& f : {Fixed{0, 0, 5 * kMs}, Fixed{0, 1, 3 * kMs}, Fixed{0, 2, 7 * kMs}, Fixed{1, 1, 7 * kMs}}) {
    h.fix_duration(f.rank, f.op, f.ns);
  }
  const auto trace = run(h.schedule());
  EXPECT_EQ(event(trace, 0, 0).end_ns(), 5 * kMs);
  EXPECT_EQ(event(trace, 1, 0).end_ns(), 8 * kMs);
  EXPECT_EQ(trace.step_time_ns(), 15 * kMs);
}

TEST_P(Conformance, MalformedSchedulesAreInputErrors) {
  HandSchedule h(2);
  h.send(0, 1, 4, 8, 0);
  EXPECT_THROW(run(h.schedule()), InputError);
}

INSTANTIATE_TEST_SUITE_P(Engines, Conformance, ::testing::ValuesIn(engine_names()),
                         [](const auto& info) { return info.param; });

TEST(EngineRegistry, UnknownEnginesAreInputErrorsListingTheRegisteredOnes) {
  const FixedCostModel cost;
  try {
    run_engine("warp", HandSchedule(1).schedule(), EngineContext{cost});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("engine: unknown engine 'warp' (available: analytic, flow)"));
  }
  EXPECT_THAT(engine_names(), ::testing::Contains("analytic"));
  EXPECT_FALSE(find_engine("analytic").description.empty());
}

}  // namespace
}  // namespace eppsim
