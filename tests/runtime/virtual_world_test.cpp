#include "runtime/virtual_world.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>

#include "base/errors.h"
#include "schedule/trace_events.h"
#include "tests/runtime/hand_simulation.h"
#include "tests/runtime/runtime_fixture.h"

namespace eppsim::runtime {
namespace {

using ::testing::HasSubstr;
constexpr double kForever = std::numeric_limits<double>::infinity();

std::map<std::pair<std::uint32_t, std::uint32_t>, OpEventRef> by_op(const proto::Trace& t) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, OpEventRef> events;
  for (const OpEventRef e : events_of(t)) events.insert_or_assign({e.rank(), e.op()}, e);
  return events;
}

TEST(VirtualWorld, WithNothingPinnedItRunsTheSimulationAgain) {
  for (const auto& schedule : {testing::pipeline_schedule(), testing::three_rank_allreduce()}) {
    const proto::Trace simulated = testing::simulate(schedule);
    VirtualWorld world(schedule, simulated, [](OpRef) { return false; }, "sim/trace.pb");
    world.start();
    world.advance_to(kForever);
    ASSERT_TRUE(world.done());
    const proto::Trace trace = world.trace();
    const auto again = by_op(trace), before = by_op(simulated);
    ASSERT_EQ(again.size(), before.size());
    for (const auto& [op, e] : before) {
      EXPECT_EQ(again.at(op).start_ns(), e.start_ns()) << "rank " << op.first << " op " << op.second;
      EXPECT_EQ(again.at(op).end_ns(), e.end_ns()) << "rank " << op.first << " op " << op.second;
    }
  }
}

TEST(VirtualWorld, RetimesTheVirtualRanksFromTheRealOnesMeasuredEnds) {
  const auto schedule = testing::pipeline_schedule();
  const proto::Trace simulated = testing::simulate(schedule);
  // Rank 0 "measured" 5 ms later than simulated, every op.
  proto::Trace real;
  for (const OpEventRef e : events_of(simulated)) {
    if (e.rank() != 0) continue;
    OpEventFields f = fields_of(e);
    f.start_ns += 5'000'000;
    f.end_ns += 5'000'000;
    add_event(*real.mutable_op_events(), f);
  }
  const std::vector<std::uint32_t> real_ranks = {0};
  VirtualWorld world(
      schedule, simulated,
      [&](OpRef op) { return std::binary_search(real_ranks.begin(), real_ranks.end(), op.rank); }, "sim/trace.pb");
  const proto::Trace trace = world.retime(real);
  const auto retimed = by_op(trace);
  const auto measured = by_op(real), before = by_op(simulated);
  // Rank 1's first activations arrive when rank 0's send really ended; its forward starts then.
  EXPECT_EQ(retimed.at({1, 1}).end_ns(), measured.at({0, 2}).end_ns());
  EXPECT_GE(retimed.at({1, 3}).start_ns(), measured.at({0, 2}).end_ns());
  EXPECT_GT(retimed.at({1, 3}).start_ns(), before.at({1, 3}).start_ns());
  // A virtual compute op keeps its simulated length.
  EXPECT_EQ(retimed.at({1, 3}).end_ns() - retimed.at({1, 3}).start_ns(),
            before.at({1, 3}).end_ns() - before.at({1, 3}).start_ns());
  // The real rank's pinned ops end as measured (MEMORY ops are no activity: they end as they become ready).
  for (const auto& [op, e] : measured) {
    if (e.kind() != proto::MEMORY) {
      EXPECT_EQ(retimed.at(op).end_ns(), e.end_ns()) << "op " << op.second;
    }
  }
}

TEST(VirtualWorld, OnlineItTimesWhatMeetsAVirtualRankOnceItsSidesHaveArrived) {
  const auto schedule = testing::pipeline_schedule();
  const proto::Trace simulated = testing::simulate(schedule);
  // Rank 0's compute pinned; its sends and receives meet rank 1, which the world runs.
  VirtualWorld world(
      schedule, simulated, [&](OpRef op) { return op.rank == 0 && ops_of(schedule, 0)[op.op].is_compute(); },
      "sim/trace.pb");
  world.start();
  world.advance_to(10.0);
  EXPECT_FALSE(world.end_of({0, 2}).has_value());  // the send waits for forward 0, which has not ended
  EXPECT_FALSE(world.done());
  world.pinned_ended({0, 1}, 10.5);
  world.advance_to(10.5);
  ASSERT_TRUE(world.end_of({0, 2}).has_value());
  EXPECT_NEAR(*world.end_of({0, 2}), 10.5 + testing::kHandTransferS, 1e-12);  // rank 1 posted its receive at 0
  EXPECT_EQ(world.next_event_s(), 10.5 + testing::kHandTransferS);
}

TEST(VirtualWorld, NeedsEveryRanksSimulatedEvents) {
  const auto schedule = testing::pipeline_schedule();
  proto::Trace simulated = testing::simulate(schedule);
  simulated.add_traced_ranks(0);
  try {
    VirtualWorld(schedule, simulated, [](OpRef) { return false; }, "sim/trace.pb");
    FAIL() << "accepted a trace of some ranks";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("sim/trace.pb: traced_ranks: lists the events of 1 of 2 ranks; a closed loop re-times "
                                    "every virtual rank: simulate with --trace-ranks all"));
  }
}

}  // namespace
}  // namespace eppsim::runtime
