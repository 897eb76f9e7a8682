#include "traces/trace_file.h"

#include <filesystem>

#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/errors.h"
#include "models/input_limits.h"
#include "tests/traces/trace_fixture.h"
#include "traces/chrome_trace.h"
#include "traces/proto_io.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TraceFile : public ::testing::Test {
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

TEST_F(TraceFile, ReadsEveryFormAndRunDirectories) {
  const auto trace = testing::two_rank_trace("analytic");
  for (const char* name : {"t.pb", "t.json", "t.textproto", "trace.pb"}) write_message(trace, dir_ / name);
  for (const char* name : {"t.pb", "t.json", "t.textproto"}) {
    EXPECT_EQ(read_trace(dir_ / name).events_size(), trace.events_size()) << name;
  }
  EXPECT_EQ(trace_file_of(dir_), dir_ / "trace.pb");
  EXPECT_EQ(read_trace(dir_).step_time_ns(), trace.step_time_ns());
}

TEST_F(TraceFile, AChromeTraceOrADirectoryWithoutTraceIsBadInput) {
  write_chrome_trace(testing::two_rank_trace("analytic"), dir_ / "trace.json");
  EXPECT_THAT(error_of(dir_ / "trace.json"), HasSubstr("trace.json: a Chrome trace"));
  EXPECT_THAT(error_of(dir_), HasSubstr("a directory without trace.pb"));
}

TEST_F(TraceFile, RanksAndRankStreamsAreBounded) {
  auto trace = testing::two_rank_trace("analytic");
  trace.set_num_ranks(limits::kMaxRanks + 1);
  write_message(trace, dir_ / "ranks.pb");
  EXPECT_THAT(error_of(dir_ / "ranks.pb"), HasSubstr("ranks.pb: num_ranks: must be <= 4194304"));
  trace.set_num_ranks(1u << 20);
  for (int i = 0; i < 3; ++i) trace.add_stream_names("s");  // 5 declared
  trace.mutable_events(0)->set_stream(9);                    // and one more
  write_message(trace, dir_ / "streams.pb");
  EXPECT_THAT(error_of(dir_ / "streams.pb"),
              HasSubstr("streams.pb: num_ranks x streams: must be at most 4194304, got 1048576 ranks x 6 streams"));
  trace.set_num_ranks(1u << 17);
  write_message(trace, dir_ / "fits.pb");
  EXPECT_EQ(read_trace(dir_ / "fits.pb").num_ranks(), 1u << 17);
}

}  // namespace
}  // namespace eppsim
