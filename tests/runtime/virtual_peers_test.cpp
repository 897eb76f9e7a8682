#include "runtime/virtual_peers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>


#include "base/errors.h"
#include "tests/runtime/hand_simulation.h"
#include "tests/runtime/runtime_fixture.h"

namespace eppsim::runtime {
namespace {

using ::testing::HasSubstr;

std::map<std::uint32_t, OpEventRef> events_of_rank(const proto::Trace& t, std::uint32_t rank) {
  std::map<std::uint32_t, OpEventRef> events;
  for (const OpEventRef e : events_of(t)) {
    if (e.rank() == rank) events.insert_or_assign(e.op(), e);
  }
  return events;
}

std::string error_of(const proto::Schedule& schedule, const proto::Trace& simulated, std::vector<std::uint32_t> real,
                     std::uint32_t rank) {
  try {
    VirtualPeers(schedule, simulated, real, rank, "sim/trace.pb");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(VirtualPeers, APipelineStageMeetsTheVirtualOneAsTheSimulationMatchedThem) {
  const auto schedule = testing::pipeline_schedule();
  const proto::Trace simulated = testing::simulate(schedule);
  const std::vector<std::uint32_t> real = {0};
  const VirtualPeers peers(schedule, simulated, real, 0, "sim/trace.pb");
  const auto own = events_of_rank(simulated, 0), other = events_of_rank(simulated, 1);
  EXPECT_EQ(peers.meetings(), 4u);  // two sends, two receives
  for (const OpView op : ops_of(schedule, 0)) {
    const auto& meeting = peers.meeting(op.index());
    ASSERT_EQ(meeting.has_value(), op.is_send() || op.is_recv()) << "op " << op.index();
    if (!meeting) continue;
    const OpEventRef e = own.at(op.index());
    EXPECT_FALSE(meeting->real_members_meet);
    EXPECT_NEAR(meeting->transfer_s, 2e-3, 1e-9);
    EXPECT_NEAR(meeting->transfer_s, static_cast<double>(e.end_ns() - e.start_ns()) * 1e-9, 1e-9);
    // The transfer started when its last side arrived: the virtual side no later.
    EXPECT_LE(meeting->virtual_ready_s, static_cast<double>(e.start_ns()) * 1e-9 + 1e-12);
  }
  // Rank 1 posts both receives at once (its recv stream's first ops) and its
  // gradients' sends after its backwards: 1 ms, and 1 + 2 + 1 + 1 + 1 ms.
  EXPECT_NEAR(peers.meeting(2)->virtual_ready_s, 0.0, 1e-12);  // SEND tag 0 meets RECV tag 0, posted at 0
  const double backward0_end = static_cast<double>(other.at(4).end_ns()) * 1e-9;  // rank 1 op 4: backward of chunk 0
  EXPECT_NEAR(peers.meeting(5)->virtual_ready_s, backward0_end, 1e-12);  // RECV tag 100 meets that SEND
}

TEST(VirtualPeers, ACollectiveMeetsItsVirtualMembersAndSaysWhetherRealOnesMeetFirst) {
  const auto schedule = testing::three_rank_allreduce();
  const proto::Trace simulated = testing::simulate(schedule);
  // Rank 2 (virtual) is ready at 2 ms, after its two layers; the others at 1 ms.
  const std::vector<std::uint32_t> alone = {0};
  const VirtualPeers one(schedule, simulated, alone, 0, "sim/trace.pb");
  ASSERT_TRUE(one.meeting(1).has_value());
  EXPECT_FALSE(one.meeting(1)->real_members_meet);
  EXPECT_NEAR(one.meeting(1)->virtual_ready_s, 2e-3, 1e-12);
  EXPECT_NEAR(one.meeting(1)->transfer_s, 3e-3, 1e-12);
  const std::vector<std::uint32_t> two = {0, 1};
  const VirtualPeers both(schedule, simulated, two, 1, "sim/trace.pb");
  ASSERT_TRUE(both.meeting(1).has_value());
  EXPECT_TRUE(both.meeting(1)->real_members_meet);
  EXPECT_NEAR(both.meeting(1)->virtual_ready_s, 2e-3, 1e-12);
  const std::vector<std::uint32_t> every = {0, 1, 2};
  const VirtualPeers none(schedule, simulated, every, 2, "sim/trace.pb");
  EXPECT_EQ(none.meetings(), 0u);
  EXPECT_FALSE(none.meeting(2).has_value());
}

TEST(VirtualPeers, RefusesASimulationItCannotUseNamingTheFieldAndTheRule) {
  const auto schedule = testing::three_rank_allreduce();
  const proto::Trace simulated = testing::simulate(schedule);
  proto::Trace uncalibrated = simulated;
  uncalibrated.clear_calibration();
  EXPECT_THAT(error_of(schedule, uncalibrated, {0}, 0),
              HasSubstr("sim/trace.pb: calibration: the analytic trace was not priced by a calibration"));
  proto::Trace partial = simulated;
  partial.add_traced_ranks(0);
  EXPECT_EQ(error_of(schedule, partial, {0}, 0),
            "sim/trace.pb: traced_ranks: holds no events of ranks 1-2, which the real ranks meet; simulate with "
            "--trace-ranks 0-2 (or all)");
  proto::Trace hybrid = simulated;
  hybrid.add_real_ranks(1);
  EXPECT_THAT(error_of(schedule, hybrid, {0}, 0), HasSubstr("sim/trace.pb: real_ranks: is a hybrid emulation's trace"));
  EXPECT_THAT(error_of(testing::pipeline_schedule(), simulated, {0}, 0),
              HasSubstr("sim/trace.pb: num_ranks: the simulation has 3 ranks, the Schedule 2"));
  proto::Trace other = testing::simulate(testing::allreduce_schedule());
  other.set_num_ranks(2);
  EXPECT_THAT(error_of(testing::pipeline_schedule(), other, {0}, 0), HasSubstr("sim/trace.pb: op_events: rank"));
}

TEST(VirtualPeers, AddsTheVirtualRanksEventsOnTheRealOnesClock) {
  const auto schedule = testing::pipeline_schedule();
  const proto::Trace simulated = testing::simulate(schedule);
  // Rank 0 "measured": the simulation's events 5 ms later.
  proto::Trace hybrid;
  hybrid.set_num_ranks(1);
  for (const OpEventRef e : events_of(simulated)) {
    if (e.rank() != 0) continue;
    OpEventFields f = fields_of(e);
    f.start_ns += 5'000'000;
    f.end_ns += 5'000'000;
    add_event(*hybrid.mutable_op_events(), f);
  }
  const std::vector<std::uint32_t> real = {0};
  add_virtual_ranks(hybrid, simulated, real);
  EXPECT_EQ(hybrid.num_ranks(), 2u);
  EXPECT_THAT(hybrid.real_ranks(), ::testing::ElementsAre(0));
  EXPECT_EQ(events_of(hybrid).size(), events_of(simulated).size());
  EXPECT_EQ(hybrid.step_time_ns(), simulated.step_time_ns() + 5'000'000);  // rank 0 ends 5 ms later
  const auto virtual_events = events_of_rank(hybrid, 1), simulated_events = events_of_rank(simulated, 1);
  for (const auto& [op, e] : simulated_events) EXPECT_EQ(virtual_events.at(op).end_ns(), e.end_ns());
}

}  // namespace
}  // namespace eppsim::runtime
