#include "base/text_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "proto/scenario.pb.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

TEST(TryParseText, ParsesAndRecordsLocations) {
  proto::Scenario s;
  google::protobuf::TextFormat::ParseInfoTree tree;
  const auto error = try_parse_text("# comment\nseed: 3\ncluster {\n  nodes: 2\n}\n", &s, &tree);
  ASSERT_FALSE(error.has_value()) << error->message;
  EXPECT_EQ(s.seed(), 3u);
  EXPECT_EQ(s.cluster().nodes(), 2u);
  const auto* cluster = proto::Scenario::descriptor()->FindFieldByName("cluster");
  EXPECT_EQ(tree.GetLocation(cluster, -1).line, 2);  // 0-based, as protobuf keeps it
  const auto* nested = tree.GetTreeForNested(cluster, -1);
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->GetLocation(proto::Cluster::descriptor()->FindFieldByName("nodes"), -1).line, 3);
}

TEST(TryParseText, ErrorsAreOneBasedAndNothingReachesStderr) {
  proto::Scenario s;
  ::testing::internal::CaptureStderr();
  const auto error = try_parse_text("seed: 1\n  bogus: 2 # bogus\n", &s);
  const std::string logged = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->line, 2);
  EXPECT_EQ(error->column, 3);
  EXPECT_THAT(error->message, HasSubstr("bogus"));
  EXPECT_EQ(logged, "");
}

TEST(TryParseText, ErrorPastTheEndHasNoLine) {
  proto::Scenario s;
  const auto error = try_parse_text("cluster {\n  nodes: 2\n", &s);
  ASSERT_TRUE(error.has_value());
  EXPECT_FALSE(error->message.empty());
}

// A value error names its field, also when the value is quoted (a number
// written as a string); an error that names its field keeps its own words.
TEST(TryParseText, ValueErrorsNameTheField) {
  proto::Scenario s;
  auto error = try_parse_text("cluster {\n  nodes: \"32\"\n}\n", &s);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "nodes: Expected integer, got: \"32\"");
  error = try_parse_text("seed: x\n", &s);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "seed: Expected integer, got: x");
  error = try_parse_text("workload { over_max_length: CUT }\n", &s);
  ASSERT_TRUE(error.has_value());
  EXPECT_THAT(error->message, ::testing::StartsWith("Unknown enumeration value of \"CUT\" for field \"over_max_length\""));
}

TEST(ParseTextStrict, ThrowsWithSourceLineAndColumn) {
  proto::Scenario s;
  try {
    parse_text_strict("name: \"n\"\nseed: x\n", &s, "a.textproto");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a.textproto:2:7: "));
  }
  try {
    parse_text_strict("seed: 1\n\tseed: 2\n", &s, "a.textproto");  // a tab counts to column 9
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a.textproto:2:9: Non-repeated field \"seed\""));
  }
  EXPECT_THROW(parse_text_strict("model { preset: \"a\" preset: \"b\" }", &s, "dup"), InputError);
}

}  // namespace
}  // namespace eppsim
