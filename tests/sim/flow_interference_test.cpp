// The flow engine's side of interference: an update interrupts exactly the
// actors whose rate it moved.
#include "sim/engine/flow_interference.h"

#include <array>
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

// A stand-in for the engine's actors, of which only addresses are kept.
struct FakeActor {
  int id = 0;
};
FakeActor actors[4] = {{0}, {1}, {2}, {3}};
FakeActor* actor(int i) { return &actors[i]; }
using Flow = FlowInterference<FakeActor>;

std::vector<FakeActor*> interrupted(Flow& f) {
  f.update();
  std::vector<FakeActor*> out = f.to_interrupt();
  f.to_interrupt().clear();
  return out;
}

TEST(FlowInterference, ComputingActorsAreInterruptedWhenTheirRatesChange) {
  Flow f(model(), 2);
  f.start_compute(1, 0, actor(0));
  f.start_compute(2, 0, actor(1));
  EXPECT_TRUE(interrupted(f).empty());  // nothing in flight: their rate is the one they started at
  f.start_comm(5, TrafficClass::PointToPoint, 1024.0, std::array{0u, 0u}, nullptr);  // to itself: rank 0 once
  EXPECT_EQ(interrupted(f), (std::vector<FakeActor*>{actor(0), actor(1)}));
  EXPECT_DOUBLE_EQ(f.compute_slowdown(0), 1.1);
  // A second point-to-point transfer changes no rate: nobody is woken.
  f.start_comm(6, TrafficClass::PointToPoint, 1024.0, std::array{0u, 1u}, nullptr);
  EXPECT_TRUE(interrupted(f).empty());
  f.end(5);
  f.end(6);
  EXPECT_EQ(interrupted(f), (std::vector<FakeActor*>{actor(0), actor(1)}));
  EXPECT_EQ(f.compute_slowdown(0), 1.0);
}

TEST(FlowInterference, ASleepingCommunicationIsInterruptedWhenItsRanksStartOrStopComputing) {
  Flow f(model(), 2);
  f.start_comm(7, TrafficClass::PointToPoint, 1024.0, std::array{0u, 1u}, actor(3));
  EXPECT_TRUE(interrupted(f).empty());  // its sleeper reads its first rate itself
  EXPECT_EQ(f.comm_slowdown(7), 1.0);
  f.start_compute(1, 1, actor(0));
  EXPECT_EQ(interrupted(f), (std::vector<FakeActor*>{actor(3)}));
  EXPECT_DOUBLE_EQ(f.comm_slowdown(7), 1.05);
  f.end(1);
  EXPECT_EQ(interrupted(f), (std::vector<FakeActor*>{actor(3)}));
  EXPECT_EQ(f.comm_slowdown(7), 1.0);
  EXPECT_EQ(f.comm_slowdown(99), 1.0);  // not tracked: never slowed
}

}  // namespace
}  // namespace eppsim
