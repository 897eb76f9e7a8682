#include "schedule/schedule_file.h"

#include <filesystem>
#include <string>

#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/message_stream.h"
#include "tests/schedule/schedule_fixture.h"
#include "schedule/program_ops.h"
#include "base/proto_io.h"
#include "schedule/schedule_schema.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh directory named for the test, removed when the test ends.
class ScheduleDir {
 public:
  explicit ScheduleDir(const std::string& name)
      : dir_(fs::temp_directory_path() / fmt::format("eppsim_{}-{}", name, ::getpid())) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~ScheduleDir() { fs::remove_all(dir_); }
  fs::path operator/(const std::string& file) const { return dir_ / file; }

 private:
  fs::path dir_;
};

std::string read_error(const fs::path& file) {
  try {
    read_schedule_file(file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ReadScheduleFile, ConvertsAVersion2FilesSegmentMessages) {
  const ScheduleDir dir("replay_v2");
  const fs::path file = dir / "v2.textproto";
  write_file_atomically(file,
                        "header { schema_version: 2 } num_ranks: 1 stream_names: \"compute\" programs { ops { stream: 0 "
                        "compute { phase: FORWARD layer_count: 1 segments { tokens: 300 context_tokens: 700 } "
                        "segments { tokens: 50 } } } }\n");
  const proto::Schedule schedule = read_schedule_file(file);
  const auto ops = ops_of(schedule, 0);
  ASSERT_EQ(ops.size(), 1u);
  ASSERT_TRUE(ops[0].is_compute());
  const auto& c = compute_of(schedule, ops[0]);
  EXPECT_EQ(c.segments_size(), 0);
  ASSERT_EQ(c.segment_tokens_size(), 2);
  EXPECT_EQ(c.segment_tokens(0), 300u);
  EXPECT_EQ(c.segment_context_tokens(0), 700u);
  EXPECT_EQ(c.segment_tokens(1), 50u);
  EXPECT_EQ(c.segment_context_tokens(1), 0u);
}

// Two ranks with every kind of op, dependencies (none, one, several), fixed
// durations, a collective algorithm, and compute works run by several ops.
proto::Schedule every_kind() {
  testing::HandSchedule h(2, {"compute", "comm", "memory"});
  const auto dp = h.group({0, 1});
  auto backward = testing::HandSchedule::forward_layer();
  backward.set_phase(proto::BACKWARD);
  backward.add_segment_tokens(512);
  backward.add_segment_context_tokens(128);
  for (std::uint32_t r = 0; r < 2; ++r) {
    const auto alloc = h.memory(r, 2, true, 4096);
    const auto f = h.compute(r, 0, {alloc});
    const auto p2p = r == 0 ? h.send(r, 1, 1, 1 << 20, 5, {f}) : h.recv(r, 1, 0, 1 << 20, 5);
    const auto b = h.compute(r, 0, {p2p, f}, backward);
    const auto ar = h.collective(r, 1, dp, 8192, proto::ALL_REDUCE, {b, p2p, alloc}, proto::TREE);
    h.memory(r, 2, false, 4096, {ar});
    h.compute(r, 0);  // the forward work again
  }
  h.fix_duration(0, 1, 1500);
  h.fix_duration(1, 2, 2500);
  h.schedule().mutable_header()->set_schema_version(4);
  return h.schedule();
}

// A file of schema version 4 or older (a message per op, compute works inline)
// reads as the same schedule in columns, whatever its format; its works are
// listed once each in shared_computes.
TEST(ReadScheduleFile, ConvertsOpMessagesIntoColumns) {
  proto::Schedule expected = every_kind();
  ASSERT_EQ(expected.shared_computes_size(), 2);
  const proto::Schedule old = testing::in_op_messages(expected);
  expected.mutable_header()->set_schema_version(kScheduleSchemaVersion);  // the form it is read into
  ASSERT_EQ(old.shared_computes_size(), 0);
  ASSERT_EQ(old.programs(0).ops_size(), 7);
  ASSERT_TRUE(old.programs(0).ops(1).has_compute());
  const ScheduleDir dir("schedule_v4");
  for (const char* name : {"old.pb", "old.json", "old.textproto"}) {
    SCOPED_TRACE(name);
    write_message(old, dir / name);
    const proto::Schedule read = read_schedule_file(dir / name);
    std::string diff;
    google::protobuf::util::MessageDifferencer differencer;
    differencer.ReportDifferencesToString(&diff);
    EXPECT_TRUE(differencer.Compare(expected, read)) << diff;
    for (const auto& program : read.programs()) EXPECT_EQ(program.ops_size(), 0);
    ASSERT_EQ(read.shared_computes_size(), 2);  // 6 compute ops, 2 works
    EXPECT_EQ(read.shared_computes(0).phase(), proto::FORWARD);
    EXPECT_EQ(read.shared_computes(1).phase(), proto::BACKWARD);
    EXPECT_EQ(ops_of(read, 1)[3].shared_compute(), 1u);
    EXPECT_EQ(ops_of(read, 1)[6].shared_compute(), 0u);
  }
}

TEST(ReadScheduleFile, AProgramInBothFormsNamesTheFileAndTheProgram) {
  proto::Schedule both = every_kind();
  *both.mutable_programs(1)->add_ops() = testing::in_op_messages(both).programs(1).ops(0);
  const ScheduleDir dir("schedule_both");
  for (const char* name : {"both.pb", "both.textproto"}) {
    SCOPED_TRACE(name);
    write_message(both, dir / name);
    EXPECT_THAT(read_error(dir / name),
                HasSubstr((dir / name).string() + ": schedule: programs[1].ops: a program lists its ops in columns "
                                                  "(schema version 5) or, as schedules written before version 5 did, "
                                                  "as messages in ops, not both"));
  }
}

// A file that breaks a rule of validate_schedule: the message names the file,
// whichever form its ops take.
TEST(WriteScheduleFile, ABinaryScheduleIsAStreamOfPartsReadBackWhole) {
  const ScheduleDir dir("schedule_file");
  constexpr std::uint32_t kRanks = 16;
  testing::HandSchedule hand(kRanks);
  const auto group = hand.group({0, 1, 2});
  (void)group;
  for (std::uint32_t r = 0; r < kRanks; ++r) {
    for (int i = 0; i < 8; ++i) hand.compute(r, 0);
  }
  proto::Schedule& schedule = hand.schedule();
  for (std::uint32_t r = 0; r < kRanks; ++r) {
    auto* p = schedule.add_placement();
    p->set_node(r / 8);
    p->set_local_gpu(r % 8);
  }
  write_schedule_file(schedule, dir / "s.pb");
  EXPECT_TRUE(is_message_stream(dir / "s.pb"));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(read_schedule_file(dir / "s.pb"), schedule));
  // The single-message form is still read.
  write_message(schedule, dir / "single.pb");
  EXPECT_FALSE(is_message_stream(dir / "single.pb"));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(read_schedule_file(dir / "single.pb"), schedule));
}

TEST(ReadScheduleFile, AnInvalidScheduleNamesTheFile) {
  const ScheduleDir dir("schedule_file");
  const fs::path old = dir / "bad.textproto";
  write_file_atomically(old, "num_ranks: 1 stream_names: \"compute\" programs { ops { stream: 0 shared_compute: 3 } }\n");
  EXPECT_THAT(read_error(old), HasSubstr(old.string() + ": schedule: rank 0 op 0: shared_compute: index 3 out of range"));
  const fs::path columns = dir / "bad_columns.textproto";
  write_file_atomically(columns,
                        "num_ranks: 1 stream_names: \"compute\" programs { stream: 0 code: OP_COMPUTE target: 3 "
                        "size_bytes: 0 detail: 0 }\n");
  EXPECT_THAT(read_error(columns),
              HasSubstr(columns.string() + ": schedule: rank 0 op 0: shared_compute: index 3 out of range"));
  const fs::path ragged = dir / "ragged.textproto";
  write_file_atomically(ragged, "num_ranks: 1 stream_names: \"compute\" programs { stream: [0, 0] code: OP_COMPUTE }\n");
  EXPECT_THAT(read_error(ragged),
              HasSubstr(ragged.string() + ": schedule: programs[0].code: must have one entry per op (2, as stream), got 1"));
}

}  // namespace
}  // namespace eppsim
