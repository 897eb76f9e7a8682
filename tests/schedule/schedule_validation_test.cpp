#include "schedule/schedule_validation.h"

#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedule/schedule_fixture.h"
#include "schedule/program_ops.h"
#include "schedule/schedule_schema.h"

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
// Rank 0 runs a compute op split over both: shared_computes[0].
HandSchedule split_schedule() {
  HandSchedule h(2);
  const auto sp = h.group({0, 1});
  const auto tp = h.group({0});
  auto c = HandSchedule::forward_layer();
  c.set_shards(2);
  auto* s = c.add_splits();
  s->set_kind(proto::SEQUENCE_PARALLEL);
  s->set_group(sp);
  s = c.add_splits();
  s->set_kind(proto::TENSOR_PARALLEL);
  s->set_group(tp);
  h.compute(0, 0, {}, c);
  return h;
}

// The work of split_schedule()'s compute op.
proto::ComputeOp& split_work(HandSchedule& h) { return *h.schedule().mutable_shared_computes(0); }

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
  auto& c = split_work(h);
  c.add_segment_tokens(512);
  c.add_segment_tokens(256);
  c.add_segment_context_tokens(0);
  EXPECT_THAT(error_of(h.schedule()),
              HasSubstr("schedule: shared_computes[0].segment_context_tokens: must have one entry per segment_tokens "
                        "entry (2), got 1"));
  c.add_segment_context_tokens(512);
  EXPECT_EQ(error_of(h.schedule()), "");
  c.add_segments()->set_tokens(64);
  EXPECT_THAT(error_of(h.schedule()), HasSubstr("schedule: shared_computes[0].segments: schema version 2's segment messages"));
}

TEST(ValidateSchedule, RejectsStructuralErrors) {
  HandSchedule h(2);
  h.send(0, 1, 1, 64, 1);
  auto bad_peer = h.schedule();
  bad_peer.mutable_programs(0)->set_target(0, 5);  // a SEND's target is its peer
  EXPECT_THAT(error_of(bad_peer), HasSubstr("schedule: rank 0 op 0: send peer 5 out of range"));
  auto bad_recv_peer = h.schedule();
  add_op(*bad_recv_peer.mutable_programs(1), OpFields::recv(1, 7, 64, 1));
  EXPECT_THAT(error_of(bad_recv_peer), HasSubstr("schedule: rank 1 op 0: recv peer 7 out of range"));
  auto bad_dep = h.schedule();
  bad_dep.mutable_programs(0)->add_dep_op(0);
  bad_dep.mutable_programs(0)->add_dep_on(0);
  EXPECT_THAT(error_of(bad_dep), HasSubstr("rank 0 op 0: depends on op 0, which is not earlier"));
  auto bad_group = h.schedule();
  add_op(*bad_group.mutable_programs(1), OpFields::collective(0, proto::ALL_REDUCE, 3, 0));
  EXPECT_THAT(error_of(bad_group), HasSubstr("rank 1 op 0: unknown group 3"));
  auto bad_stream = h.schedule();
  bad_stream.mutable_programs(0)->set_stream(0, 2);
  EXPECT_THAT(error_of(bad_stream), HasSubstr("rank 0 op 0: stream 2 out of range (2 streams)"));
  auto no_kind = h.schedule();
  add_op(*no_kind.mutable_programs(1), OpFields{});
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
  add_op(*outside.mutable_programs(1), OpFields::collective(0, proto::ALL_REDUCE, 0, 0));
  EXPECT_THAT(error_of(outside), HasSubstr("rank 1 op 0: rank 1 is not a member of group 0"));
}

TEST(ValidateSchedule, ComputeSplitsNameGroupsOfTheRankAndMultiplyToShards) {
  auto unknown = split_schedule();
  split_work(unknown).mutable_splits(1)->set_group(9);
  EXPECT_THAT(error_of(unknown.schedule()), HasSubstr("schedule: shared_computes[0].splits[1].group: unknown group 9"));
  auto foreign = split_schedule();
  foreign.compute(1, 0, {}, split_work(foreign));  // the same work: the same entry
  ASSERT_EQ(ops_of(foreign.schedule(), 1)[0].shared_compute(), 0u);
  EXPECT_THAT(error_of(foreign.schedule()),
              HasSubstr("rank 1 op 0: shared_computes[0].splits[1].group: rank 1 is not a member of group 1"));
  auto shards = split_schedule();
  split_work(shards).set_shards(4);
  EXPECT_THAT(error_of(shards.schedule()),
              HasSubstr("shared_computes[0].shards: must be the product of the split groups' sizes (2), got 4"));
  auto kind = split_schedule();
  split_work(kind).mutable_splits(0)->set_kind(proto::SPLIT_KIND_UNSPECIFIED);
  EXPECT_THAT(error_of(kind.schedule()), HasSubstr("shared_computes[0].splits[0].kind: must be"));
}

// A shared work is checked once where it is listed; the ranks that run it must
// each belong to its split groups, and the index must be in the table.
TEST(ValidateSchedule, SharedComputesAreCheckedOnceAndPerRank) {
  auto shared = split_schedule();
  ASSERT_EQ(shared.schedule().shared_computes_size(), 1);
  EXPECT_EQ(error_of(shared.schedule()), "");
  auto range = shared;
  range.program(0).set_target(0, 1);  // a COMPUTE's target is its work
  EXPECT_THAT(error_of(range.schedule()),
              HasSubstr("schedule: rank 0 op 0: shared_compute: index 1 out of range (1 shared computes)"));
  auto foreign = shared;
  foreign.compute(1, 0);  // another work, then the split one
  foreign.program(1).set_target(0, 0);
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

// Works split over the same groups share one membership check a rank; a work
// split over more groups, or other ones, is checked on its own.
TEST(ValidateSchedule, EachWorkIsCheckedAgainstItsOwnSplitGroups) {
  HandSchedule h(3);
  const auto a = h.group({0, 1});
  const auto b = h.group({1, 2});
  const auto split_over = [&](std::initializer_list<std::uint32_t> groups, std::uint32_t layers) {
    auto c = HandSchedule::forward_layer();
    c.set_layer_count(layers);
    c.set_shards(static_cast<std::uint32_t>(1) << groups.size());  // every group has two members
    for (auto g : groups) {
      auto* split = c.add_splits();
      split->set_kind(proto::SEQUENCE_PARALLEL);
      split->set_group(g);
    }
    return c;
  };
  h.compute(0, 0, {}, split_over({a}, 1));     // shared_computes[0]
  h.compute(1, 0, {}, split_over({a, b}, 1));  // [1]: a, then one group more
  h.compute(0, 0, {}, split_over({a}, 2));     // [2]: a again, after [1]
  h.compute(1, 0, {}, split_over({a}, 2));
  ASSERT_EQ(h.schedule().shared_computes_size(), 3);
  EXPECT_EQ(error_of(h.schedule()), "");
  auto outside = h;
  outside.compute(2, 0, {}, split_over({a}, 2));
  EXPECT_THAT(error_of(outside.schedule()),
              HasSubstr("schedule: rank 2 op 0: shared_computes[2].splits[0].group: rank 2 is not a member of group 0"));
  auto one_more = h;
  one_more.compute(0, 0, {}, split_over({a, b}, 1));
  EXPECT_THAT(error_of(one_more.schedule()),
              HasSubstr("schedule: rank 0 op 2: shared_computes[1].splits[1].group: rank 0 is not a member of group 1"));
}

TEST(ValidateSchedule, DurationSourcesAreConsistent) {
  HandSchedule h(1);
  h.compute(0, 0);
  h.memory(0, 0, true, 8);
  auto fixed = h;
  fixed.fix_duration(0, 0, 0);
  fixed.fix_duration(0, 1, 0);
  EXPECT_EQ(error_of(fixed.schedule()), "");
  auto negative = fixed;
  negative.fix_duration(0, 0, -1);
  EXPECT_THAT(error_of(negative.schedule()), HasSubstr("rank 0 op 0: fixed_duration_ns: must be >= 0, got -1"));
  auto memory = fixed;
  memory.fix_duration(0, 1, 5);
  EXPECT_THAT(error_of(memory.schedule()), HasSubstr("rank 0 op 1: fixed_duration_ns: a MEMORY op takes no time, got 5"));
  auto from_work = h;
  set_duration(from_work.program(0), 0, proto::DURATION_FROM_WORK, 5);
  EXPECT_THAT(error_of(from_work.schedule()),
              HasSubstr("rank 0 op 0: fixed_duration_ns: set to 5 but duration_source is DURATION_FROM_WORK"));
  auto unknown = h;
  set_duration(unknown.program(0), 0, static_cast<proto::DurationSource>(7), 0);
  EXPECT_THAT(error_of(unknown.schedule()), HasSubstr("rank 0 op 0: duration_source: unknown value 7"));
}

// Rank 0: a compute op, a send, an all-reduce and an allocation; rank 1 the
// receive and the all-reduce. Every per-op column has 4 entries on rank 0.
HandSchedule columns_schedule() {
  HandSchedule h(2);
  const auto dp = h.group({0, 1});
  const auto c = h.compute(0, 0);
  h.send(0, 1, 1, 64, 3, {c});
  h.collective(0, 1, dp, 128, proto::ALL_REDUCE, {c});
  h.memory(0, 0, true, 256);
  h.recv(1, 1, 0, 64, 3);
  h.collective(1, 1, dp, 128);
  return h;
}

TEST(ValidateSchedule, AcceptsTheColumnsSchedule) { EXPECT_EQ(error_of(columns_schedule().schedule()), ""); }

// Each per-op column has one entry per op (stream has one per op by definition).
TEST(ValidateSchedule, RejectsAPerOpColumnOfTheWrongLength) {
  using Column = google::protobuf::RepeatedField<std::uint32_t>* (proto::RankProgram::*)();
  for (const auto& [field, column] : std::vector<std::pair<std::string, Column>>{
           {"target", &proto::RankProgram::mutable_target}, {"detail", &proto::RankProgram::mutable_detail}}) {
    SCOPED_TRACE(field);
    auto shorter = columns_schedule();
    (shorter.program(0).*column)()->RemoveLast();
    EXPECT_THAT(error_of(shorter.schedule()),
                HasSubstr("schedule: programs[0]." + field + ": must have one entry per op (4, as stream), got 3"));
    auto longer = columns_schedule();
    (longer.program(1).*column)()->Add(0);
    EXPECT_THAT(error_of(longer.schedule()),
                HasSubstr("schedule: programs[1]." + field + ": must have one entry per op (2, as stream), got 3"));
  }
  auto code = columns_schedule();
  code.program(0).mutable_code()->RemoveLast();
  EXPECT_THAT(error_of(code.schedule()), HasSubstr("schedule: programs[0].code: must have one entry per op (4, as stream), got 3"));
  auto size = columns_schedule();
  size.program(0).add_size_bytes(0);
  EXPECT_THAT(error_of(size.schedule()),
              HasSubstr("schedule: programs[0].size_bytes: must have one entry per op (4, as stream), got 5"));
  auto stream = columns_schedule();
  stream.program(0).add_stream(0);  // one op more than the other columns hold
  EXPECT_THAT(error_of(stream.schedule()), HasSubstr("schedule: programs[0].code: must have one entry per op (5, as stream), got 4"));
}

// An optional column (algorithm, duration_source, fixed_duration_ns) is empty
// or has one entry per op.
TEST(ValidateSchedule, RejectsAnOptionalColumnOfAnotherLength) {
  auto h = columns_schedule();
  h.program(0).add_algorithm(proto::ALGORITHM_AUTO);
  EXPECT_THAT(error_of(h.schedule()),
              HasSubstr("schedule: programs[0].algorithm: must have no entry or one entry per op (4, as stream), got 1"));
  for (int i = 1; i < 4; ++i) h.program(0).add_algorithm(proto::ALGORITHM_AUTO);
  EXPECT_EQ(error_of(h.schedule()), "");
  h.program(0).add_algorithm(proto::ALGORITHM_AUTO);
  EXPECT_THAT(error_of(h.schedule()), HasSubstr("programs[0].algorithm: must have no entry or one entry per op (4, as stream), got 5"));

  auto source = columns_schedule();
  source.fix_duration(1, 0, 1000);
  EXPECT_EQ(error_of(source.schedule()), "");
  source.program(1).mutable_duration_source()->RemoveLast();
  EXPECT_THAT(error_of(source.schedule()),
              HasSubstr("schedule: programs[1].duration_source: must have no entry or one entry per op (2, as stream), got 1"));
  auto fixed = columns_schedule();
  fixed.program(0).add_fixed_duration_ns(0);
  EXPECT_THAT(error_of(fixed.schedule()),
              HasSubstr("schedule: programs[0].fixed_duration_ns: must have no entry or one entry per op (4, as stream), got 1"));
}

TEST(ValidateSchedule, RejectsDependencyColumnsOutOfShape) {
  auto shorter = columns_schedule();
  shorter.program(0).mutable_dep_on()->RemoveLast();
  EXPECT_THAT(error_of(shorter.schedule()), HasSubstr("schedule: programs[0].dep_on: must have one entry per dep_op entry (2), got 1"));
  auto longer = columns_schedule();
  longer.program(1).add_dep_on(0);
  EXPECT_THAT(error_of(longer.schedule()), HasSubstr("schedule: programs[1].dep_on: must have one entry per dep_op entry (0), got 1"));
  // dep_op = [1, 2]: op 2's dependency listed before op 1's.
  auto order = columns_schedule();
  order.program(0).set_dep_op(0, 2);
  order.program(0).set_dep_op(1, 1);
  EXPECT_THAT(error_of(order.schedule()), HasSubstr("schedule: programs[0].dep_op[1]: must be ascending, got 1 after 2"));
  auto range = columns_schedule();
  range.program(1).add_dep_op(5);
  range.program(1).add_dep_on(0);
  EXPECT_THAT(error_of(range.schedule()), HasSubstr("schedule: programs[1].dep_op[0]: op 5 out of range (2 ops)"));
}

TEST(ValidateSchedule, RejectsCodesAndFieldsTheirKindDoesNotHave) {
  auto code = columns_schedule();
  code.program(0).set_code(2, static_cast<proto::OpCode>(42));
  EXPECT_THAT(error_of(code.schedule()), HasSubstr("schedule: rank 0 op 2: code: unknown value 42"));
  auto unset = columns_schedule();
  unset.program(1).set_code(0, proto::OP_CODE_UNSPECIFIED);
  EXPECT_THAT(error_of(unset.schedule()), HasSubstr("schedule: rank 1 op 0: op kind not set"));
  auto compute_bytes = columns_schedule();
  compute_bytes.program(0).set_size_bytes(0, 8);
  EXPECT_THAT(error_of(compute_bytes.schedule()),
              HasSubstr("schedule: rank 0 op 0: a COMPUTE op has no size_bytes or detail, got 8 and 0"));
  auto compute_detail = columns_schedule();
  compute_detail.program(0).set_detail(0, 2);
  EXPECT_THAT(error_of(compute_detail.schedule()),
              HasSubstr("schedule: rank 0 op 0: a COMPUTE op has no size_bytes or detail, got 0 and 2"));
  auto memory_target = columns_schedule();
  memory_target.program(0).set_target(3, 1);
  EXPECT_THAT(error_of(memory_target.schedule()), HasSubstr("schedule: rank 0 op 3: a MEMORY op has no target, got 1"));
  auto memory_tag = columns_schedule();
  memory_tag.program(0).set_detail(3, 99);
  EXPECT_THAT(error_of(memory_tag.schedule()), HasSubstr("schedule: rank 0 op 3: memory tag (detail): unknown value 99"));
  auto kind = columns_schedule();
  kind.program(1).set_detail(1, 99);
  EXPECT_THAT(error_of(kind.schedule()), HasSubstr("schedule: rank 1 op 1: collective kind (detail): unknown value 99"));
  auto no_kind = columns_schedule();
  no_kind.program(1).set_detail(1, proto::COLLECTIVE_KIND_UNSPECIFIED);
  EXPECT_THAT(error_of(no_kind.schedule()), HasSubstr("schedule: rank 1 op 1: collective kind not set"));
}

TEST(ValidateSchedule, OnlyACollectiveHasAnAlgorithm) {
  HandSchedule h(2);
  const auto dp = h.group({0, 1});
  h.send(0, 1, 1, 64, 3);
  h.collective(0, 1, dp, 128, proto::ALL_REDUCE, {}, proto::RING);
  h.recv(1, 1, 0, 64, 3);
  h.collective(1, 1, dp, 128, proto::ALL_REDUCE, {}, proto::RING);
  ASSERT_EQ(h.program(0).algorithm_size(), 2);  // filled for the send once the collective needed it
  EXPECT_EQ(error_of(h.schedule()), "");
  auto send = h;
  send.program(0).set_algorithm(0, proto::TREE);
  EXPECT_THAT(error_of(send.schedule()), HasSubstr("schedule: rank 0 op 0: algorithm: only a COLLECTIVE has one, got TREE"));
  auto unknown = h;
  unknown.program(1).set_algorithm(1, static_cast<proto::CollectiveAlgorithm>(9));
  EXPECT_THAT(error_of(unknown.schedule()), HasSubstr("schedule: rank 1 op 1: algorithm: unknown value 9"));
}

std::string error_of_program(const proto::Schedule& schedule, std::uint32_t rank, bool op_by_op) {
  try {
    ScheduleValidator validator(schedule);
    if (op_by_op) {
      validator.validate_program_op_by_op(rank);
    } else {
      validator.validate_program(rank);
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// validate_program checks columns at a time and leaves naming the first
// violation to the op-by-op walk: the two must agree on every program. Each
// case sets one entry of one column of a schedule using every op kind, with
// durations, algorithms and deps, to a value a rule may reject (or not).
TEST(ValidateSchedule, ColumnChecksAgreeWithTheOpByOpWalk) {
  HandSchedule base = columns_schedule();
  base.collective(0, 1, 0, 128, proto::ALL_REDUCE, {}, proto::RING);
  base.collective(1, 1, 0, 128, proto::ALL_REDUCE, {}, proto::TREE);
  base.memory(1, 0, false, 0);
  base.fix_duration(1, 0, 1000);
  const std::vector<std::uint64_t> values = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 42, 63, 64, 99, 1000,
                                             std::uint64_t{1} << 50, (std::uint64_t{1} << 50) + 1,
                                             (std::uint64_t{1} << 51) - 1, std::uint64_t{1} << 63,
                                             ~std::uint64_t{0} - (std::uint64_t{1} << 50) + 2, 0xffffffffull,
                                             ~std::uint64_t{0}};
  int rejected = 0, cases = 0;
  for (std::uint32_t rank = 0; rank < 2; ++rank) {
    const int ops = base.program(rank).stream_size();
    for (int column = 0; column < 9; ++column) {
      for (int i = 0; i < (column == 8 ? base.program(rank).dep_on_size() : ops); ++i) {
        for (const std::uint64_t v : values) {
          HandSchedule h = base;
          proto::RankProgram& p = h.program(rank);
          const auto u32 = static_cast<std::uint32_t>(v);
          switch (column) {
            case 0: p.set_stream(i, u32); break;
            case 1: p.set_code(i, static_cast<proto::OpCode>(u32)); break;
            case 2: p.set_target(i, u32); break;
            case 3: p.set_size_bytes(i, v); break;
            case 4: p.set_detail(i, u32); break;
            case 5: p.set_algorithm(i, static_cast<proto::CollectiveAlgorithm>(u32)); break;
            case 6: {
              const OpView op = ops_of(p)[static_cast<std::uint32_t>(i)];
              set_duration(p, static_cast<std::uint32_t>(i), static_cast<proto::DurationSource>(u32 % 4), op.fixed_duration_ns());
              break;
            }
            case 7: {
              const OpView op = ops_of(p)[static_cast<std::uint32_t>(i)];
              set_duration(p, static_cast<std::uint32_t>(i), op.duration_source(), static_cast<std::int64_t>(v));
              break;
            }
            case 8: p.set_dep_on(i, u32); break;
          }
          const std::string message = error_of_program(h.schedule(), rank, false);
          EXPECT_EQ(message, error_of_program(h.schedule(), rank, true))
              << "rank " << rank << " column " << column << " op " << i << " value " << v;
          rejected += message.empty() ? 0 : 1;
          ++cases;
        }
      }
    }
  }
  // Most cases break a rule; some do not (a stream or a tag that exists).
  EXPECT_GT(rejected, cases / 2);
  EXPECT_LT(rejected, cases);
}

// Ops as messages are read from older files (convert_op_messages); a schedule
// that still holds them was not converted.
TEST(ValidateSchedule, RejectsOpsStillAsMessages) {
  auto h = columns_schedule();
  const auto old = testing::in_op_messages(h.schedule());
  EXPECT_THAT(error_of(old), HasSubstr("schedule: programs[0].ops: ops as messages are schema version 4's form; version " +
                                       std::to_string(kScheduleSchemaVersion) + " lists them in columns"));
  auto both = h.schedule();
  both.mutable_programs(1)->add_ops()->mutable_send()->set_peer(0);
  EXPECT_THAT(error_of(both), HasSubstr("schedule: programs[1].ops: ops as messages are schema version 4's form"));
}

}  // namespace
}  // namespace eppsim
