// The engines' interference bookkeeping: slowdowns follow what is in flight on
// each rank, and update() reports what changed, ranks first, in the order they
// were touched.
#include "sim/engine/interference_tracker.h"

#include <array>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

Interference model() {
  Interference m;
  m.enabled = true;
  m.set_constant(TrafficClass::PointToPoint, {1.1, 1.05});
  m.set_constant(TrafficClass::IntraNodeCollective, {1.3, 1.2});
  m.set_constant(TrafficClass::InterNodeCollective, {1.02, 1.01});
  return m;
}

struct Changes {
  std::vector<std::pair<std::uint32_t, double>> ranks;
  std::vector<std::pair<InterferenceTracker::CommId, double>> comms;
};

Changes update(InterferenceTracker& t) {
  Changes out;
  t.update([&](std::uint32_t rank, double s) { out.ranks.emplace_back(rank, s); },
           [&](InterferenceTracker::CommId c, double s) { out.comms.emplace_back(c, s); });
  return out;
}

TEST(InterferenceTracker, ComputeSlowsByTheLargestClassInFlightOnItsRank) {
  InterferenceTracker t(model(), 3);
  EXPECT_EQ(t.compute_slowdown(0), 1.0);
  t.comm_started(TrafficClass::InterNodeCollective, 1024.0, std::array{0u, 1u});
  EXPECT_DOUBLE_EQ(t.compute_slowdown(0), 1.02);
  const auto intra = t.comm_started(TrafficClass::IntraNodeCollective, 1024.0, std::array{0u, 2u});
  EXPECT_DOUBLE_EQ(t.compute_slowdown(0), 1.3);
  EXPECT_DOUBLE_EQ(t.compute_slowdown(1), 1.02);
  t.comm_ended(intra);
  EXPECT_DOUBLE_EQ(t.compute_slowdown(0), 1.02);
  EXPECT_EQ(t.compute_slowdown(2), 1.0);
}

// A communication runs slowed while any of its ranks computes, as of the last
// update; the update reports the ranks touched, then the communications.
TEST(InterferenceTracker, CommunicationSlowsWhileAnyOfItsRanksComputes) {
  InterferenceTracker t(model(), 2);
  const auto c = t.comm_started(TrafficClass::PointToPoint, 1024.0, std::array{0u, 1u});
  Changes first = update(t);
  EXPECT_EQ(first.ranks, (std::vector<std::pair<std::uint32_t, double>>{{0, 1.1}, {1, 1.1}}));
  EXPECT_EQ(first.comms, (std::vector<std::pair<InterferenceTracker::CommId, double>>{{c, 1.0}}));
  EXPECT_FALSE(t.pending());

  t.compute_started(1);
  EXPECT_TRUE(t.pending());
  EXPECT_EQ(t.comm_slowdown(c), 1.0);  // not before the update
  Changes second = update(t);
  EXPECT_EQ(second.ranks, (std::vector<std::pair<std::uint32_t, double>>{{1, 1.1}}));
  EXPECT_EQ(second.comms, (std::vector<std::pair<InterferenceTracker::CommId, double>>{{c, 1.05}}));
  EXPECT_DOUBLE_EQ(t.comm_slowdown(c), 1.05);

  // A second compute on the rank changes nothing for the communication.
  t.compute_started(1);
  EXPECT_TRUE(update(t).comms.empty());
  t.compute_ended(1);
  t.compute_ended(1);
  Changes third = update(t);
  EXPECT_EQ(third.comms, (std::vector<std::pair<InterferenceTracker::CommId, double>>{{c, 1.0}}));
}

// A rank sending to itself counts once; an ended communication is not
// reported, and its id is reused.
TEST(InterferenceTracker, EndedCommunicationsLeaveTheirRanks) {
  InterferenceTracker t(model(), 2);
  t.compute_started(0);
  update(t);
  const auto self = t.comm_started(TrafficClass::PointToPoint, 1024.0, std::array{0u, 0u});
  EXPECT_DOUBLE_EQ(t.compute_slowdown(0), 1.1);
  Changes started = update(t);
  EXPECT_EQ(started.ranks, (std::vector<std::pair<std::uint32_t, double>>{{0, 1.1}}));
  EXPECT_DOUBLE_EQ(t.comm_slowdown(self), 1.05);
  t.comm_ended(self);
  EXPECT_EQ(t.compute_slowdown(0), 1.0);
  Changes ended = update(t);
  EXPECT_EQ(ended.ranks, (std::vector<std::pair<std::uint32_t, double>>{{0, 1.0}}));
  EXPECT_TRUE(ended.comms.empty());
  EXPECT_EQ(t.comm_started(TrafficClass::IntraNodeCollective, 1024.0, std::array{0u, 1u}), self);
}

// Each communication carries its class's factors at its own size: a small and
// a large message of one class slow the same rank's compute differently.
TEST(InterferenceTracker, EachCommunicationTakesTheFactorsOfItsSize) {
  Interference m = model();
  m.by_size[0] = {{1024.0, {1.0, 4.0}}, {1048576.0, {2.0, 1.5}}};
  InterferenceTracker t(m, 2);
  const auto small = t.comm_started(TrafficClass::PointToPoint, 1024.0, std::array{0u, 1u});
  EXPECT_DOUBLE_EQ(t.compute_slowdown(0), 1.0);
  const auto large = t.comm_started(TrafficClass::PointToPoint, 1048576.0, std::array{0u, 1u});
  EXPECT_DOUBLE_EQ(t.compute_slowdown(0), 2.0);
  t.compute_started(1);
  update(t);
  EXPECT_DOUBLE_EQ(t.comm_slowdown(small), 4.0);
  EXPECT_DOUBLE_EQ(t.comm_slowdown(large), 1.5);
  t.comm_ended(large);
  EXPECT_DOUBLE_EQ(t.compute_slowdown(0), 1.0);
}

}  // namespace
}  // namespace eppsim
