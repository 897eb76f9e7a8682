#include "traces/op_event_join.h"

#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "schedule/trace_events.h"
#include "tests/schedule/trace_fixture.h"

namespace eppsim {
namespace {

using testing::two_rank_trace;
using OpKey = std::pair<std::uint32_t, std::uint32_t>;  // (rank, op index)
using Pairs = std::vector<std::pair<OpKey, OpKey>>;

struct Joined {
  Pairs pairs;  // (rank, op) of each side's event, in the order matched
  std::string difference;
};

Joined join(const proto::Trace& a, const proto::Trace& b, std::uint64_t batch_events = 0) {
  const TraceInMemory in_a(a, "a.pb"), in_b(b, "b.pb");
  const TraceTally a_tally = tally_trace(in_a), b_tally = tally_trace(in_b);
  Joined joined;
  joined.difference = join_op_events(
      {in_a, a_tally, "A"}, {in_b, b_tally, "B"},
      [&](const OpEventFields& x, const OpEventFields& y) {
        joined.pairs.push_back({{x.rank, x.op}, {y.rank, y.op}});
      },
      batch_events);
  return joined;
}

// The events of `trace` backwards, so that the join has to sort them.
proto::Trace backwards(const proto::Trace& trace) {
  proto::Trace reversed = trace;
  proto::OpEvents events;
  for (int i = events_of(trace).size() - 1; i >= 0; --i) add_event(events, fields_of(events_of(trace)[i]));
  *reversed.mutable_op_events() = std::move(events);
  return reversed;
}

TEST(JoinOpEvents, MatchesEveryOpInRankAndOpOrderWhateverTheBatches) {
  const proto::Trace a = two_rank_trace("analytic"), b = backwards(two_rank_trace("cpu", 2.0, 7));
  const Joined one_batch = join(a, b);
  EXPECT_EQ(one_batch.difference, "");
  const Pairs expected = {{{0, 0}, {0, 0}}, {{0, 1}, {0, 1}}, {{0, 2}, {0, 2}}, {{0, 3}, {0, 3}},
                          {{1, 0}, {1, 0}}, {{1, 1}, {1, 1}}, {{1, 2}, {1, 2}}, {{1, 3}, {1, 3}}};
  EXPECT_EQ(one_batch.pairs, expected);
  // A batch of one event: a rank a batch.
  const Joined rank_by_rank = join(a, b, 1);
  EXPECT_EQ(rank_by_rank.difference, "");
  EXPECT_EQ(rank_by_rank.pairs, expected);
}

TEST(JoinOpEvents, StopsAtTheFirstDifferenceByOp) {
  proto::Trace a = two_rank_trace("analytic"), b = two_rank_trace("cpu");
  b.mutable_op_events()->set_op(5, 9);  // rank 1's op 1 becomes op 9
  a.mutable_op_events()->set_size_bytes(6, 5);  // rank 1's op 2: after the first difference
  for (const std::uint64_t batch : {std::uint64_t{0}, std::uint64_t{1}}) {
    const Joined joined = join(a, b, batch);
    EXPECT_EQ(joined.difference, "rank 1 op 1 is in A only") << batch;
    EXPECT_EQ(joined.pairs.size(), 5u) << batch;  // rank 0's four ops and rank 1's op 0
  }
  b = two_rank_trace("cpu");
  b.mutable_op_events()->set_size_bytes(1, 8192);
  EXPECT_EQ(join(a, b).difference, "rank 0 op 1: size_bytes 4096 vs 8192");
}

TEST(JoinOpEvents, AnOpListedTwiceIsBadInput) {
  proto::Trace a = two_rank_trace("analytic");
  a.mutable_op_events()->set_op(1, 0);
  try {
    join(a, two_rank_trace("cpu"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "a.pb: events: rank 0 op 0 appears twice");
  }
}

TEST(TallyTrace, CountsEachRanksEventsAndItsBusyTime) {
  proto::Trace t = two_rank_trace("analytic", 1.0, 5);
  const TraceTally tally = tally_trace(TraceInMemory(t));
  EXPECT_EQ(tally.earliest_start_ns, 5);
  EXPECT_EQ(tally.events_per_rank, (std::vector<std::uint64_t>{4, 4}));
  // Rank 0: [0, 120) and [150, 410); rank 1: [100, 260), memory ops not counted.
  EXPECT_EQ(tally.busy_ns, (std::vector<std::int64_t>{380, 160}));
  // Busy figures, when the trace lists them, are taken as they are.
  auto* busy = t.add_busy();
  busy->set_rank(1);
  busy->set_busy_ns(7);
  EXPECT_EQ(tally_trace(TraceInMemory(t)).busy_ns, (std::vector<std::int64_t>{0, 7}));
}

}  // namespace
}  // namespace eppsim
