#include "schedule/shared_compute.h"

#include <gtest/gtest.h>

#include "schedule/program_ops.h"

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

// Every COMPUTE op names its work in the table (schema version 5).
TEST(SharedComputes, ComputeOfReadsTheWorkTheOpNames) {
  proto::Schedule schedule;
  SharedComputes table;
  auto& program = *schedule.add_programs();
  const auto recompute = table.index_of(schedule, work(proto::RECOMPUTE, 7));
  const auto forward = table.index_of(schedule, work(proto::FORWARD, 2));
  add_op(program, OpFields::compute(0, forward));
  add_op(program, OpFields::send(0, 0, 64, 1));
  add_op(program, OpFields::compute(0, recompute));
  const auto ops = ops_of(program);
  EXPECT_TRUE(ops[0].is_compute());
  EXPECT_FALSE(ops[1].is_compute());
  EXPECT_TRUE(ops[2].is_compute());
  EXPECT_EQ(compute_of(schedule, ops[0]).first_layer(), 2u);
  EXPECT_EQ(compute_of(schedule, ops[0]).phase(), proto::FORWARD);
  EXPECT_EQ(compute_of(schedule, ops[2]).first_layer(), 7u);
  EXPECT_EQ(compute_of(schedule, ops[2]).phase(), proto::RECOMPUTE);
}

// The table goes on after entries a schedule already lists (a version-4 file's
// shared computes, when convert_op_messages lists its inline works).
TEST(SharedComputes, NewEntriesFollowTheSchedulesOwn) {
  proto::Schedule schedule;
  *schedule.add_shared_computes() = work(proto::FORWARD, 1);
  SharedComputes table;
  EXPECT_EQ(table.index_of(schedule, work(proto::BACKWARD, 1)), 1u);
  EXPECT_EQ(table.index_of(schedule, work(proto::BACKWARD, 1)), 1u);
  EXPECT_EQ(table.size(), 1u);
  ASSERT_EQ(schedule.shared_computes_size(), 2);
  EXPECT_EQ(schedule.shared_computes(0).phase(), proto::FORWARD);
  EXPECT_EQ(schedule.shared_computes(1).phase(), proto::BACKWARD);
}

}  // namespace
}  // namespace eppsim
