#include "runtime/hybrid_comm_engine.h"

#include <gtest/gtest.h>

#include <limits>
#include <utility>

#include "tests/runtime/hand_simulation.h"
#include "tests/runtime/runtime_fixture.h"

namespace eppsim::runtime {
namespace {

// The real engine and the barrier of a test: the real engine must not be asked
// for what meets a virtual rank; the barrier completes when told.
class NoRealEngine final : public CommEngine {
 public:
  void start(ActivityId, OpRef ref) override { started.push_back(ref.op); }
  std::vector<Completion> poll() override { return {}; }
  std::size_t in_flight() const override { return 0; }
  std::vector<std::uint32_t>& started;
  explicit NoRealEngine(std::vector<std::uint32_t>& s) : started(s) {}
};

class TestBarrier final : public RealMembersBarrier {
 public:
  explicit TestBarrier(std::vector<Completion>& pending) : pending_(pending) {}
  void start(ActivityId, std::uint32_t group) override { groups.push_back(group); }
  std::vector<Completion> poll() override { return std::exchange(pending_, {}); }
  std::vector<std::uint32_t> groups;

 private:
  std::vector<Completion>& pending_;
};

TEST(HybridCommEngine, TimesWhatMeetsAVirtualRankAndPassesTheRestOn) {
  const auto schedule = testing::three_rank_allreduce();
  const proto::Trace simulated = testing::simulate(schedule);
  const std::vector<std::uint32_t> real = {0, 1};
  const VirtualPeers peers(schedule, simulated, real, 0, "sim/trace.pb");
  StepClock clock;
  std::vector<std::uint32_t> real_started;
  std::vector<Completion> barrier_done;
  auto barrier = std::make_unique<TestBarrier>(barrier_done);
  TestBarrier* barrier_view = barrier.get();
  HybridCommEngine engine(schedule, 0, peers, std::make_unique<NoRealEngine>(real_started), std::move(barrier), clock);
  engine.start(7, {0, 1});  // the all-reduce: rank 1 is real too, so the barrier first
  EXPECT_EQ(barrier_view->groups, std::vector<std::uint32_t>{0});
  EXPECT_EQ(engine.in_flight(), 1u);
  EXPECT_TRUE(engine.poll().empty());
  barrier_done.push_back({7, 0.5e-3});  // the real members met at 0.5 ms; rank 2 is ready at 2 ms
  EXPECT_TRUE(engine.poll().empty() || clock.now_s() >= 5e-3);
  EXPECT_NEAR(engine.next_end_s(), 5e-3, 1e-12);  // 2 ms + the 3 ms transfer
  std::vector<Completion> done;
  while (done.empty()) done = engine.poll();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].id, 7u);
  EXPECT_NEAR(done[0].end_s, 5e-3, 1e-12);
  EXPECT_EQ(engine.in_flight(), 0u);
  EXPECT_TRUE(real_started.empty());
  EXPECT_THROW(engine.start(8, {1, 1}), std::invalid_argument);  // another rank's op
}

TEST(HybridCommEngine, AnOpWhoseVirtualSideIsReadyAlreadyTakesTheTransferFromItsStart) {
  const auto schedule = testing::pipeline_schedule();
  const proto::Trace simulated = testing::simulate(schedule);
  const std::vector<std::uint32_t> real = {0};
  const VirtualPeers peers(schedule, simulated, real, 0, "sim/trace.pb");
  StepClock clock;
  std::vector<std::uint32_t> real_started;
  HybridCommEngine engine(schedule, 0, peers, std::make_unique<NoRealEngine>(real_started), nullptr, clock);
  const double started = clock.now_s();
  engine.start(3, {0, 2});  // SEND tag 0: rank 1's RECV was ready at 0
  std::vector<Completion> done;
  while (done.empty()) done = engine.poll();
  EXPECT_GE(done[0].end_s, started + 2e-3 - 1e-12);
  EXPECT_LE(done[0].end_s, clock.now_s());
  EXPECT_TRUE(real_started.empty());
}

TEST(HybridCommEngine, OpsBetweenRealRanksGoToTheRealEngine) {
  const auto schedule = testing::pipeline_schedule();
  const proto::Trace simulated = testing::simulate(schedule);
  const std::vector<std::uint32_t> real = {0, 1};
  const VirtualPeers peers(schedule, simulated, real, 0, "sim/trace.pb");
  EXPECT_EQ(peers.meetings(), 0u);
  StepClock clock;
  std::vector<std::uint32_t> real_started;
  HybridCommEngine engine(schedule, 0, peers, std::make_unique<NoRealEngine>(real_started), nullptr, clock);
  engine.start(3, {0, 2});
  EXPECT_EQ(real_started, std::vector<std::uint32_t>{2});
  EXPECT_EQ(engine.next_end_s(), std::numeric_limits<double>::infinity());
}

// Closed loop: the world hears when this rank's own ops end and times the
// collective from there; the open loop keeps the simulation's times.
TEST(HybridCommEngine, ClosedLoopTimesTheVirtualMembersFromThisRanksRealProgress) {
  const auto schedule = testing::three_rank_allreduce();
  const proto::Trace simulated = testing::simulate(schedule);  // rank 0's layer 1 ms, rank 2 ready at 2 ms
  const std::vector<std::uint32_t> real = {0};
  const VirtualPeers peers(schedule, simulated, real, 0, "sim/trace.pb");
  const auto end_of_collective = [&](bool closed, double layer_end_s) {
    StepClock clock;
    std::vector<std::uint32_t> real_started;
    auto world = closed ? std::make_unique<VirtualWorld>(
                              schedule, simulated,
                              [&](OpRef op) { return op.rank == 0 && !peers.meeting(op.op).has_value(); }, "sim/trace.pb")
                        : nullptr;
    HybridCommEngine engine(schedule, 0, peers, std::make_unique<NoRealEngine>(real_started), nullptr, clock,
                            std::move(world));
    engine.step_started();
    engine.op_ended({0, 0}, layer_end_s);  // the layer really ended then
    engine.start(1, {0, 1});
    std::vector<Completion> done;
    while (done.empty()) done = engine.poll();
    return done[0].end_s;
  };
  // Rank 0's layer ends at 4 ms instead of the simulated 1 ms: it arrives last.
  EXPECT_NEAR(end_of_collective(true, 4e-3), 4e-3 + testing::kHandCollectiveS, 1e-9);
  EXPECT_NEAR(end_of_collective(true, 1e-3), 2e-3 + testing::kHandCollectiveS, 1e-9);  // rank 2 arrives last
  // Open loop: the simulated readiness and transfer, from when the op started.
  EXPECT_GE(end_of_collective(false, 4e-3), 2e-3 + testing::kHandCollectiveS);
}

}  // namespace
}  // namespace eppsim::runtime
