#include "runtime/comm_plan.h"

#include <gtest/gtest.h>

#include "tests/runtime/runtime_fixture.h"
#include "schedule/program_ops.h"

namespace eppsim::runtime {
namespace {

// One op, alone in a program, for comm_shape to read.
class OneOp {
 public:
  explicit OneOp(const OpFields& fields) { add_op(program_, fields); }
  OpView view() const { return ops_of(program_)[0]; }

 private:
  proto::RankProgram program_;
};

OneOp collective(proto::CollectiveKind kind, std::uint64_t bytes, std::uint32_t group = 0) {
  return OneOp(OpFields::collective(0, kind, group, bytes));
}

TEST(CommPlan, ElementsRoundUp) {
  EXPECT_EQ(comm_elements(0), 0u);
  EXPECT_EQ(comm_elements(1), 1u);
  EXPECT_EQ(comm_elements(4), 1u);
  EXPECT_EQ(comm_elements(4097), 1025u);
}

TEST(CommPlan, PointToPointKeepsPeerTagAndSize) {
  const OneOp send(OpFields::send(0, 3, 4096, 17));
  const auto s = comm_shape(send.view(), {});
  EXPECT_EQ(s.kind, CommKind::SendRecv);
  EXPECT_TRUE(s.sends);
  EXPECT_EQ(s.peer, 3u);
  EXPECT_EQ(s.tag, 17u);
  EXPECT_EQ(s.count, 1024u);
  EXPECT_EQ(s.send_elements, 1024u);
  EXPECT_EQ(s.recv_elements, 0u);
  const OneOp recv(OpFields::recv(0, 1, 10, 2));
  const auto r = comm_shape(recv.view(), {});
  EXPECT_EQ(r.kind, CommKind::SendRecv);
  EXPECT_FALSE(r.sends);
  EXPECT_EQ(r.count, 3u);
  EXPECT_EQ(r.recv_elements, 3u);
  EXPECT_EQ(r.send_elements, 0u);
}

// size_bytes per kind as schedule.proto defines it (the per-rank buffer).
TEST(CommPlan, CollectiveCountsFollowTheScheduleSizes) {
  const std::vector<std::uint32_t> sizes{4};
  const auto ar = comm_shape(collective(proto::ALL_REDUCE, 4096).view(), sizes);
  EXPECT_EQ(ar.kind, CommKind::AllReduce);
  EXPECT_EQ(ar.group_size, 4u);
  EXPECT_EQ(ar.count, 1024u);
  EXPECT_EQ(ar.send_elements, 1024u);
  EXPECT_EQ(ar.recv_elements, 1024u);
  const auto ag = comm_shape(collective(proto::ALL_GATHER, 4096).view(), sizes);  // each rank's input
  EXPECT_EQ(ag.count, 1024u);
  EXPECT_EQ(ag.send_elements, 1024u);
  EXPECT_EQ(ag.recv_elements, 4096u);
  const auto rs = comm_shape(collective(proto::REDUCE_SCATTER, 4096).view(), sizes);  // the whole vector
  EXPECT_EQ(rs.count, 256u);
  EXPECT_EQ(rs.send_elements, 1024u);
  EXPECT_EQ(rs.recv_elements, 256u);
  const auto a2a = comm_shape(collective(proto::ALL_TO_ALL, 4096).view(), sizes);  // the send buffer
  EXPECT_EQ(a2a.count, 256u);
  EXPECT_EQ(a2a.send_elements, 1024u);
  EXPECT_EQ(a2a.recv_elements, 1024u);
  const auto bc = comm_shape(collective(proto::BROADCAST, 4096).view(), sizes);
  EXPECT_EQ(bc.kind, CommKind::Broadcast);
  EXPECT_EQ(bc.count, 1024u);
}

TEST(CommPlan, BlocksThatDoNotDivideRoundUp) {
  const auto rs = comm_shape(collective(proto::REDUCE_SCATTER, 40).view(), {3});  // 10 elements over 3
  EXPECT_EQ(rs.count, 4u);
  EXPECT_EQ(rs.send_elements, 12u);
}

TEST(CommPlan, RejectsOtherOpsAndUnknownGroups) {
  EXPECT_THROW(comm_shape(OneOp(OpFields::compute(0, 0)).view(), {}), std::invalid_argument);
  EXPECT_THROW(comm_shape(OneOp(OpFields::memory(0, true, 8, proto::COMM_BUFFER)).view(), {}), std::invalid_argument);
  EXPECT_THROW(comm_shape(collective(proto::ALL_REDUCE, 8, 2).view(), {2}), std::invalid_argument);
  EXPECT_THROW(comm_shape(collective(proto::COLLECTIVE_KIND_UNSPECIFIED, 8).view(), {2}), std::invalid_argument);
}

TEST(CommPlan, GroupsOfARankInScheduleOrder) {
  const auto s = testing::allreduce_schedule();
  EXPECT_EQ(group_sizes(s), (std::vector<std::uint32_t>{2, 2}));
  EXPECT_EQ(groups_of_rank(s, 1), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(position_in_group(s.groups(1), 1), 0u);
  EXPECT_EQ(position_in_group(s.groups(1), 0), 1u);
  EXPECT_THROW(position_in_group(s.groups(1), 5), std::invalid_argument);
  testing::HandSchedule h(3);
  h.group({0, 2});
  h.group({1, 2});
  EXPECT_EQ(groups_of_rank(h.schedule(), 0), (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(groups_of_rank(h.schedule(), 2), (std::vector<std::uint32_t>{0, 1}));
}

TEST(CommPlan, MaxTag) {
  EXPECT_EQ(max_tag(testing::pipeline_schedule()), 101u);
  EXPECT_EQ(max_tag(testing::allreduce_schedule()), 0u);
}

TEST(CommPlan, DescribeNamesRankOpAndWhat) {
  const auto p = testing::pipeline_schedule();
  EXPECT_EQ(describe_op(p, {1, 1}), "rank 1 op 1 (RECV of 256 KiB from rank 0, tag 0)");
  EXPECT_EQ(describe_op(p, {0, 2}), "rank 0 op 2 (SEND of 256 KiB to rank 1, tag 0)");
  EXPECT_EQ(describe_op(p, {0, 1}), "rank 0 op 1 (COMPUTE forward, stage 0 chunk 0)");
  const auto a = testing::allreduce_schedule();
  EXPECT_EQ(describe_op(a, {0, 2}), "rank 0 op 2 (all-reduce of 1 MiB on group 0 [0, 1])");
}

}  // namespace
}  // namespace eppsim::runtime
