#include "traces/executor/schedule_validation.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/errors.h"
#include "schedule_fixture.h"
#include "traces/schedule_schema.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using testing::HandSchedule;

std::string error_of(const proto::Schedule& schedule) {
  try {
    validate_schedule(schedule);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Two ranks in a sequence-parallel group of 2 and a tensor-parallel group of 1.
HandSchedule split_schedule() {
  HandSchedule h(2);
  const auto sp = h.group({0, 1});
  const auto tp = h.group({0});
  h.compute(0, 0);
  auto* c = h.op(0, 0).mutable_compute();
  c->set_shards(2);
  auto* s = c->add_splits();
  s->set_kind(proto::SEQUENCE_PARALLEL);
  s->set_group(sp);
  s = c->add_splits();
  s->set_kind(proto::TENSOR_PARALLEL);
  s->set_group(tp);
  return h;
}

TEST(ValidateSchedule, AcceptsWellFormedSchedulesOfEveryVersion) {
  auto h = split_schedule();
  EXPECT_EQ(error_of(h.schedule()), "");  // no header: a legacy schedule
  h.schedule().mutable_header()->set_schema_version(kScheduleSchemaVersion);
  EXPECT_EQ(error_of(h.schedule()), "");
}

TEST(ValidateSchedule, RejectsANewerSchemaVersion) {
  auto h = split_schedule();
  h.schedule().mutable_header()->set_schema_version(kScheduleSchemaVersion + 1);
  EXPECT_THAT(error_of(h.schedule()), HasSubstr("schedule: header.schema_version: " +
                                                std::to_string(kScheduleSchemaVersion + 1) +
                                                " is newer than this eppsim reads"));
}

TEST(ValidateSchedule, RejectsSegmentArraysOfDifferentLengthsAndVersion2Segments) {
  auto h = split_schedule();
  auto* c = h.op(0, 0).mutable_compute();
  c->add_segment_tokens(512);
  c->add_segment_tokens(256);
  c->add_segment_context_tokens(0);
  EXPECT_THAT(error_of(h.schedule()),
              HasSubstr("schedule: rank 0 op 0: compute.segment_context_tokens: must have one entry per segment_tokens "
                        "entry (2), got 1"));
  c->add_segment_context_tokens(512);
  EXPECT_EQ(error_of(h.schedule()), "");
  c->add_segments()->set_tokens(64);
  EXPECT_THAT(error_of(h.schedule()), HasSubstr("rank 0 op 0: compute.segments: schema version 2's segment messages"));
}

TEST(ValidateSchedule, RejectsStructuralErrors) {
  HandSchedule h(2);
  h.send(0, 1, 1, 64, 1);
  auto bad_peer = h.schedule();
  bad_peer.mutable_programs(0)->mutable_ops(0)->mutable_send()->set_peer(5);
  EXPECT_THAT(error_of(bad_peer), HasSubstr("schedule: rank 0 op 0: send peer 5 out of range"));
  auto bad_dep = h.schedule();
  bad_dep.mutable_programs(0)->mutable_ops(0)->add_deps(0);
  EXPECT_THAT(error_of(bad_dep), HasSubstr("rank 0 op 0: depends on op 0, which is not earlier"));
  auto bad_group = h.schedule();
  auto* unknown = bad_group.mutable_programs(1)->add_ops()->mutable_collective();
  unknown->set_kind(proto::ALL_REDUCE);
  unknown->set_group(3);
  EXPECT_THAT(error_of(bad_group), HasSubstr("rank 1 op 0: unknown group 3"));
  auto bad_stream = h.schedule();
  bad_stream.mutable_programs(0)->mutable_ops(0)->set_stream(2);
  EXPECT_THAT(error_of(bad_stream), HasSubstr("rank 0 op 0: stream 2 out of range (2 streams)"));
  auto no_kind = h.schedule();
  no_kind.mutable_programs(1)->add_ops();
  EXPECT_THAT(error_of(no_kind), HasSubstr("rank 1 op 0: op kind not set"));
  auto programs = h.schedule();
  programs.set_num_ranks(3);
  EXPECT_THAT(error_of(programs), HasSubstr("num_ranks is 3 but there are 2 programs"));
  auto twice = h.schedule();
  auto* g = twice.add_groups();
  g->add_ranks(1);
  g->add_ranks(1);
  EXPECT_THAT(error_of(twice), HasSubstr("groups[0]: rank 1 listed twice"));
  auto outside = h.schedule();
  outside.add_groups()->add_ranks(0);
  auto* c = outside.mutable_programs(1)->add_ops()->mutable_collective();
  c->set_kind(proto::ALL_REDUCE);
  EXPECT_THAT(error_of(outside), HasSubstr("rank 1 op 0: rank 1 is not a member of group 0"));
}

TEST(ValidateSchedule, ComputeSplitsNameGroupsOfTheRankAndMultiplyToShards) {
  auto unknown = split_schedule();
  unknown.op(0, 0).mutable_compute()->mutable_splits(1)->set_group(9);
  EXPECT_THAT(error_of(unknown.schedule()), HasSubstr("schedule: rank 0 op 0: compute.splits[1].group: unknown group 9"));
  auto foreign = split_schedule();
  foreign.compute(1, 0);
  *foreign.op(1, 0).mutable_compute() = foreign.op(0, 0).compute();
  EXPECT_THAT(error_of(foreign.schedule()),
              HasSubstr("rank 1 op 0: compute.splits[1].group: rank 1 is not a member of group 1"));
  auto shards = split_schedule();
  shards.op(0, 0).mutable_compute()->set_shards(4);
  EXPECT_THAT(error_of(shards.schedule()),
              HasSubstr("rank 0 op 0: compute.shards: must be the product of the split groups' sizes (2), got 4"));
  auto kind = split_schedule();
  kind.op(0, 0).mutable_compute()->mutable_splits(0)->set_kind(proto::SPLIT_KIND_UNSPECIFIED);
  EXPECT_THAT(error_of(kind.schedule()), HasSubstr("rank 0 op 0: compute.splits[0].kind: must be"));
}

// A shared work is checked once where it is listed; the ranks that run it must
// each belong to its split groups, and the index must be in the table.
TEST(ValidateSchedule, SharedComputesAreCheckedOnceAndPerRank) {
  auto shared = split_schedule();
  *shared.schedule().add_shared_computes() = shared.op(0, 0).compute();
  shared.op(0, 0).set_shared_compute(0);
  EXPECT_EQ(error_of(shared.schedule()), "");
  auto range = shared;
  range.op(0, 0).set_shared_compute(1);
  EXPECT_THAT(error_of(range.schedule()),
              HasSubstr("schedule: rank 0 op 0: shared_compute: index 1 out of range (1 shared computes)"));
  auto foreign = shared;
  foreign.compute(1, 0);
  foreign.op(1, 0).set_shared_compute(0);
  EXPECT_THAT(error_of(foreign.schedule()),
              HasSubstr("schedule: rank 1 op 0: shared_computes[0].splits[1].group: rank 1 is not a member of group 1"));
  auto phase = shared;
  phase.schedule().mutable_shared_computes(0)->set_phase(static_cast<proto::Phase>(99));
  EXPECT_THAT(error_of(phase.schedule()), HasSubstr("schedule: shared_computes[0].phase: unknown value 99"));
  auto shards = shared;
  shards.schedule().mutable_shared_computes(0)->set_shards(4);
  EXPECT_THAT(error_of(shards.schedule()),
              HasSubstr("shared_computes[0].shards: must be the product of the split groups' sizes (2), got 4"));
}

TEST(ValidateSchedule, DurationSourcesAreConsistent) {
  HandSchedule h(1);
  h.compute(0, 0);
  h.memory(0, 0, true, 8);
  auto fixed = h;
  fixed.op(0, 0).set_duration_source(proto::DURATION_FIXED);
  fixed.op(0, 0).set_fixed_duration_ns(0);
  fixed.op(0, 1).set_duration_source(proto::DURATION_FIXED);
  EXPECT_EQ(error_of(fixed.schedule()), "");
  auto negative = fixed;
  negative.op(0, 0).set_fixed_duration_ns(-1);
  EXPECT_THAT(error_of(negative.schedule()), HasSubstr("rank 0 op 0: fixed_duration_ns: must be >= 0, got -1"));
  auto memory = fixed;
  memory.op(0, 1).set_fixed_duration_ns(5);
  EXPECT_THAT(error_of(memory.schedule()), HasSubstr("rank 0 op 1: fixed_duration_ns: a MEMORY op takes no time, got 5"));
  auto from_work = h;
  from_work.op(0, 0).set_fixed_duration_ns(5);
  EXPECT_THAT(error_of(from_work.schedule()),
              HasSubstr("rank 0 op 0: fixed_duration_ns: set to 5 but duration_source is DURATION_FROM_WORK"));
  auto unknown = h;
  unknown.op(0, 0).set_duration_source(static_cast<proto::DurationSource>(7));
  EXPECT_THAT(error_of(unknown.schedule()), HasSubstr("rank 0 op 0: duration_source: unknown value 7"));
}

}  // namespace
}  // namespace eppsim
