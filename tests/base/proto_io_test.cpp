#include "base/proto_io.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <functional>
#include <limits>
#include <vector>
#include <string>

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedule/sample_messages.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::fresh_dir;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception";
  return {};
}

std::vector<std::string> directory_listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ProtoFormatFor, MapsExtensions) {
  EXPECT_EQ(proto_format_for("a/trace.pb"), ProtoFormat::Binary);
  EXPECT_EQ(proto_format_for("x.bin"), ProtoFormat::Binary);
  EXPECT_EQ(proto_format_for("s.textproto"), ProtoFormat::Text);
  EXPECT_EQ(proto_format_for("s.txtpb"), ProtoFormat::Text);
  EXPECT_EQ(proto_format_for("s.pbtxt"), ProtoFormat::Text);
  EXPECT_EQ(proto_format_for("s.txt"), ProtoFormat::Text);
  EXPECT_EQ(proto_format_for("report.json"), ProtoFormat::Json);
  EXPECT_EQ(proto_format_for("REPORT.JSON"), ProtoFormat::Json);
}

TEST(ProtoFormatFor, UnknownExtensionNamesThePath) {
  EXPECT_THROW(proto_format_for("out/trace.yaml"), InputError);
  EXPECT_THAT(message_of([] { proto_format_for("out/trace.yaml"); }), HasSubstr("out/trace.yaml"));
  EXPECT_THROW(proto_format_for("noextension"), InputError);
}

// Every message type, every format: print -> parse gives an equal message, and
// printing that again gives the same bytes.
template <typename M>
class RoundTrip : public ::testing::Test {};

template <typename M>
M sample();
template <>
proto::Schedule sample<proto::Schedule>() { return testing::sample_schedule(); }
template <>
proto::Trace sample<proto::Trace>() { return testing::sample_trace(); }
template <>
proto::Report sample<proto::Report>() { return testing::sample_report(); }
template <>
proto::Scenario sample<proto::Scenario>() { return testing::sample_scenario(); }
template <>
proto::Calibration sample<proto::Calibration>() { return testing::sample_calibration(); }

using MessageTypes = ::testing::Types<proto::Schedule, proto::Trace, proto::Report, proto::Scenario, proto::Calibration>;
TYPED_TEST_SUITE(RoundTrip, MessageTypes);

TYPED_TEST(RoundTrip, BinaryStrings) {
  const TypeParam original = sample<TypeParam>();
  const std::string bytes = to_binary(original);
  ASSERT_FALSE(bytes.empty());
  TypeParam parsed;
  from_binary(bytes, &parsed, "mem");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(original, parsed));
  EXPECT_EQ(to_binary(parsed), bytes);
}

TYPED_TEST(RoundTrip, TextStrings) {
  const TypeParam original = sample<TypeParam>();
  const std::string text = to_text(original);
  TypeParam parsed;
  from_text(text, &parsed, "mem");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(original, parsed)) << text;
  EXPECT_EQ(to_text(parsed), text);
}

TYPED_TEST(RoundTrip, JsonStrings) {
  const TypeParam original = sample<TypeParam>();
  const std::string json = to_json(original);
  TypeParam parsed;
  from_json(json, &parsed, "mem");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(original, parsed)) << json;
  EXPECT_EQ(to_json(parsed), json);
}

TYPED_TEST(RoundTrip, FilesInEveryFormat) {
  const auto dir = fresh_dir("files");
  const TypeParam original = sample<TypeParam>();
  for (const char* name : {"m.pb", "m.textproto", "m.json"}) {
    SCOPED_TRACE(name);
    const auto path = dir / "sub" / name;  // the parent is created on demand
    write_message(original, path);
    const std::string first = read_file(path);
    TypeParam parsed;
    read_message(path, &parsed);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(original, parsed));
    write_message(parsed, path);
    EXPECT_EQ(read_file(path), first);
  }
  // Explicit formats ignore the extension.
  write_message(original, dir / "x.data", ProtoFormat::Text);
  TypeParam parsed;
  read_message(dir / "x.data", &parsed, ProtoFormat::Text);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(original, parsed));
  EXPECT_THAT(directory_listing(dir / "sub"), ::testing::ElementsAre("m.json", "m.pb", "m.textproto"));
}

TEST(ToJson, SnakeCaseDefaultsIncludedIndented) {
  proto::Scenario s;
  s.mutable_plan()->set_memory_fraction(0.5);
  const std::string json = to_json(s);
  EXPECT_THAT(json, HasSubstr("\"memory_fraction\": 0.5"));
  EXPECT_THAT(json, HasSubstr("\"zero_stage\": 0"));  // a default value, printed
  EXPECT_THAT(json, HasSubstr("\n  \"name\": \"\""));
  proto::Report r = testing::sample_report();
  EXPECT_THAT(to_json(r), HasSubstr("\"step_time_s\": 1.00000275"));
}

// A large repeated field printed batch by batch (kJsonSpliceAbove) is the
// same text as the whole message printed at once.
TEST(ToJson, SplicedRepeatedFieldsPrintTheSameText) {
  proto::Report r = testing::sample_report();
  for (std::uint32_t i = 0; i < 2500; ++i) {
    auto* rank = r.add_per_rank();
    rank->set_rank(i);
    rank->set_node(i / 8);
    if (i % 7 != 0) rank->mutable_breakdown_s()->set_compute(0.25 + i * 1e-7);  // some left at their defaults
    rank->set_peak_memory_bytes(1e9 + i);
    r.add_peak_memory_bytes(1e9 + i);
  }
  const std::string whole = to_json(r, std::numeric_limits<std::size_t>::max());
  EXPECT_EQ(to_json(r), whole);
  EXPECT_EQ(to_json(r, 1), whole);
  EXPECT_EQ(to_json(r, 999), whole);  // a last batch shorter than the rest
  proto::Report parsed;
  from_json(to_json(r, 3), &parsed, "spliced");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(r, parsed));

  proto::Comparison comparison;  // the spliced field first in the message, its elements nested reports
  for (int i = 0; i < 3; ++i) *comparison.add_records() = testing::sample_report();
  comparison.add_networks("railx");
  EXPECT_EQ(to_json(comparison, 1), to_json(comparison, std::numeric_limits<std::size_t>::max()));
}

TEST(FromText, UnknownFieldHasLineColumnAndName) {
  proto::Scenario s;
  const std::string text = "name: \"x\"\ncluster {\n  nodez: 2\n}\n";
  const std::string error = message_of([&] { from_text(text, &s, "s.textproto"); });
  EXPECT_THAT(error, HasSubstr("s.textproto:3:3:"));
  EXPECT_THAT(error, HasSubstr("nodez"));
}

TEST(FromText, SingularFieldTwiceIsAnError) {
  proto::Scenario s;
  EXPECT_THAT(message_of([&] { from_text("seed: 1\nseed: 2\n", &s, "s.textproto"); }), HasSubstr("s.textproto:2:"));
}

TEST(FromJson, UnknownFieldIsAnErrorNamingSourceAndField) {
  proto::Report r;
  const std::string error = message_of([&] { from_json(R"({"ranks": 2, "rankz": 3})", &r, "run/report.json"); });
  EXPECT_THAT(error, HasSubstr("run/report.json"));
  EXPECT_THAT(error, HasSubstr("rankz"));
  EXPECT_THROW(from_json(R"({"ranks": 2, "rankz": 3})", &r, "x"), InputError);
}

TEST(FromJson, AcceptsCamelCaseAndSyntaxErrorsAreInputErrors) {
  proto::Report r;
  // A field without presence: step_time_s has presence (absent for an
  // incomplete step), and JSON rejects setting such a field twice.
  from_json(R"({"memoryLimitBytes": 2.5, "memory_limit_bytes": 2.5})", &r, "x");
  EXPECT_EQ(r.memory_limit_bytes(), 2.5);
  EXPECT_THROW(from_json("{\"ranks\": ", &r, "x"), InputError);
}

TEST(ReadMessage, JsonUnknownFieldNamesThePath) {
  const auto dir = fresh_dir("json");
  write_file_atomically(dir / "report.json", R"({"scenario": "s", "bogus_field": 1})");
  proto::Report r;
  const std::string error = message_of([&] { read_message(dir / "report.json", &r); });
  EXPECT_THAT(error, HasSubstr((dir / "report.json").string()));
  EXPECT_THAT(error, HasSubstr("bogus_field"));
}

TEST(ReadMessage, TextErrorsNameThePathLineAndColumn) {
  const auto dir = fresh_dir("text");
  write_file_atomically(dir / "c.textproto", "gpu: \"A100\"\n\nforward { alpha9: 1 }\n");
  proto::Calibration c;
  const std::string error = message_of([&] { read_message(dir / "c.textproto", &c); });
  EXPECT_THAT(error, HasSubstr((dir / "c.textproto").string() + ":3:11:"));
  EXPECT_THAT(error, HasSubstr("alpha9"));
}

TEST(ReadMessage, MissingFileIsAnInputError) {
  const auto dir = fresh_dir("missing");
  proto::Trace t;
  EXPECT_THROW(read_message(dir / "nope.pb", &t), InputError);
  EXPECT_THAT(message_of([&] { read_message(dir / "nope.pb", &t); }), HasSubstr("nope.pb"));
}

TEST(FromBinary, GarbageIsAnInputError) {
  proto::Trace t;
  EXPECT_THROW(from_binary(std::string("\xff\xff\xff\xff", 4), &t, "junk.pb"), InputError);
  EXPECT_THAT(message_of([&] { from_binary(std::string("\xff\xff\xff\xff", 4), &t, "junk.pb"); }), HasSubstr("junk.pb"));
}

TEST(FromBinary, UnknownFieldsAreErrorsWithTheirPlace) {
  // Field 99, varint 1, at the top level and inside cost_model.calibration.forward.
  const std::string unknown_field("\x98\x06\x01", 3);
  proto::Scenario s = testing::sample_scenario();
  std::string bytes = to_binary(s) + unknown_field;
  proto::Scenario parsed;
  EXPECT_THAT(message_of([&] { from_binary(bytes, &parsed, "s.pb"); }), HasSubstr("(top level)"));

  proto::ComputeFit fit;
  fit.set_beta_s(1.0);
  const std::string fit_bytes = to_binary(fit) + unknown_field;
  proto::Calibration calibration;
  calibration.mutable_forward()->ParseFromString(fit_bytes);  // keeps the unknown field
  proto::CostModel cost;
  *cost.mutable_calibration() = calibration;
  proto::CostModel cost_parsed;
  const std::string error = message_of([&] { from_binary(to_binary(cost), &cost_parsed, "c.pb"); });
  EXPECT_THAT(error, HasSubstr("calibration.forward"));
  EXPECT_THAT(error, HasSubstr("c.pb"));
}

TEST(WriteFileAtomically, WritesReplacesAndLeavesNoTemporaries) {
  const auto dir = fresh_dir("atomic");
  const auto path = dir / "a" / "b" / "out.txt";
  write_file_atomically(path, "first");
  EXPECT_EQ(read_file(path), "first");
  write_file_atomically(path, std::string("second\0with nul", 15));
  EXPECT_EQ(read_file(path), std::string("second\0with nul", 15));
  write_file_atomically(path, "");
  EXPECT_EQ(read_file(path), "");
  EXPECT_THAT(directory_listing(dir / "a" / "b"), ::testing::ElementsAre("out.txt"));
}

TEST(WriteFileAtomically, FailureThrowsNamingThePathAndCleansUp) {
  const auto dir = fresh_dir("fail");
  std::filesystem::create_directories(dir / "target_is_a_dir" / "child");
  const std::string error = message_of([&] { write_file_atomically(dir / "target_is_a_dir", "x"); });
  EXPECT_THAT(error, HasSubstr("target_is_a_dir"));
  EXPECT_THAT(directory_listing(dir), ::testing::ElementsAre("target_is_a_dir"));

  write_file_atomically(dir / "plain_file", "x");
  EXPECT_THROW(write_file_atomically(dir / "plain_file" / "below.txt", "y"), std::runtime_error);
}

TEST(WriteMessage, PastProtobufsLimitIsRefusedBeforeAnyFileNamingTheSize) {
  EXPECT_NO_THROW(check_binary_size(kMaxBinaryMessageBytes, "out/trace.pb", "eppsim.proto.Trace"));
  try {
    check_binary_size(2248740784, "out/trace.pb", "eppsim.proto.Trace");
    FAIL() << "2,248,740,784 bytes passed";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("out/trace.pb: eppsim.proto.Trace would be 2248740784 bytes, past the 2147483647 "
                                    "bytes (2 GiB) protobuf writes as one message; write less of it"));
    EXPECT_THAT(e.what(), Not(HasSubstr("Success")));
  }
}

// A write that fails names the system's error: here the file-size limit
// (RLIMIT_FSIZE, EFBIG) in a child process, whose exit status says what it saw.
TEST(WriteMessage, AFailedWriteNamesTheSystemsError) {
  const auto dir = fresh_dir("write_message_efbig");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead of killing the process
    const rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    proto::Report report;
    report.set_scenario(std::string(1 << 20, 'x'));
    try {
      write_message(report, dir / "report.pb");
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      _exit(what.find("cannot write eppsim.proto.Report: File too large") != std::string::npos &&
                    !std::filesystem::exists(dir / "report.pb")
                ? 0
                : 2);
    }
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the write succeeded; 2: another message, or a file left behind";
  std::size_t left = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++left;
  EXPECT_EQ(left, 0u) << "a temporary was left behind";
}

TEST(SystemErrorText, NeverReadsAsSuccess) {
  EXPECT_EQ(system_error_text(0), "no error reported by the system");
  EXPECT_EQ(system_error_text(ENOSPC), "No space left on device");
}

TEST(ReadFile, MissingFileNamesThePath) {
  const auto dir = fresh_dir("read");
  EXPECT_THROW(read_file(dir / "absent.txt"), InputError);
  EXPECT_THAT(message_of([&] { read_file(dir / "absent.txt"); }), HasSubstr("absent.txt"));
  EXPECT_THROW(read_file(dir), InputError);  // a directory
}

}  // namespace
}  // namespace eppsim
