#include "runtime/trace_merge.h"

#include <gtest/gtest.h>

#include <vector>

#include "schedule/trace_events.h"

namespace eppsim::runtime {
namespace {

proto::Trace rank_trace(std::uint32_t rank, std::int64_t start_ns, std::int64_t end_ns) {
  proto::Trace t;
  t.set_scenario("s");
  t.set_strategy("x");
  t.set_engine("cpu");
  t.set_num_ranks(2);
  t.add_stream_names("compute");
  t.set_memory_limit_bytes(1000);
  add_event(*t.mutable_op_events(),
            {.rank = rank, .op = 0, .kind = proto::COMPUTE, .start_ns = start_ns, .end_ns = end_ns});
  auto* m = t.add_memory();
  m->set_rank(rank);
  m->set_time_ns(start_ns);
  m->set_bytes(10);
  return t;
}

// Rank 1's clock started 2 ms after rank 0's: its times map onto rank 0's with +2 ms.
TEST(TraceMerge, ShiftsEachRankByItsOffsetAndStartsAtZero) {
  const std::vector<proto::Trace> traces{rank_trace(0, 1'000'000, 5'000'000), rank_trace(1, 500'000, 4'000'000)};
  const std::vector<double> offsets{0.0, 2e-3};
  const proto::Trace m = merge_traces(traces, offsets);
  ASSERT_EQ(events_of(m).size(), 2);
  EXPECT_EQ(events_of(m)[0].rank(), 0u);
  EXPECT_EQ(events_of(m)[0].start_ns(), 0);  // earliest start: rank 0's at 1 ms
  EXPECT_EQ(events_of(m)[0].end_ns(), 4'000'000);
  EXPECT_EQ(events_of(m)[1].start_ns(), 1'500'000);  // 0.5 ms + 2 ms - 1 ms
  EXPECT_EQ(events_of(m)[1].end_ns(), 5'000'000);
  EXPECT_EQ(m.step_time_ns(), 5'000'000);
  ASSERT_EQ(m.memory_size(), 2);
  EXPECT_EQ(m.memory(1).time_ns(), 1'500'000);
  EXPECT_EQ(m.num_ranks(), 2u);
  EXPECT_EQ(m.engine(), "cpu");
  EXPECT_EQ(m.scenario(), "s");
  EXPECT_EQ(m.memory_limit_bytes(), 1000u);
  EXPECT_EQ(m.stream_names_size(), 1);
}

TEST(TraceMerge, RejectsMismatchedInputs) {
  const std::vector<proto::Trace> traces{rank_trace(0, 0, 1), rank_trace(0, 0, 1)};
  EXPECT_THROW(merge_traces(traces, std::vector<double>{0.0}), std::invalid_argument);
  EXPECT_THROW(merge_traces(traces, std::vector<double>{0.0, 0.0}), std::invalid_argument);  // rank 0's event in trace 1
}

TEST(TraceMerge, StepTimeSpansEveryRankOnTheReferenceClock) {
  const std::vector<RankSpan> spans{{0.0, 1.0}, {0.5, 1.2}};
  EXPECT_DOUBLE_EQ(merged_step_time_s(spans, std::vector<double>{0.0, 0.0}), 1.2);
  EXPECT_DOUBLE_EQ(merged_step_time_s(spans, std::vector<double>{0.0, -1.0}), 1.5);  // rank 1 spans -0.5 .. 0.2
  const auto span = trace_span(rank_trace(0, 1'000, 3'000));
  EXPECT_DOUBLE_EQ(span.start_s, 1e-6);
  EXPECT_DOUBLE_EQ(span.end_s, 3e-6);
}

// The peer's clock is 10 s behind: a symmetric exchange gives exactly +10 s; of
// several, the one with the smallest round trip wins (the others are skewed by
// a late answer).
TEST(ClockOffset, SmallestRoundTripWins) {
  const std::vector<PingPong> exchanges{
      {100.0, 90.0 + 0.004, 100.010},  // round trip 10 ms, answer 1 ms late: estimate +10.001
      {101.0, 91.0 + 0.0005, 101.001},  // round trip 1 ms, symmetric: exactly +10
      {102.0, 92.0, 102.005},
  };
  EXPECT_NEAR(estimate_clock_offset(exchanges), 10.0, 1e-9);
  EXPECT_THROW(estimate_clock_offset({}), std::invalid_argument);
}

// The error is at most half the round trip, whatever the asymmetry.
TEST(ClockOffset, ErrorBoundedByHalfTheRoundTrip) {
  const double true_offset = -3.25;
  for (const double there : {0.0, 0.2e-3, 0.7e-3, 1e-3}) {
    const double sent = 50.0;
    const double arrival = sent + there;  // reference clock
    const PingPong p{sent, arrival - true_offset, sent + 1e-3};
    EXPECT_LE(std::abs(estimate_clock_offset(std::vector<PingPong>{p}) - true_offset), 0.5e-3 + 1e-12);
  }
}

}  // namespace
}  // namespace eppsim::runtime
