// Interference factors as a function of message size: constant for one point,
// log(factor) linear in log(bytes) between points, constant beyond the ends.
#include "models/interference.h"

#include <cmath>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

TEST(Interference, OnePointHoldsAtEverySize) {
  const Interference in;
  for (double bytes : {0.0, 1.0, 1e6, 1e12}) {
    EXPECT_EQ(in.at(TrafficClass::IntraNodeCollective, bytes).compute_slowdown, 1.189);
    EXPECT_EQ(in.at(TrafficClass::IntraNodeCollective, bytes).comm_slowdown, 1.0);
  }
}

TEST(Interference, BetweenPointsLinearInTheLogOfTheSize) {
  Interference in;
  in.by_size[0] = {{1024.0, {1.0, 10.0}}, {1048576.0, {2.0, 1.0}}, {16777216.0, {6.0, 1.0}}};
  const auto at = [&](double bytes) { return in.at(TrafficClass::PointToPoint, bytes); };
  EXPECT_DOUBLE_EQ(at(1024.0).compute_slowdown, 1.0);
  // 2^15: halfway from 2^10 to 2^20 in log, so the geometric mean of the points' factors.
  EXPECT_DOUBLE_EQ(at(32768.0).compute_slowdown, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(at(32768.0).comm_slowdown, std::sqrt(10.0));
  EXPECT_DOUBLE_EQ(at(1048576.0).compute_slowdown, 2.0);
  EXPECT_DOUBLE_EQ(at(4194304.0).compute_slowdown, std::sqrt(12.0));  // 2^22: halfway from 2^20 to 2^24
  // A third of the way in log from 2^10 to 2^20 (2^13.33...): 10^(2/3) of comm.
  EXPECT_NEAR(at(std::pow(2.0, 10.0 + 10.0 / 3.0)).comm_slowdown, std::pow(10.0, 2.0 / 3.0), 1e-12);
  // Constant beyond the ends.
  EXPECT_DOUBLE_EQ(at(1.0).comm_slowdown, 10.0);
  EXPECT_DOUBLE_EQ(at(0.0).comm_slowdown, 10.0);
  EXPECT_DOUBLE_EQ(at(1e12).compute_slowdown, 6.0);
  // The other classes keep their defaults.
  EXPECT_EQ(in.at(TrafficClass::InterNodeCollective, 4194304.0).compute_slowdown, 1.0 / (1.0 - 0.02));
}

TEST(Interference, SetConstantReplacesEveryPoint) {
  Interference in;
  in.by_size[2] = {{10.0, {3.0, 3.0}}, {1000.0, {5.0, 5.0}}};
  in.set_constant(TrafficClass::InterNodeCollective, {1.5, 1.25});
  EXPECT_EQ(in.at(TrafficClass::InterNodeCollective, 100.0).compute_slowdown, 1.5);
  EXPECT_EQ(in.at(TrafficClass::InterNodeCollective, 100.0).comm_slowdown, 1.25);
}

}  // namespace
}  // namespace eppsim
