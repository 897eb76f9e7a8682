#include "schedule/rank_busy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

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

// Ops of a few streams that run one after another with gaps, their starts and
// ends given in time order, as a simulator runs them: the same figures as from
// all intervals at once, empty intervals and memory ops included.
TEST(RankBusyInTimeOrder, GivesTheCounterFigures) {
  std::mt19937 rng(7);
  struct Op {
    proto::OpKind kind;
    proto::Phase phase;
    std::int64_t start, end;
  };
  std::vector<Op> ops;
  constexpr proto::OpKind kKinds[] = {proto::COMPUTE, proto::COMPUTE, proto::SEND, proto::COLLECTIVE, proto::MEMORY};
  constexpr proto::Phase kPhases[] = {proto::FORWARD, proto::RECOMPUTE, proto::BACKWARD};
  for (int stream = 0; stream < 3; ++stream) {
    std::int64_t t = std::uniform_int_distribution<std::int64_t>(0, 50)(rng);
    for (int i = 0; i < 400; ++i) {
      const std::int64_t start = t + std::uniform_int_distribution<std::int64_t>(0, 30)(rng);
      const std::int64_t end = start + std::uniform_int_distribution<std::int64_t>(0, 60)(rng);
      ops.push_back({kKinds[rng() % 5], kPhases[rng() % 3], start, end});
      t = end;
    }
  }
  // Every start and end, in time order (an op's start before its end).
  struct Event {
    std::int64_t at_ns;
    bool start;
    std::size_t op;
  };
  std::vector<Event> events;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    events.push_back({ops[i].start, true, i});
    events.push_back({ops[i].end, false, i});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at_ns < b.at_ns; });
  RankBusyCounter counter;
  RankBusyInTimeOrder online;
  for (const Op& op : ops) counter.add(op.kind, op.phase, op.start, op.end);
  for (const Event& e : events) {
    const Op& op = ops[e.op];
    if (e.start) {
      online.start(op.kind, op.phase, e.at_ns);
    } else {
      online.end(op.kind, op.phase, e.at_ns);
    }
  }
  const proto::RankBusy expected = counter.take(4);
  EXPECT_GT(expected.busy_ns(), expected.compute_or_recompute_ns());
  EXPECT_GT(expected.compute_or_recompute_ns(), expected.compute_ns());
  EXPECT_EQ(online.figures(4).SerializeAsString(), expected.SerializeAsString());
}

TEST(RankBusyInTimeOrder, RefusesEventsOutOfOrder) {
  RankBusyInTimeOrder online;
  online.start(proto::COMPUTE, proto::FORWARD, 100);
  EXPECT_THROW(online.start(proto::SEND, proto::PHASE_UNSPECIFIED, 50), std::logic_error);  // before the last event
  EXPECT_THROW(online.end(proto::SEND, proto::PHASE_UNSPECIFIED, 150), std::logic_error);   // never started
  online.end(proto::COMPUTE, proto::FORWARD, 300);
  online.start(proto::MEMORY, proto::PHASE_UNSPECIFIED, 10);  // memory counts nowhere, whenever it comes
  EXPECT_EQ(online.figures(0).compute_ns(), 200);
  EXPECT_EQ(online.figures(0).busy_ns(), 200);
}

// An op that starts and never ends counts up to the rank's last event.
TEST(RankBusyInTimeOrder, AnOpStillRunningCountsToTheLastEvent) {
  RankBusyInTimeOrder online;
  online.start(proto::COLLECTIVE, proto::PHASE_UNSPECIFIED, 0);
  online.start(proto::COMPUTE, proto::FORWARD, 100);
  online.end(proto::COMPUTE, proto::FORWARD, 250);
  EXPECT_EQ(online.figures(0).compute_ns(), 150);
  EXPECT_EQ(online.figures(0).busy_ns(), 250);
}

}  // namespace
}  // namespace eppsim
