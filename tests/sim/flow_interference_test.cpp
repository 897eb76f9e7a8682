// The flow engine's interference bookkeeping: slowdowns follow what is in
// flight on each rank, and the sleeping actors a change affects are queued.
#include "sim/engine/flow_interference.h"

#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

Interference model() {
  Interference m;
  m.enabled = true;
  m.factors[static_cast<std::size_t>(TrafficClass::PointToPoint)] = {1.1, 1.05};
  m.factors[static_cast<std::size_t>(TrafficClass::IntraNodeCollective)] = {1.3, 1.2};
  m.factors[static_cast<std::size_t>(TrafficClass::InterNodeCollective)] = {1.02, 1.01};
  return m;
}

// A stand-in for the engine's actors, of which only addresses are kept.
struct FakeActor {
  int id = 0;
};
FakeActor actors[4] = {{0}, {1}, {2}, {3}};
FakeActor* actor(int i) { return &actors[i]; }
using Tracker = FlowInterference<FakeActor>;

TEST(FlowInterference, ComputeSlowsByTheLargestClassInFlightOnItsRank) {
  Tracker f(model(), 3);
  EXPECT_EQ(f.compute_slowdown(0), 1.0);
  f.start_comm(10, TrafficClass::InterNodeCollective, {0, 1}, nullptr);
  EXPECT_DOUBLE_EQ(f.compute_slowdown(0), 1.02);
  f.start_comm(11, TrafficClass::IntraNodeCollective, {0, 2}, nullptr);
  EXPECT_DOUBLE_EQ(f.compute_slowdown(0), 1.3);
  EXPECT_DOUBLE_EQ(f.compute_slowdown(1), 1.02);
  f.end(11);
  EXPECT_DOUBLE_EQ(f.compute_slowdown(0), 1.02);
  EXPECT_EQ(f.compute_slowdown(2), 1.0);
}

TEST(FlowInterference, CommunicationSlowsWhileAnyOfItsRanksComputes) {
  Tracker f(model(), 2);
  f.start_comm(7, TrafficClass::PointToPoint, {0, 1}, actor(3));
  EXPECT_EQ(f.comm_slowdown(7), 1.0);
  f.to_interrupt().clear();
  f.start_compute(1, 1, actor(0));
  EXPECT_DOUBLE_EQ(f.comm_slowdown(7), 1.05);
  // The communication's sleeper re-times.
  EXPECT_EQ(f.to_interrupt(), (std::vector<FakeActor*>{actor(3)}));
  f.to_interrupt().clear();
  f.end(1);
  EXPECT_EQ(f.comm_slowdown(7), 1.0);
  EXPECT_EQ(f.to_interrupt(), (std::vector<FakeActor*>{actor(3)}));
  EXPECT_EQ(f.comm_slowdown(99), 1.0);  // not tracked: never slowed
}

TEST(FlowInterference, ComputingActorsAreInterruptedWhenCommunicationStartsOrEnds) {
  Tracker f(model(), 2);
  f.start_compute(1, 0, actor(0));
  f.start_compute(2, 0, actor(1));
  f.to_interrupt().clear();
  f.start_comm(5, TrafficClass::PointToPoint, {0, 0}, nullptr);  // to itself: rank 0 once
  EXPECT_EQ(f.to_interrupt(), (std::vector<FakeActor*>{actor(0), actor(1)}));
  EXPECT_DOUBLE_EQ(f.compute_slowdown(0), 1.1);
  f.to_interrupt().clear();
  f.end(5);
  EXPECT_EQ(f.to_interrupt(), (std::vector<FakeActor*>{actor(0), actor(1)}));
  EXPECT_EQ(f.compute_slowdown(0), 1.0);
}

}  // namespace
}  // namespace eppsim
