// AtomicFileWriter (base/atomic_file.h): the target appears only on commit,
// whole; an abandoned writer leaves nothing behind; errors name the path.
#include "base/atomic_file.h"
#include "base/errors.h"

#include <filesystem>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/schedule/sample_messages.h"
#include "base/proto_io.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::size_t files_in(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFileWriter, TargetAppearsWholeOnlyOnCommit) {
  const auto dir = testing::fresh_dir("atomic_commit");
  write_file_atomically(dir / "out.txt", "old contents");
  {
    AtomicFileWriter file(dir / "out.txt");
    file.write("new ");
    fmt::memory_buffer buffer;
    fmt::format_to(std::back_inserter(buffer), "contents {}", 42);
    flush_if_full(buffer, file, 4);  // over 4 bytes: handed to the file and cleared
    EXPECT_EQ(buffer.size(), 0u);
    EXPECT_EQ(read_file(dir / "out.txt"), "old contents");  // readers still see the old file
    EXPECT_EQ(files_in(dir), 2u);                           // the target and the temporary
    file.commit();
  }
  EXPECT_EQ(read_file(dir / "out.txt"), "new contents 42");
  EXPECT_EQ(files_in(dir), 1u);
}

TEST(AtomicFileWriter, AbandonedWriterLeavesTheOldFileAndNoTemporary) {
  const auto dir = testing::fresh_dir("atomic_abandon");
  write_file_atomically(dir / "out.txt", "old");
  try {
    AtomicFileWriter file(dir / "out.txt");
    file.write("half of a new fi");
    throw std::runtime_error("the producer failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read_file(dir / "out.txt"), "old");
  EXPECT_EQ(files_in(dir), 1u);
}

TEST(AtomicFileWriter, CreatesParentsAndNamesThePathInErrors) {
  const auto dir = testing::fresh_dir("atomic_errors");
  {
    AtomicFileWriter file(dir / "a" / "b" / "out.txt");
    file.commit();
  }
  EXPECT_TRUE(fs::is_regular_file(dir / "a" / "b" / "out.txt"));
  write_file_atomically(dir / "plain", "x");
  try {
    AtomicFileWriter file(dir / "plain" / "out.txt");  // a file where a directory must be
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr((dir / "plain" / "out.txt").string()));
  }
  EXPECT_THROW(AtomicFileWriter(""), std::runtime_error);
}

TEST(AtomicFileWriter, RemovesTheTemporariesOfWritersThatWereKilled) {
  const auto dir = testing::fresh_dir("atomic_stale");
  // pid 1 is alive; no process has the largest pid the kernel can give, 4194304.
  write_file_atomically(dir / "out.txt.tmp-4194304-0", "left by a killed run");
  write_file_atomically(dir / "out.txt.tmp-1-0", "a live writer's");
  write_file_atomically(dir / "other.txt.tmp-4194304-0", "another file's");
  write_file_atomically(dir / "out.txt", "new");
  EXPECT_FALSE(fs::exists(dir / "out.txt.tmp-4194304-0"));
  EXPECT_TRUE(fs::exists(dir / "out.txt.tmp-1-0"));
  EXPECT_TRUE(fs::exists(dir / "other.txt.tmp-4194304-0"));
}

TEST(AtomicFileWriter, APathTheUserMustFixIsAnInputError) {
  const auto dir = testing::fresh_dir("atomic_input");
  EXPECT_THROW(AtomicFileWriter(dir / (std::string(300, 'x') + ".pb")), InputError);  // past NAME_MAX
  EXPECT_THROW(AtomicFileWriter("/proc/eppsim-test.pb"), InputError);                  // nothing can be created there
}

}  // namespace
}  // namespace eppsim
