#include "sim/trace_diff.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedule/trace_fixture.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using testing::two_rank_trace;

TEST(TraceDiff, SameScheduleSlowerByHalf) {
  const auto base = two_rank_trace("analytic");
  const auto slower = two_rank_trace("flow", 1.5);
  const auto d = diff_traces(base, slower, "base.pb", "new.pb", 3);
  EXPECT_TRUE(d.same_schedule());
  EXPECT_EQ(d.schedule_difference(), "");
  EXPECT_NEAR(d.step_time_change_s(), 205e-9, 1e-15);
  EXPECT_NEAR(d.step_time_relative_change(), 0.5, 1e-12);
  ASSERT_EQ(d.kinds_size(), 5);  // forward, backward, send, recv, all-reduce (memory left out)
  EXPECT_EQ(d.kinds(0).kind(), "compute/forward");
  EXPECT_EQ(d.kinds(0).base_ops(), 2u);
  EXPECT_NEAR(d.kinds(0).relative_change(), 0.5, 1e-12);
  ASSERT_EQ(d.per_rank_size(), 2);
  EXPECT_NEAR(d.per_rank(0).busy_change_s(), 0.5 * 380e-9, 1e-15);
  // The backward (200 ns -> 300 ns) grew most.
  ASSERT_EQ(d.top_op_regressions_size(), 3);
  EXPECT_EQ(d.top_op_regressions(0).rank(), 0u);
  EXPECT_EQ(d.top_op_regressions(0).op(), 2u);
  EXPECT_EQ(d.top_op_regressions(0).kind(), "compute/backward");
  EXPECT_NEAR(d.top_op_regressions(0).change_s(), 100e-9, 1e-15);
  EXPECT_GE(d.top_op_regressions(1).change_s(), d.top_op_regressions(2).change_s());
  EXPECT_EQ(d.top_rank_kind_regressions(0).kind(), "compute/backward");
}

TEST(TraceDiff, DifferentSchedulesAreComparedByKindAndRank) {
  const auto base = two_rank_trace("analytic");
  auto other = two_rank_trace("analytic");
  other.mutable_op_events()->set_size_bytes(1, 8192);
  OpEventFields extra = fields_of(events_of(other)[0]);
  extra.op = 9;
  add_event(*other.mutable_op_events(), extra);
  const auto d = diff_traces(base, other, "a", "b");
  EXPECT_FALSE(d.same_schedule());
  EXPECT_EQ(d.schedule_difference(), "rank 0 op 1: size_bytes 4096 vs 8192");
  EXPECT_EQ(d.top_op_regressions_size(), 0);
  EXPECT_EQ(d.kinds(0).new_ops(), 3u);
  ASSERT_EQ(d.top_rank_kind_regressions_size(), 1);
  EXPECT_EQ(d.top_rank_kind_regressions(0).rank(), 0u);
  EXPECT_NEAR(d.top_rank_kind_regressions(0).change_s(), 100e-9, 1e-15);

  auto fewer_ranks = base;
  fewer_ranks.set_num_ranks(1);
  fewer_ranks.clear_op_events();
  add_event(*fewer_ranks.mutable_op_events(), fields_of(events_of(base)[0]));
  const auto r = diff_traces(base, fewer_ranks, "a", "c");
  EXPECT_EQ(r.schedule_difference(), "num_ranks 2 vs 1");
  EXPECT_EQ(r.per_rank_size(), 2);
  EXPECT_EQ(r.per_rank(1).new_busy_s(), 0.0);
}

TEST(TraceDiff, ATraceWithoutStepTimeIsBadInput) {
  auto bad = two_rank_trace("analytic");
  bad.set_step_time_ns(0);
  EXPECT_THROW(diff_traces(two_rank_trace("analytic"), bad, "a", "b"), InputError);
}

}  // namespace
}  // namespace eppsim
