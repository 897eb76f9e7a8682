#include "traces/rank_busy.h"

#include <gtest/gtest.h>

namespace eppsim {
namespace {

// Overlaps count once; recompute joins the second figure, communication the
// third; memory ops and empty intervals count nowhere.
TEST(RankBusyCounter, CountsTheUnionOfEachSet) {
  RankBusyCounter counter;
  counter.add(proto::COMPUTE, proto::FORWARD, 0, 4'000);
  counter.add(proto::COMPUTE, proto::BACKWARD, 2'000, 5'000);        // overlaps the forward
  counter.add(proto::COMPUTE, proto::RECOMPUTE, 4'500, 7'000);       // 2,000 beyond compute
  counter.add(proto::COLLECTIVE, proto::PHASE_UNSPECIFIED, 6'000, 9'000);  // 2,000 beyond any compute
  counter.add(proto::SEND, proto::PHASE_UNSPECIFIED, 9'500, 9'500);  // empty
  counter.add(proto::MEMORY, proto::PHASE_UNSPECIFIED, 0, 20'000);   // not counted
  const proto::RankBusy busy = counter.take(3);
  EXPECT_EQ(busy.rank(), 3u);
  EXPECT_EQ(busy.compute_ns(), 5'000);
  EXPECT_EQ(busy.compute_or_recompute_ns(), 7'000);
  EXPECT_EQ(busy.busy_ns(), 9'000);
}

// Intervals in any order, as ops of several streams end: the same figures.
TEST(RankBusyCounter, IntervalsInAnyOrderGiveTheSameFigures) {
  RankBusyCounter sorted, shuffled;
  sorted.add(proto::COMPUTE, proto::FORWARD, 0, 10);
  sorted.add(proto::COMPUTE, proto::FORWARD, 20, 30);
  sorted.add(proto::COMPUTE, proto::RECOMPUTE, 5, 25);
  sorted.add(proto::COLLECTIVE, proto::PHASE_UNSPECIFIED, 28, 40);
  sorted.add(proto::SEND, proto::PHASE_UNSPECIFIED, 50, 60);
  shuffled.add(proto::SEND, proto::PHASE_UNSPECIFIED, 50, 60);
  shuffled.add(proto::COMPUTE, proto::FORWARD, 20, 30);
  shuffled.add(proto::COLLECTIVE, proto::PHASE_UNSPECIFIED, 28, 40);
  shuffled.add(proto::COMPUTE, proto::RECOMPUTE, 5, 25);
  shuffled.add(proto::COMPUTE, proto::FORWARD, 0, 10);
  const proto::RankBusy a = sorted.take(0), b = shuffled.take(0);
  EXPECT_EQ(a.compute_ns(), 20);
  EXPECT_EQ(a.compute_or_recompute_ns(), 30);
  EXPECT_EQ(a.busy_ns(), 50);
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
}

TEST(RankBusyCounter, TakeLeavesItEmptyForTheNextRank) {
  RankBusyCounter counter;
  counter.add(proto::RECV, proto::PHASE_UNSPECIFIED, 0, 10);
  EXPECT_EQ(counter.take(0).busy_ns(), 10);
  const proto::RankBusy next = counter.take(1);
  EXPECT_EQ(next.rank(), 1u);
  EXPECT_EQ(next.compute_ns(), 0);
  EXPECT_EQ(next.busy_ns(), 0);
  counter.add(proto::COMPUTE, proto::OPTIMIZER, 5, 8);
  EXPECT_EQ(counter.take(2).compute_ns(), 3);
}

}  // namespace
}  // namespace eppsim
