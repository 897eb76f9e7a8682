#include "schedule/program_ops.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedule/schedule_fixture.h"
#include "schedule/schedule_schema.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Deps = std::vector<std::uint32_t>;

auto tied(const OpFields& f) {
  return std::tie(f.stream, f.code, f.target, f.size_bytes, f.detail, f.algorithm, f.duration_source, f.fixed_duration_ns);
}

void expect_fields(const OpFields& actual, const OpFields& expected) {
  EXPECT_EQ(tied(actual), tied(expected)) << "code " << proto::OpCode_Name(expected.code);
}

Deps deps_of(OpView op) { return {op.deps().begin(), op.deps().end()}; }

std::vector<Deps> deps_by_iteration(const proto::RankProgram& program) {
  std::vector<Deps> out;
  for (const OpView op : ops_of(program)) out.push_back(deps_of(op));
  return out;
}

std::vector<Deps> deps_by_index(const proto::RankProgram& program) {
  std::vector<Deps> out;
  const auto ops = ops_of(program);
  for (std::uint32_t i = 0; i < ops.size(); ++i) out.push_back(deps_of(ops[i]));
  return out;
}

proto::ComputeOp work(proto::Phase phase, std::uint32_t first_layer) {
  proto::ComputeOp c;
  c.set_phase(phase);
  c.set_first_layer(first_layer);
  c.set_layer_count(1);
  return c;
}

TEST(OpFields, NamedConstructorsSetWhatEachKindUses) {
  expect_fields(OpFields::compute(1, 7), {.stream = 1, .code = proto::OP_COMPUTE, .target = 7});
  expect_fields(OpFields::send(2, 3, 4096, 9),
                {.stream = 2, .code = proto::OP_SEND, .target = 3, .size_bytes = 4096, .detail = 9});
  expect_fields(OpFields::recv(2, 0, 4096, 9),
                {.stream = 2, .code = proto::OP_RECV, .target = 0, .size_bytes = 4096, .detail = 9});
  expect_fields(OpFields::collective(3, proto::ALL_GATHER, 5, 1 << 20),
                {.stream = 3, .code = proto::OP_COLLECTIVE, .target = 5, .size_bytes = 1 << 20, .detail = proto::ALL_GATHER});
  expect_fields(OpFields::collective(3, proto::REDUCE_SCATTER, 5, 64, proto::HIERARCHICAL),
                {.stream = 3,
                 .code = proto::OP_COLLECTIVE,
                 .target = 5,
                 .size_bytes = 64,
                 .detail = proto::REDUCE_SCATTER,
                 .algorithm = proto::HIERARCHICAL});
  expect_fields(OpFields::memory(4, true, 100, proto::KV_EARLIER_SLICES),
                {.stream = 4, .code = proto::OP_ALLOCATE, .size_bytes = 100, .detail = proto::KV_EARLIER_SLICES});
  expect_fields(OpFields::memory(4, false, 100, proto::WORKSPACE),
                {.stream = 4, .code = proto::OP_FREE, .size_bytes = 100, .detail = proto::WORKSPACE});
  expect_fields(OpFields::send(0, 1, 8, 2).fixed(1234),
                {.stream = 0,
                 .code = proto::OP_SEND,
                 .target = 1,
                 .size_bytes = 8,
                 .detail = 2,
                 .duration_source = proto::DURATION_FIXED,
                 .fixed_duration_ns = 1234});
}

// What add_op writes, fields_of and the accessors read back, for every kind.
TEST(ProgramOps, AddOpAndFieldsOfRoundTripEveryKind) {
  const std::vector<OpFields> fields{
      OpFields::compute(0, 3),
      OpFields::send(1, 2, 65536, 7),
      OpFields::recv(2, 5, 1024, 8),
      OpFields::collective(1, proto::ALL_REDUCE, 4, 1 << 30),
      OpFields::collective(1, proto::ALL_TO_ALL, 6, 512, proto::DIRECT),
      OpFields::memory(3, true, 4096, proto::ACTIVATIONS),
      OpFields::memory(3, false, 4096, proto::ACTIVATIONS),
      OpFields::compute(0, 0).fixed(5000),
      OpFields::collective(2, proto::BROADCAST, 1, 99, proto::TREE).fixed(0),
      OpFields::recv(2, 1, std::uint64_t{1} << 40, 0).fixed(70),
  };
  proto::RankProgram program;
  for (std::uint32_t i = 0; i < fields.size(); ++i) EXPECT_EQ(add_op(program, fields[i]), i);
  const auto ops = ops_of(program);
  ASSERT_EQ(ops.size(), fields.size());
  for (const OpView op : ops) {
    SCOPED_TRACE(op.index());
    expect_fields(fields_of(op), fields[op.index()]);
    expect_fields(fields_of(ops[op.index()]), fields[op.index()]);
    EXPECT_TRUE(op.deps().empty());
  }

  EXPECT_TRUE(ops[0].is_compute());
  EXPECT_EQ(ops[0].shared_compute(), 3u);
  EXPECT_EQ(ops[0].size_bytes(), 0u);
  EXPECT_EQ(ops[0].algorithm(), proto::ALGORITHM_AUTO);
  EXPECT_EQ(ops[0].duration_source(), proto::DURATION_FROM_WORK);

  EXPECT_TRUE(ops[1].is_send());
  EXPECT_FALSE(ops[1].is_recv());
  EXPECT_EQ(ops[1].stream(), 1u);
  EXPECT_EQ(ops[1].peer(), 2u);
  EXPECT_EQ(ops[1].size_bytes(), 65536u);
  EXPECT_EQ(ops[1].tag(), 7u);

  EXPECT_TRUE(ops[2].is_recv());
  EXPECT_EQ(ops[2].peer(), 5u);
  EXPECT_EQ(ops[2].tag(), 8u);

  EXPECT_TRUE(ops[3].is_collective());
  EXPECT_EQ(ops[3].collective_kind(), proto::ALL_REDUCE);
  EXPECT_EQ(ops[3].group(), 4u);
  EXPECT_EQ(ops[3].size_bytes(), std::uint64_t{1} << 30);
  EXPECT_EQ(ops[3].algorithm(), proto::ALGORITHM_AUTO);
  EXPECT_EQ(ops[4].collective_kind(), proto::ALL_TO_ALL);
  EXPECT_EQ(ops[4].algorithm(), proto::DIRECT);

  EXPECT_TRUE(ops[5].is_memory());
  EXPECT_TRUE(ops[5].allocate());
  EXPECT_EQ(ops[5].code(), proto::OP_ALLOCATE);
  EXPECT_EQ(ops[5].memory_tag(), proto::ACTIVATIONS);
  EXPECT_EQ(ops[5].size_bytes(), 4096u);
  EXPECT_EQ(ops[5].target(), 0u);
  EXPECT_TRUE(ops[6].is_memory());
  EXPECT_FALSE(ops[6].allocate());
  EXPECT_EQ(ops[6].code(), proto::OP_FREE);

  EXPECT_EQ(ops[7].duration_source(), proto::DURATION_FIXED);
  EXPECT_EQ(ops[7].fixed_duration_ns(), 5000);
  EXPECT_EQ(ops[8].duration_source(), proto::DURATION_FIXED);
  EXPECT_EQ(ops[8].fixed_duration_ns(), 0);
  EXPECT_EQ(ops[9].size_bytes(), std::uint64_t{1} << 40);

  for (const OpView op : ops) {
    EXPECT_EQ(op.is_compute() + op.is_send() + op.is_recv() + op.is_collective() + op.is_memory(), 1) << op.index();
  }
}

TEST(ProgramOps, AnEmptyProgramHasNoOps) {
  const proto::RankProgram program;
  const auto ops = ops_of(program);
  EXPECT_TRUE(ops.empty());
  EXPECT_EQ(ops.size(), 0u);
  EXPECT_TRUE(ops.begin() == ops.end());
}

// Iteration walks the dependency columns once; operator[] finds an op's by
// binary search: both give every op its own dependencies, in the planner's order.
TEST(ProgramOps, IterationAndIndexingGiveEachOpItsDeps) {
  const std::vector<Deps> deps{
      {},         // 0
      {0},        // 1
      {},         // 2
      {},         // 3
      {2, 0, 1},  // 4: several, in the order given
      {4},        // 5
      {},         // 6
      {},         // 7
      {3, 6},     // 8
      {1},        // 9
      {},         // 10: the last op has none
  };
  proto::RankProgram program;
  for (const auto& d : deps) add_op(program, OpFields::compute(0, 0), d);
  EXPECT_THAT(program.dep_op(), ElementsAre(1u, 4u, 4u, 4u, 5u, 8u, 8u, 9u));
  EXPECT_THAT(program.dep_on(), ElementsAre(0u, 2u, 0u, 1u, 4u, 3u, 6u, 1u));
  EXPECT_EQ(deps_by_iteration(program), deps);
  EXPECT_EQ(deps_by_index(program), deps);

  // Ending on an op with dependencies, and starting with a run of several ops without.
  proto::RankProgram tail;
  for (int i = 0; i < 4; ++i) add_op(tail, OpFields::send(1, 1, 8, 0));
  add_op(tail, OpFields::recv(1, 1, 8, 0), Deps{0, 3});
  const std::vector<Deps> tail_deps{{}, {}, {}, {}, {0, 3}};
  EXPECT_EQ(deps_by_iteration(tail), tail_deps);
  EXPECT_EQ(deps_by_index(tail), tail_deps);

  // Every op with one dependency.
  proto::RankProgram chain;
  std::vector<Deps> chain_deps{{}};
  add_op(chain, OpFields::compute(0, 0));
  for (std::uint32_t i = 1; i < 6; ++i) {
    add_op(chain, OpFields::compute(0, 0), Deps{i - 1});
    chain_deps.push_back({i - 1});
  }
  EXPECT_EQ(deps_by_iteration(chain), chain_deps);
  EXPECT_EQ(deps_by_index(chain), chain_deps);
}

TEST(ProgramOps, IteratorsVisitEveryOpInOrder) {
  proto::RankProgram program;
  for (std::uint32_t i = 0; i < 5; ++i) add_op(program, OpFields::send(i, 1, 8 * i, i), i == 0 ? Deps{} : Deps{i - 1});
  const auto ops = ops_of(program);
  std::vector<std::uint32_t> indices, streams;
  for (auto it = ops.begin(); it != ops.end(); it++) {
    indices.push_back((*it).index());
    streams.push_back((*it).stream());
  }
  EXPECT_THAT(indices, ElementsAre(0u, 1u, 2u, 3u, 4u));
  EXPECT_THAT(streams, ElementsAre(0u, 1u, 2u, 3u, 4u));
  auto it = ops.begin();
  const auto before = it++;
  EXPECT_EQ((*before).index(), 0u);
  EXPECT_EQ((*it).index(), 1u);
  EXPECT_THAT(deps_of(*it), ElementsAre(0u));
  EXPECT_EQ((*++it).index(), 2u);
  EXPECT_THAT(deps_of(*it), ElementsAre(1u));
  EXPECT_EQ(std::distance(ops.begin(), ops.end()), 5);
}

// algorithm, duration_source and fixed_duration_ns stay empty until an op
// needs them; then they hold one entry per op, the earlier ops' defaults included.
TEST(ProgramOps, OptionalColumnsStayEmptyUntilNeeded) {
  proto::RankProgram plain;
  add_op(plain, OpFields::compute(0, 0));
  add_op(plain, OpFields::send(1, 1, 8, 0));
  add_op(plain, OpFields::collective(1, proto::ALL_REDUCE, 0, 8));
  EXPECT_EQ(plain.algorithm_size(), 0);
  EXPECT_EQ(plain.duration_source_size(), 0);
  EXPECT_EQ(plain.fixed_duration_ns_size(), 0);
  for (const OpView op : ops_of(plain)) {
    EXPECT_EQ(op.algorithm(), proto::ALGORITHM_AUTO);
    EXPECT_EQ(op.duration_source(), proto::DURATION_FROM_WORK);
    EXPECT_EQ(op.fixed_duration_ns(), 0);
  }

  add_op(plain, OpFields::collective(1, proto::ALL_GATHER, 0, 8, proto::RING));
  EXPECT_THAT(plain.algorithm(), ElementsAre(proto::ALGORITHM_AUTO, proto::ALGORITHM_AUTO, proto::ALGORITHM_AUTO, proto::RING));
  EXPECT_EQ(plain.duration_source_size(), 0);
  add_op(plain, OpFields::recv(2, 1, 8, 0));  // once there, every op has an entry
  EXPECT_EQ(plain.algorithm_size(), 5);
  EXPECT_EQ(plain.algorithm(4), proto::ALGORITHM_AUTO);

  add_op(plain, OpFields::compute(0, 1).fixed(300));
  EXPECT_THAT(plain.duration_source(), ElementsAre(proto::DURATION_FROM_WORK, proto::DURATION_FROM_WORK, proto::DURATION_FROM_WORK,
                                                   proto::DURATION_FROM_WORK, proto::DURATION_FROM_WORK, proto::DURATION_FIXED));
  EXPECT_THAT(plain.fixed_duration_ns(), ElementsAre(0, 0, 0, 0, 0, 300));
  add_op(plain, OpFields::compute(0, 1));
  add_op(plain, OpFields::send(1, 1, 8, 0).fixed(0));  // fixed at 0: DURATION_FIXED all the same
  EXPECT_EQ(plain.duration_source_size(), 8);
  EXPECT_EQ(plain.duration_source(7), proto::DURATION_FIXED);
  EXPECT_EQ(plain.fixed_duration_ns_size(), 8);
  EXPECT_EQ(plain.algorithm_size(), 8);
  const auto ops = ops_of(plain);
  EXPECT_EQ(ops[3].algorithm(), proto::RING);
  EXPECT_EQ(ops[5].duration_source(), proto::DURATION_FIXED);
  EXPECT_EQ(ops[5].fixed_duration_ns(), 300);
  EXPECT_EQ(ops[6].duration_source(), proto::DURATION_FROM_WORK);
  EXPECT_EQ(ops[6].fixed_duration_ns(), 0);
}

TEST(ProgramOps, AFixedDurationOfZeroStillNeedsTheDurationColumns) {
  proto::RankProgram program;
  add_op(program, OpFields::compute(0, 0));
  add_op(program, OpFields::compute(0, 0).fixed(0));
  EXPECT_THAT(program.duration_source(), ElementsAre(proto::DURATION_FROM_WORK, proto::DURATION_FIXED));
  EXPECT_THAT(program.fixed_duration_ns(), ElementsAre(0, 0));
  EXPECT_EQ(program.algorithm_size(), 0);
}

TEST(ProgramOps, SetDurationFillsTheColumnsOnlyWhenNeeded) {
  proto::RankProgram program;
  for (int i = 0; i < 3; ++i) add_op(program, OpFields::compute(0, 0));
  set_duration(program, 1, proto::DURATION_FROM_WORK, 0);  // what an op has without the columns
  EXPECT_EQ(program.duration_source_size(), 0);
  EXPECT_EQ(program.fixed_duration_ns_size(), 0);
  set_duration(program, 1, proto::DURATION_FIXED, 250);
  EXPECT_THAT(program.duration_source(), ElementsAre(proto::DURATION_FROM_WORK, proto::DURATION_FIXED, proto::DURATION_FROM_WORK));
  EXPECT_THAT(program.fixed_duration_ns(), ElementsAre(0, 250, 0));
  set_duration(program, 2, proto::DURATION_FIXED, 0);
  set_duration(program, 1, proto::DURATION_FROM_WORK, 0);
  const auto ops = ops_of(program);
  EXPECT_EQ(ops[0].duration_source(), proto::DURATION_FROM_WORK);
  EXPECT_EQ(ops[1].duration_source(), proto::DURATION_FROM_WORK);
  EXPECT_EQ(ops[1].fixed_duration_ns(), 0);
  EXPECT_EQ(ops[2].duration_source(), proto::DURATION_FIXED);
  EXPECT_EQ(ops[2].fixed_duration_ns(), 0);
  EXPECT_EQ(program.duration_source_size(), 3);
  // A later op gets its entries, and the other columns are untouched.
  add_op(program, OpFields::compute(0, 0));
  EXPECT_EQ(program.duration_source_size(), 4);
  EXPECT_EQ(program.algorithm_size(), 0);
  EXPECT_EQ(program.stream_size(), 4);
}

TEST(ProgramOps, OpCountSumsEveryRank) {
  proto::Schedule schedule;
  EXPECT_EQ(op_count(schedule), 0u);
  schedule.add_programs();
  EXPECT_EQ(op_count(schedule), 0u);
  for (int i = 0; i < 3; ++i) add_op(*schedule.mutable_programs(0), OpFields::compute(0, 0));
  auto& second = *schedule.add_programs();
  for (int i = 0; i < 4; ++i) add_op(second, OpFields::send(0, 0, 1, 0), Deps{});
  schedule.add_programs();
  EXPECT_EQ(op_count(schedule), 7u);
  EXPECT_EQ(ops_of(schedule, 1).size(), 4u);
  EXPECT_EQ(ops_of(schedule, 2).size(), 0u);
}

// Every kind, dependencies (none, one, several), durations and an algorithm:
// the old form converts back into the same columns, in order.
TEST(ConvertOpMessages, GivesTheSameColumnsInOrder) {
  testing::HandSchedule h(2, {"compute", "comm", "memory"});
  const auto dp = h.group({0, 1});
  auto backward = testing::HandSchedule::forward_layer();
  backward.set_phase(proto::BACKWARD);
  for (std::uint32_t r = 0; r < 2; ++r) {
    const auto alloc = h.memory(r, 2, true, 4096);
    const auto f = h.compute(r, 0, {alloc});
    const auto p2p = r == 0 ? h.send(r, 1, 1, 64, 5, {f}) : h.recv(r, 1, 0, 64, 5);
    const auto b = h.compute(r, 0, {p2p, f}, backward);
    const auto ar = h.collective(r, 1, dp, 8192, proto::ALL_REDUCE, {b, alloc, p2p}, r == 0 ? proto::RING : proto::ALGORITHM_AUTO);
    h.memory(r, 2, false, 4096, {ar});
  }
  h.fix_duration(0, 2, 700);
  h.fix_duration(1, 1, 0);
  const proto::Schedule expected = h.schedule();
  proto::Schedule converted = testing::in_op_messages(expected);
  EXPECT_EQ(op_count(converted), 0u);
  EXPECT_EQ(convert_op_messages(converted, "s.pb"), 12u);
  EXPECT_EQ(converted.header().schema_version(), kScheduleSchemaVersion);  // what it holds now
  converted.clear_header();
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(expected, converted)) << diff;
  EXPECT_THAT(deps_of(ops_of(converted, 0)[4]), ElementsAre(3u, 0u, 2u));
  EXPECT_TRUE(converted.programs(1).algorithm().empty());
  EXPECT_EQ(convert_op_messages(converted, "s.pb"), 0u);  // nothing left to convert
}

// A compute op's own work (versions 1-3, and 4 beside shared ones) is listed in
// shared_computes, after the schedule's entries; equal works share one entry,
// and a shared op keeps its index, even one out of range (validation names it).
TEST(ConvertOpMessages, ListsInlineWorksInTheTableOnceEach) {
  proto::Schedule schedule;
  *schedule.add_shared_computes() = work(proto::FORWARD, 1);
  for (int r = 0; r < 2; ++r) {
    auto& program = *schedule.add_programs();
    *program.add_ops()->mutable_compute() = work(proto::BACKWARD, 3);
    program.add_ops()->set_shared_compute(0);
    *program.add_ops()->mutable_compute() = work(proto::FORWARD, r == 0 ? 4 : 5);
  }
  schedule.mutable_programs(1)->add_ops()->set_shared_compute(9);
  EXPECT_EQ(convert_op_messages(schedule, "s"), 7u);
  ASSERT_EQ(schedule.shared_computes_size(), 4);
  EXPECT_EQ(schedule.shared_computes(0).first_layer(), 1u);
  EXPECT_EQ(schedule.shared_computes(1).phase(), proto::BACKWARD);
  EXPECT_EQ(schedule.shared_computes(2).first_layer(), 4u);
  EXPECT_EQ(schedule.shared_computes(3).first_layer(), 5u);
  std::vector<std::uint32_t> works;
  for (const OpView op : ops_of(schedule, 0)) {
    EXPECT_TRUE(op.is_compute());
    works.push_back(op.shared_compute());
  }
  EXPECT_THAT(works, ElementsAre(1u, 0u, 2u));
  works.clear();
  for (const OpView op : ops_of(schedule, 1)) works.push_back(op.shared_compute());
  EXPECT_THAT(works, ElementsAre(1u, 0u, 3u, 9u));
  for (const auto& program : schedule.programs()) EXPECT_EQ(program.ops_size(), 0);
}

// An inline work equal to one the table lists already is that entry; the
// header of a converted schedule says version 5, whichever it said before.
TEST(ConvertOpMessages, AnInlineWorkEqualToAListedOneIsThatEntry) {
  proto::Schedule schedule;
  schedule.mutable_header()->set_schema_version(4);
  *schedule.add_shared_computes() = work(proto::FORWARD, 1);
  *schedule.add_shared_computes() = work(proto::BACKWARD, 2);
  auto& program = *schedule.add_programs();
  *program.add_ops()->mutable_compute() = work(proto::BACKWARD, 2);
  program.add_ops()->set_shared_compute(0);
  EXPECT_EQ(convert_op_messages(schedule, "s"), 2u);
  EXPECT_EQ(schedule.shared_computes_size(), 2);
  EXPECT_EQ(ops_of(schedule, 0)[0].shared_compute(), 1u);
  EXPECT_EQ(ops_of(schedule, 0)[1].shared_compute(), 0u);
  EXPECT_EQ(schedule.header().schema_version(), kScheduleSchemaVersion);
}

// An op with no kind keeps its stream and no code, for validate_schedule to name.
TEST(ConvertOpMessages, AnOpWithoutAKindBecomesAnUnspecifiedCode) {
  proto::Schedule schedule;
  auto& program = *schedule.add_programs();
  program.add_ops()->set_stream(1);
  auto* fixed = program.add_ops();
  fixed->set_stream(2);
  fixed->add_deps(0);
  fixed->set_duration_source(proto::DURATION_FIXED);
  fixed->set_fixed_duration_ns(40);
  fixed->mutable_memory()->set_allocate(false);
  fixed->mutable_memory()->set_size_bytes(16);
  fixed->mutable_memory()->set_tag(proto::DKV_BUFFER);
  EXPECT_EQ(convert_op_messages(schedule, "s"), 2u);
  const auto ops = ops_of(schedule, 0);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].code(), proto::OP_CODE_UNSPECIFIED);
  EXPECT_EQ(ops[0].stream(), 1u);
  expect_fields(fields_of(ops[1]), OpFields::memory(2, false, 16, proto::DKV_BUFFER).fixed(40));
  EXPECT_THAT(deps_of(ops[1]), ElementsAre(0u));
  EXPECT_EQ(schedule.shared_computes_size(), 0);
}

TEST(ConvertOpMessages, RefusesAProgramInBothForms) {
  proto::Schedule schedule;
  add_op(*schedule.add_programs(), OpFields::compute(0, 0));
  auto& both = *schedule.add_programs();
  add_op(both, OpFields::send(0, 0, 8, 0));
  both.add_ops()->mutable_recv()->set_peer(0);
  try {
    convert_op_messages(schedule, "old.pb");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("old.pb: programs[1].ops: a program lists its ops in columns (schema version 5) or, "
                                    "as schedules written before version 5 did, as messages in ops, not both"));
  }
}

}  // namespace
}  // namespace eppsim
