// Identical replicas stored once: the layout's arithmetic, the rules a
// Schedule of them follows, and writing the other replicas out (peers, groups
// inside a replica and works split over them moved to the replica).
#include "schedule/identical_replicas.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "schedule/schedule_validation.h"
#include "tests/schedule/schedule_fixture.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

// Two stages of two replicas, epp's layout with SP 1: rank = stage * 2 +
// replica (stride 1, copies 2). Replica 0 (ranks 0 and 2) sends a boundary
// from stage 0 to stage 1, runs a collective over a group of its own two
// ranks, and computes a work split over that group; each stage reduces its
// gradients over both replicas.
struct TwoReplicas {
  TwoReplicas() : hand(4) {
    pipeline = hand.group({0, 2});
    grads_stage0 = hand.group({0, 1});
    grads_stage1 = hand.group({2, 3});
    proto::ComputeOp split = testing::HandSchedule::forward_layer();
    auto* s = split.add_splits();
    s->set_kind(proto::SEQUENCE_PARALLEL);
    s->set_group(pipeline);
    split.set_shards(2);
    const auto a = hand.compute(0, 0, {}, split);
    hand.send(0, 1, 2, 4096, 7, {a});
    const auto b = hand.recv(2, 1, 0, 4096, 7);
    hand.compute(2, 0, {b}, split);
    hand.collective(0, 1, pipeline, 1024, proto::ALL_GATHER);
    hand.collective(2, 1, pipeline, 1024, proto::ALL_GATHER);
    hand.collective(0, 1, grads_stage0, 2048);
    hand.collective(2, 1, grads_stage1, 2048);
    hand.schedule().mutable_identical_replicas()->set_copies(2);
    hand.schedule().mutable_identical_replicas()->set_stride(1);
  }
  proto::Schedule& schedule() { return hand.schedule(); }
  std::string error() {
    try {
      check_identical_replicas(schedule(), "s.pb");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  testing::HandSchedule hand;
  std::uint32_t pipeline = 0, grads_stage0 = 0, grads_stage1 = 0;
};

TEST(ReplicaLayout, NumbersReplicasAndCopies) {
  const ReplicaLayout epp{4, 8};  // 4 replicas of SP 8: rank = (stage * 4 + replica) * 8 + i
  EXPECT_EQ(epp.replica_of(0), 0u);
  EXPECT_EQ(epp.replica_of(8), 1u);
  EXPECT_EQ(epp.replica_of(31), 3u);
  EXPECT_EQ(epp.replica_of(32 + 5), 0u);  // stage 1, replica 0
  EXPECT_EQ(epp.copy_in(5, 3), 29u);
  EXPECT_EQ(epp.copy_in(29, 0), 5u);
  EXPECT_EQ(epp.copy_in(32 + 8 + 1, 2), 32u + 16u + 1u);
}

TEST(IdenticalReplicas, ATemplateFollowsTheRules) {
  TwoReplicas two;
  EXPECT_EQ(two.error(), "");
  EXPECT_EQ(live_ranks(two.schedule()), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(source_ranks(two.schedule()), (std::vector<std::uint32_t>{0, 0, 2, 2}));
  EXPECT_EQ(represented_op_count(two.schedule()), 16u);  // 4 ops on each of 4 ranks
}

TEST(IdenticalReplicas, BrokenLayoutsAreRefusedNamingTheRule) {
  {
    TwoReplicas two;
    two.schedule().mutable_identical_replicas()->set_copies(1);
    EXPECT_THAT(two.error(), HasSubstr("s.pb: identical_replicas.copies: must be >= 2, got 1"));
  }
  {
    TwoReplicas two;
    two.schedule().mutable_identical_replicas()->set_copies(3);
    EXPECT_THAT(two.error(), HasSubstr("must divide num_ranks (4) into whole replicas"));
  }
  {
    TwoReplicas two;
    two.hand.compute(3, 0);
    EXPECT_THAT(two.error(), HasSubstr("rank 3 (replica 1) has a program"));
  }
  {
    TwoReplicas two;
    two.hand.send(0, 1, 3, 8, 9);
    EXPECT_THAT(two.error(), HasSubstr("rank 0 op 4: its peer 3 is in replica 1"));
  }
  {
    TwoReplicas two;
    two.hand.group({0, 1, 2});  // rank 2's copy, 3, is missing
    EXPECT_THAT(two.error(), HasSubstr("groups[3] spans replicas but does not list every copy"));
  }
  {
    TwoReplicas two;
    two.schedule().mutable_identical_replicas()->add_representative(0);
    two.schedule().mutable_identical_replicas()->add_representative(1);
    EXPECT_THAT(two.error(), HasSubstr("identical_replicas.representative: must be empty"));
  }
}

TEST(IdenticalReplicas, ExpandingWritesEachReplicaInItsOwnRanks) {
  TwoReplicas two;
  const proto::Schedule full = expand_identical_replicas(two.schedule());
  EXPECT_FALSE(full.has_identical_replicas());
  EXPECT_NO_THROW(validate_schedule(full));
  // Replica 1's stage 0 sends to its own stage 1, rank 3.
  const auto rank1 = ops_of(full, 1);
  ASSERT_EQ(rank1.size(), 4u);
  EXPECT_TRUE(rank1[1].is_send());
  EXPECT_EQ(rank1[1].peer(), 3u);
  EXPECT_EQ(ops_of(full, 3)[0].peer(), 1u);
  // Its all-gather runs over the group's copy, {1, 3}; the gradients' group
  // spans both replicas and stays.
  ASSERT_EQ(full.groups_size(), 4);
  const auto copy = rank1[2].group();
  EXPECT_EQ(copy, 3u);
  EXPECT_THAT(full.groups(3).ranks(), ::testing::ElementsAre(1u, 3u));
  EXPECT_THAT(full.groups(3).name(), HasSubstr("(in replica 1)"));
  EXPECT_EQ(ops_of(full, 3)[2].group(), copy);
  EXPECT_EQ(rank1[3].group(), two.grads_stage0);
  // Its compute is split over that copy too.
  const auto& work = full.shared_computes(static_cast<int>(rank1[0].shared_compute()));
  EXPECT_EQ(work.splits(0).group(), copy);
  EXPECT_EQ(ops_of(full, 3)[1].shared_compute(), rank1[0].shared_compute());
  // The template is left as it was.
  EXPECT_EQ(two.schedule().programs(1).code_size(), 0);
}

TEST(IdenticalReplicas, RepresentativesAloneAreWrittenOut) {
  TwoReplicas two;
  const std::vector<std::uint32_t> both{0, 1};
  const proto::Schedule each = with_representatives(two.schedule(), both);
  EXPECT_EQ(each.programs(1).code_size(), 4);
  EXPECT_EQ(live_ranks(each), (std::vector<bool>{true, true, true, true}));
  const std::vector<std::uint32_t> one{0, 0};
  const proto::Schedule first = with_representatives(two.schedule(), one);
  EXPECT_EQ(first.programs(1).code_size(), 0);
  EXPECT_EQ(source_ranks(first), (std::vector<std::uint32_t>{0, 0, 2, 2}));
}

}  // namespace
}  // namespace eppsim
