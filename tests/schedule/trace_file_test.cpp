#include "schedule/trace_file.h"

#include <filesystem>
#include <string>
#include <utility>

#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/input_limits.h"
#include "base/message_stream.h"
#include "tests/schedule/sample_messages.h"
#include "tests/schedule/trace_fixture.h"
#include "traces/chrome_trace.h"
#include "base/proto_io.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TraceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("trace_file_test_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string error_of(const fs::path& path) {
    try {
      read_trace(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path dir_;
};

TEST_F(TraceFiles, ReadsEveryFormAndRunDirectories) {
  const auto trace = testing::two_rank_trace("analytic");
  for (const char* name : {"t.pb", "t.json", "t.textproto", "trace.pb"}) write_message(trace, dir_ / name);
  for (const char* name : {"t.pb", "t.json", "t.textproto"}) {
    EXPECT_EQ(read_trace(dir_ / name).op_events().rank_size(), events_of(trace).size()) << name;
  }
  EXPECT_EQ(trace_file_of(dir_), dir_ / "trace.pb");
  EXPECT_EQ(read_trace(dir_).step_time_ns(), trace.step_time_ns());
}

TEST_F(TraceFiles, ABinaryTraceIsWrittenAsAStreamOfPartsAndReadBackWhole) {
  // More events than a part holds, so that op events span several parts.
  proto::Trace trace = testing::two_rank_trace("analytic");
  const OpEventFields first = fields_of(events_of(trace)[0]);
  constexpr int kEvents = 1 << 21;
  reserve_events(*trace.mutable_op_events(), kEvents);
  for (int i = events_of(trace).size(); i < kEvents; ++i) {
    OpEventFields e = first;
    e.op = static_cast<std::uint32_t>(i);
    e.start_ns = i;
    e.end_ns = i + 1;
    add_event(*trace.mutable_op_events(), e);
  }
  trace.set_step_time_ns(kEvents);  // the events lie in the step (read_trace checks)
  for (int i = 0; i < 5; ++i) {
    auto* busy = trace.add_busy();
    busy->set_rank(static_cast<std::uint32_t>(i % 2));
    busy->set_busy_ns(i);
  }
  write_trace_file(trace, dir_ / "t.pb");
  EXPECT_TRUE(is_message_stream(dir_ / "t.pb"));
  // Compared as bytes: the differencer takes seconds over millions of entries.
  EXPECT_EQ(read_trace(dir_ / "t.pb").SerializeAsString(), trace.SerializeAsString());
  // Text and JSON stay single messages.
  write_trace_file(testing::two_rank_trace("analytic"), dir_ / "t.json");
  EXPECT_FALSE(is_message_stream(dir_ / "t.json"));
}

TEST_F(TraceFiles, AStreamIsReadAPartAtATimeWithEachPartsFirstEvent) {
  // Parts of about 10 bytes: an event each, a memory sample or two.
  const proto::Trace trace = testing::sample_trace();
  write_trace_file(trace, dir_ / "t.pb", 10);
  const eppsim::TraceFile file(dir_ / "t.pb", 0.0);
  EXPECT_EQ(file.header().num_ranks(), 2u);
  EXPECT_EQ(file.header().stream_names_size(), 2);
  EXPECT_EQ(file.header().op_events().rank_size(), 0);
  EXPECT_EQ(file.header().memory_size(), 0);
  std::vector<std::uint64_t> first_events;
  proto::Trace merged = file.header();
  file.for_each_part([&](const proto::Trace& part, std::uint64_t first_event) {
    EXPECT_LE(part.op_events().rank_size(), 1);
    EXPECT_LE(part.memory_size(), 2);
    if (part.op_events().rank_size() > 0) first_events.push_back(first_event);
    merged.MergeFrom(part);
  });
  EXPECT_EQ(first_events, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(merged.SerializeAsString(), trace.SerializeAsString());
  EXPECT_EQ(read_trace(dir_ / "t.pb").SerializeAsString(), trace.SerializeAsString());
}

TEST_F(TraceFiles, ErrorsInALaterPartNameTheEventsIndexInTheWholeTrace) {
  proto::Trace trace = testing::sample_trace();
  trace.mutable_op_events()->set_rank(4, 9);
  write_trace_file(trace, dir_ / "rank.pb", 40);
  EXPECT_THAT(error_of(dir_ / "rank.pb"), HasSubstr("rank.pb: op_events.rank[4]: must be < num_ranks (2), got 9"));
  trace = testing::sample_trace();
  trace.mutable_op_events()->set_end_ns(4, trace.step_time_ns() + 7);  // checked once every part is read
  write_trace_file(trace, dir_ / "outlasts.pb", 40);
  EXPECT_THAT(error_of(dir_ / "outlasts.pb"),
              HasSubstr(fmt::format("outlasts.pb: op_events.end_ns[4]: must be at most step_time_ns ({}) after the "
                                    "earliest start (0): an op cannot outlast the step, got {}",
                                    trace.step_time_ns(), trace.step_time_ns() + 7)));
}

TEST_F(TraceFiles, APartAfterTheFirstSettingAHeaderFieldIsBadInput) {
  {
    MessageStreamWriter stream(dir_ / "late.pb", "eppsim.proto.Trace");
    proto::Trace header;
    header.set_num_ranks(1);
    stream.write_part(header);
    proto::Trace late;
    late.set_step_time_ns(5);
    stream.write_part(late);
    stream.commit();
  }
  EXPECT_THAT(error_of(dir_ / "late.pb"),
              HasSubstr("late.pb: not a valid stream of eppsim.proto.Trace: a part after the first sets step_time_ns"));
}

TEST_F(TraceFiles, AChromeTraceOrADirectoryWithoutTraceIsBadInput) {
  write_chrome_trace(testing::two_rank_trace("analytic"), dir_ / "trace.json");
  EXPECT_THAT(error_of(dir_ / "trace.json"), HasSubstr("trace.json: a Chrome trace"));
  EXPECT_THAT(error_of(dir_), HasSubstr("a directory without trace.pb"));
}

TEST_F(TraceFiles, RanksAndRankStreamsAreBounded) {
  auto trace = testing::two_rank_trace("analytic");
  trace.set_num_ranks(limits::kMaxRanks + 1);
  write_message(trace, dir_ / "ranks.pb");
  EXPECT_THAT(error_of(dir_ / "ranks.pb"), HasSubstr("ranks.pb: num_ranks: must be <= 4194304"));
  trace.set_num_ranks(1u << 20);
  for (int i = 0; i < 3; ++i) trace.add_stream_names(std::string("s"));  // 5 declared
  trace.mutable_op_events()->set_stream(0, 9);                           // and one more
  write_message(trace, dir_ / "streams.pb");
  EXPECT_THAT(error_of(dir_ / "streams.pb"),
              HasSubstr("streams.pb: num_ranks x streams: must be at most 4194304, got 1048576 ranks x 6 streams"));
  trace.set_num_ranks(1u << 17);
  write_message(trace, dir_ / "fits.pb");
  EXPECT_EQ(read_trace(dir_ / "fits.pb").num_ranks(), 1u << 17);
}

TEST_F(TraceFiles, ATraceOfEventMessagesIsReadIntoOpEventsInOrder) {
  proto::Trace trace = testing::two_rank_trace("analytic");
  // The events backwards (in no sorted order), so that a reordering shows.
  proto::OpEvents backwards;
  for (int i = events_of(trace).size() - 1; i >= 0; --i) add_event(backwards, fields_of(events_of(trace)[i]));
  *trace.mutable_op_events() = std::move(backwards);
  // Every field of some event set, so that a field lost on the way shows.
  trace.mutable_op_events()->set_chunk(1, 3);
  trace.mutable_op_events()->set_stage(1, 2);
  trace.mutable_op_events()->set_group(3, 5);
  trace.mutable_op_events()->set_phase(3, proto::OPTIMIZER);
  const proto::Trace old_form = testing::in_event_messages(trace);
  ASSERT_EQ(old_form.events_size(), events_of(trace).size());
  ASSERT_TRUE(events_of(old_form).empty());
  for (const char* name : {"old.pb", "old.json", "old.textproto"}) {
    write_message(old_form, dir_ / name);
    const proto::Trace read = read_trace(dir_ / name);
    EXPECT_EQ(read.events_size(), 0) << name;
    // The same trace as written in op_events: every column, in the order of the messages.
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(read, trace))
        << name << ": read\n" << read.DebugString() << "expected\n" << trace.DebugString();
  }
}

TEST_F(TraceFiles, ATraceWithEventsInBothFormsIsBadInput) {
  auto trace = testing::two_rank_trace("analytic");
  trace.add_events()->set_end_ns(10);
  write_message(trace, dir_ / "both.pb");
  const std::string error = error_of(dir_ / "both.pb");
  EXPECT_THAT(error, HasSubstr((dir_ / "both.pb").string() + ": events: "));
  EXPECT_THAT(error, HasSubstr("not both"));
}

TEST_F(TraceFiles, OpEventColumnsOfDifferentLengthsAreBadInput) {
  auto trace = testing::two_rank_trace("analytic");
  trace.mutable_op_events()->mutable_end_ns()->RemoveLast();
  write_message(trace, dir_ / "short.pb");
  EXPECT_THAT(error_of(dir_ / "short.pb"),
              HasSubstr("short.pb: op_events.end_ns: must have one entry per event (8, as op_events.rank), got 7"));
  trace = testing::two_rank_trace("analytic");
  trace.mutable_op_events()->add_peer(1);
  write_message(trace, dir_ / "long.textproto");
  EXPECT_THAT(error_of(dir_ / "long.textproto"),
              HasSubstr("long.textproto: op_events.peer: must have one entry per event (8, as op_events.rank), got 9"));
  trace = testing::two_rank_trace("analytic");
  trace.mutable_op_events()->mutable_rank()->RemoveLast();
  write_message(trace, dir_ / "ranks.json");
  EXPECT_THAT(error_of(dir_ / "ranks.json"),
              HasSubstr("ranks.json: op_events.op: must have one entry per event (7, as op_events.rank), got 8"));
}

TEST_F(TraceFiles, AnEventOnARankPastNumRanksIsBadInput) {
  auto trace = testing::two_rank_trace("analytic");
  trace.mutable_op_events()->set_rank(5, 2);
  write_message(trace, dir_ / "rank.pb");
  EXPECT_THAT(error_of(dir_ / "rank.pb"), HasSubstr("rank.pb: op_events.rank[5]: must be < num_ranks (2), got 2"));
  // A trace of the older form is told of the field its file has.
  write_message(testing::in_event_messages(trace), dir_ / "old.pb");
  EXPECT_THAT(error_of(dir_ / "old.pb"), HasSubstr("old.pb: events[5].rank: must be < num_ranks (2), got 2"));
}

}  // namespace
}  // namespace eppsim
