#include "traces/schedule_file.h"

#include <filesystem>

#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/errors.h"
#include "traces/proto_io.h"
#include "traces/shared_compute.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;

TEST(ReadScheduleFile, ConvertsAVersion2FilesSegmentMessages) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eppsim_replay_v2-{}", ::getpid());
  fs::create_directories(dir);
  const fs::path file = dir / "v2.textproto";
  write_file_atomically(file,
                        "header { schema_version: 2 } num_ranks: 1 stream_names: \"compute\" programs { ops { stream: 0 "
                        "compute { phase: FORWARD layer_count: 1 segments { tokens: 300 context_tokens: 700 } "
                        "segments { tokens: 50 } } } }\n");
  const proto::Schedule schedule = read_schedule_file(file);
  const auto& c = compute_of(schedule, schedule.programs(0).ops(0));
  EXPECT_EQ(c.segments_size(), 0);
  ASSERT_EQ(c.segment_tokens_size(), 2);
  EXPECT_EQ(c.segment_tokens(0), 300u);
  EXPECT_EQ(c.segment_context_tokens(0), 700u);
  EXPECT_EQ(c.segment_tokens(1), 50u);
  EXPECT_EQ(c.segment_context_tokens(1), 0u);
  fs::remove_all(dir);
}

// A file that breaks a rule of validate_schedule: the message names the file.
TEST(ReadScheduleFile, AnInvalidScheduleNamesTheFile) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eppsim_schedule_file-{}", ::getpid());
  fs::create_directories(dir);
  const fs::path file = dir / "bad.textproto";
  write_file_atomically(file, "num_ranks: 1 stream_names: \"compute\" programs { ops { stream: 0 shared_compute: 3 } }\n");
  try {
    read_schedule_file(file);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(file.string() + ": schedule: rank 0 op 0: shared_compute: index 3 out of range"));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace eppsim
