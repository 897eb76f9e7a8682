#include "base/protobuf_log.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "proto/schedule.pb.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

// Bytes of a Schedule whose `scenario` (field 1) is not UTF-8: protobuf logs
// an error and refuses it.
const std::string kInvalidUtf8 = std::string("\x0a\x03\xff\xfe\xfd", 5);

TEST(ProtobufLogCapture, KeepsWhatProtobufLogsAndNothingReachesStderr) {
  ::testing::internal::CaptureStderr();
  std::string said;
  {
    const ProtobufLogCapture capture;
    proto::Schedule schedule;
    EXPECT_FALSE(schedule.ParseFromString(kInvalidUtf8));
    said = capture.detail();
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_THAT(said, HasSubstr("(String field 'eppsim.proto.Schedule.scenario' contains invalid UTF-8 data"));
  EXPECT_EQ(said.back(), ')');
}

TEST(ProtobufLogCapture, NestedCapturesKeepTheirOwnLines) {
  const ProtobufLogCapture outer;
  {
    const ProtobufLogCapture inner;
    proto::Schedule schedule;
    EXPECT_FALSE(schedule.ParseFromString(kInvalidUtf8));
    EXPECT_FALSE(inner.text().empty());
  }
  EXPECT_EQ(outer.text(), "");
  EXPECT_EQ(outer.detail(), "");
  proto::Schedule schedule;
  EXPECT_FALSE(schedule.ParseFromString(kInvalidUtf8));
  EXPECT_THAT(outer.text(), HasSubstr("invalid UTF-8"));
}

}  // namespace
}  // namespace eppsim
