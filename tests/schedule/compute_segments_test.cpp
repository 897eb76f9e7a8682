#include "schedule/compute_segments.h"

#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

using Pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// (tokens, context_tokens) of each segment.
Pairs pairs(const std::vector<Segment>& segments) {
  Pairs out;
  for (const auto& s : segments) out.emplace_back(s.tokens, s.context_tokens);
  return out;
}

TEST(ComputeSegments, WritesAndReadsBothArraysInOrder) {
  proto::ComputeOp op;
  EXPECT_TRUE(segments_of(op).empty());
  EXPECT_EQ(new_tokens_of(op), 0u);
  add_segment(op, Segment{4096, 0});
  add_segment(op, Segment{1024, 8192});
  ASSERT_EQ(op.segment_tokens_size(), 2);
  EXPECT_EQ(op.segment_context_tokens(1), 8192u);
  const Pairs expected{{4096, 0}, {1024, 8192}};
  EXPECT_EQ(pairs(segments_of(op)), expected);
  EXPECT_EQ(new_tokens_of(op), 5120u);
  std::vector<Segment> reused{{1, 1}, {2, 2}, {3, 3}};
  read_segments(op, reused);
  EXPECT_EQ(pairs(reused), expected);
}

TEST(ComputeSegments, ConvertsVersion2SegmentMessagesOnEveryComputeOp) {
  proto::Schedule schedule;
  auto* first = schedule.add_programs()->add_ops()->mutable_compute();
  auto* s = first->add_segments();
  s->set_tokens(300);
  s->set_context_tokens(700);
  first->add_segments()->set_tokens(50);
  auto* second_rank = schedule.add_programs();
  second_rank->add_ops()->mutable_send()->set_size_bytes(64);
  auto* packed = second_rank->add_ops()->mutable_compute();
  add_segment(*packed, Segment{10, 0});

  EXPECT_EQ(convert_segment_messages(schedule), 1u);
  const auto& converted = schedule.programs(0).ops(0).compute();
  EXPECT_EQ(converted.segments_size(), 0);
  EXPECT_EQ(pairs(segments_of(converted)), (Pairs{{300, 700}, {50, 0}}));
  EXPECT_EQ(pairs(segments_of(schedule.programs(1).ops(1).compute())), (Pairs{{10, 0}}));
  EXPECT_EQ(convert_segment_messages(schedule), 0u);  // nothing left to convert
}

}  // namespace
}  // namespace eppsim
