#include "traces/shared_compute.h"

#include <gtest/gtest.h>

namespace eppsim {
namespace {

proto::ComputeOp work(proto::Phase phase, std::uint32_t first_layer) {
  proto::ComputeOp c;
  c.set_phase(phase);
  c.set_first_layer(first_layer);
  c.set_layer_count(1);
  c.add_segment_tokens(512);
  c.add_segment_context_tokens(0);
  return c;
}

TEST(SharedComputes, EqualWorksShareAnIndexInFirstUseOrder) {
  proto::Schedule schedule;
  SharedComputes table;
  EXPECT_EQ(table.index_of(schedule, work(proto::FORWARD, 3)), 0u);
  EXPECT_EQ(table.index_of(schedule, work(proto::BACKWARD, 3)), 1u);
  EXPECT_EQ(table.index_of(schedule, work(proto::FORWARD, 3)), 0u);
  EXPECT_EQ(table.index_of(schedule, work(proto::FORWARD, 4)), 2u);
  EXPECT_EQ(table.size(), 3u);
  ASSERT_EQ(schedule.shared_computes_size(), 3);
  EXPECT_EQ(schedule.shared_computes(1).phase(), proto::BACKWARD);
  EXPECT_EQ(schedule.shared_computes(2).first_layer(), 4u);
}

TEST(SharedComputes, ComputeOfReadsInlineAndSharedWork) {
  proto::Schedule schedule;
  *schedule.add_shared_computes() = work(proto::RECOMPUTE, 7);
  auto* program = schedule.add_programs();
  auto* shared = program->add_ops();
  shared->set_shared_compute(0);
  auto* inline_op = program->add_ops();
  *inline_op->mutable_compute() = work(proto::FORWARD, 2);
  auto* send = program->add_ops();
  send->mutable_send()->set_peer(0);
  EXPECT_TRUE(is_compute(*shared));
  EXPECT_TRUE(is_compute(*inline_op));
  EXPECT_FALSE(is_compute(*send));
  EXPECT_EQ(compute_of(schedule, *shared).first_layer(), 7u);
  EXPECT_EQ(compute_of(schedule, *inline_op).first_layer(), 2u);
}

TEST(SharedComputes, InliningGivesEveryOpItsOwnCopyAndEmptiesTheTable) {
  proto::Schedule schedule;
  *schedule.add_shared_computes() = work(proto::FORWARD, 1);
  for (int r = 0; r < 2; ++r) schedule.add_programs()->add_ops()->set_shared_compute(0);
  EXPECT_EQ(inline_shared_computes(schedule), 2u);
  EXPECT_EQ(schedule.shared_computes_size(), 0);
  for (const auto& program : schedule.programs()) {
    ASSERT_TRUE(program.ops(0).has_compute());
    EXPECT_EQ(program.ops(0).compute().first_layer(), 1u);
  }
  EXPECT_EQ(inline_shared_computes(schedule), 0u);
}

// An index past the table is left for validate_schedule to name, and the table
// stays, so that the message counts it.
TEST(SharedComputes, InliningLeavesAnIndexOutOfRange) {
  proto::Schedule schedule;
  *schedule.add_shared_computes() = work(proto::FORWARD, 1);
  auto* program = schedule.add_programs();
  program->add_ops()->set_shared_compute(0);
  program->add_ops()->set_shared_compute(5);
  EXPECT_EQ(inline_shared_computes(schedule), 1u);
  EXPECT_EQ(program->ops(1).shared_compute(), 5u);
  EXPECT_EQ(schedule.shared_computes_size(), 1);
}

}  // namespace
}  // namespace eppsim
