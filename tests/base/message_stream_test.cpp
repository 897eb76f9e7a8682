#include "base/message_stream.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/proto_io.h"
#include "tests/schedule/sample_messages.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using google::protobuf::util::MessageDifferencer;

std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class MessageStream : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_dir("message_stream_test"); }
  void TearDown() override { fs::remove_all(dir_); }
  // The sample trace as a header part and one part per memory sample.
  fs::path write_sample(const std::string& name) {
    const auto path = dir_ / name;
    MessageStreamWriter stream(path, trace_.GetDescriptor()->full_name());
    stream.write_part(*message_without_fields(trace_, {proto::Trace::kMemoryFieldNumber}));
    write_slices<proto::Trace>(stream, trace_.memory(), [](proto::Trace& part) { return part.add_memory(); }, 1);
    stream.commit();
    return path;
  }
  proto::Trace trace_ = testing::sample_trace();
  fs::path dir_;
};

TEST_F(MessageStream, PartsMergeIntoTheMessage) {
  ASSERT_GE(trace_.memory_size(), 2);
  const auto path = write_sample("t.pb");
  EXPECT_TRUE(is_message_stream(path));
  proto::Trace read;
  read.set_scenario("left over from before");
  read_message_stream(path, &read);
  EXPECT_TRUE(MessageDifferencer::Equals(read, trace_)) << read.DebugString();
}

TEST_F(MessageStream, TheSameMessageGivesTheSameBytes) {
  EXPECT_EQ(bytes_of(write_sample("a.pb")), bytes_of(write_sample("b.pb")));
}

TEST_F(MessageStream, ACopyWithoutFieldsKeepsEveryOtherField) {
  const auto copy = message_without_fields(trace_, {proto::Trace::kMemoryFieldNumber});
  const auto& without = dynamic_cast<const proto::Trace&>(*copy);
  EXPECT_EQ(without.memory_size(), 0);
  proto::Trace expected = trace_;
  expected.clear_memory();
  EXPECT_TRUE(MessageDifferencer::Equals(without, expected));
}

TEST_F(MessageStream, ASingleMessageFileIsNotAStream) {
  write_message(trace_, dir_ / "single.pb");
  EXPECT_FALSE(is_message_stream(dir_ / "single.pb"));
  EXPECT_FALSE(is_message_stream(dir_ / "missing.pb"));
  EXPECT_FALSE(is_message_stream(dir_));
}

TEST_F(MessageStream, NothingIsLeftWhenTheWriterIsNotCommitted) {
  { MessageStreamWriter stream(dir_ / "t.pb", "eppsim.proto.Trace"); }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(MessageStream, DamagedStreamsAreBadInputNamingTheFileAndTheFault) {
  const std::string good = bytes_of(write_sample("t.pb"));
  const auto damaged = dir_ / "damaged.pb";
  auto error_with = [&](const std::string& bytes) {
    write_bytes(damaged, bytes);
    return input_error_of([&] {
      proto::Trace trace;
      read_message_stream(damaged, &trace);
    });
  };
  EXPECT_THAT(error_with(good.substr(0, good.size() - 2)), HasSubstr("damaged.pb: not a valid stream of eppsim.proto.Trace: cut short"));
  EXPECT_THAT(error_with(good.substr(0, 12)), HasSubstr("cut short in its header"));
  // The offset where it breaks: the end marker, the last 2 bytes (0 and the count).
  EXPECT_THAT(error_with(good + "x"), HasSubstr(fmt::format("bytes after the end of its {} parts (at byte {})",
                                                            1 + trace_.memory_size(), good.size() - 2)));
  // A header part and a part per memory sample.
  EXPECT_EQ(static_cast<int>(good.back()), 1 + trace_.memory_size());
  // The part count at the end disagrees with the parts.
  std::string miscounted = good;
  miscounted.back() = static_cast<char>(miscounted.back() + 1);
  EXPECT_THAT(error_with(miscounted), HasSubstr("its end says"));
  // Another message type.
  {
    MessageStreamWriter stream(damaged, "eppsim.proto.Schedule");
    stream.commit();
  }
  EXPECT_THAT(input_error_of([&] {
                proto::Trace trace;
                read_message_stream(damaged, &trace);
              }),
              HasSubstr("it holds eppsim.proto.Schedule"));
  // A newer version: the byte after the type name.
  std::string newer = good;
  const std::size_t version_at = kMessageStreamMagic.size() + 1 + std::string("eppsim.proto.Trace").size();
  ASSERT_EQ(newer[version_at], 1);
  newer[version_at] = 9;
  EXPECT_THAT(error_with(newer), HasSubstr("format version 9"));
  // A part declaring more than a part may hold: refused before anything is read.
  std::string huge = good.substr(0, version_at + 1);
  huge += std::string("\xff\xff\xff\xff\x7f", 5);
  EXPECT_THAT(error_with(huge), HasSubstr("past the"));
  // A part that is not the message.
  std::string garbage = good.substr(0, version_at + 1);
  garbage += std::string("\x03\xff\xff\xff", 4);
  EXPECT_THAT(error_with(garbage), HasSubstr("part 0 (3 bytes) is not a valid binary"));
  // A field this build does not know (field 99, varint 1).
  std::string unknown = good.substr(0, version_at + 1);
  unknown += std::string("\x03\x98\x06\x01\x00\x01", 6);
  EXPECT_THAT(error_with(unknown), HasSubstr("fields unknown to this build"));
}

}  // namespace
}  // namespace eppsim
