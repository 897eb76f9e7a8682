#include "sim/output_directory.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schedule/trace_file.h"
#include "base/errors.h"
#include "base/proto_io.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class OutputDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("output_directory_test_{}", ::getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  static void touch(const fs::path& path, const std::string& text = "x") { std::ofstream(path) << text; }
  std::string refusal(const fs::path& dir) {
    try {
      OutputDirectory out(dir);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  }
  // Everything in root_, names only.
  std::vector<std::string> entries() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(root_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path root_;
};

TEST_F(OutputDirectoryTest, ANewRunReplacesTheOldDirectoryAsAWhole) {
  const fs::path dir = root_ / "out";
  {
    OutputDirectory first(dir);
    touch(first.staging() / "old-only.csv");
    touch(first.staging() / "report.json", "first");
    first.commit();
  }
  EXPECT_TRUE(fs::exists(dir / OutputDirectory::kMarker));
  {
    OutputDirectory second(dir);
    EXPECT_TRUE(fs::exists(dir / "old-only.csv"));  // untouched until the commit
    touch(second.staging() / "report.json", "second");
    second.commit();
  }
  EXPECT_FALSE(fs::exists(dir / "old-only.csv"));
  std::ifstream in(dir / "report.json");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "second");
  EXPECT_EQ(entries(), std::vector<std::string>{"out"});  // no staging or old directory left
}

TEST_F(OutputDirectoryTest, AFailedRunLeavesThePreviousDirectory) {
  const fs::path dir = root_ / "out";
  {
    OutputDirectory first(dir);
    touch(first.staging() / "report.json", "first");
    first.commit();
  }
  {
    OutputDirectory failed(dir);
    touch(failed.staging() / "report.json", "half");
  }  // no commit: as when the run throws
  std::ifstream in(dir / "report.json");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "first");
  EXPECT_EQ(entries(), std::vector<std::string>{"out"});
}

TEST_F(OutputDirectoryTest, AKilledRunsStagingIsRemovedByTheNextRun) {
  // A pid that cannot be running: above the kernel's pid_max (4194304 at most).
  const fs::path stale = root_ / ".out.eppsim-partial-99999999";
  fs::create_directories(stale);
  touch(stale / "report.json");
  const fs::path other = root_ / ".other.eppsim-partial-99999999";  // another directory's: left alone
  fs::create_directories(other);
  OutputDirectory out(root_ / "out");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(other));
}

TEST_F(OutputDirectoryTest, APartialTraceLiesBesideTheDirectory) {
  proto::Trace partial;
  partial.set_num_ranks(2);
  partial.mutable_incomplete()->set_reason("interrupted by SIGINT");
  const fs::path kept = write_partial_trace(partial, root_ / "out" / "");
  EXPECT_EQ(kept, root_ / "out.interrupted-trace.pb");
  EXPECT_EQ(write_partial_trace(partial, root_ / "out"), kept);
  const proto::Trace read = read_trace(kept);
  EXPECT_EQ(read.incomplete().reason(), "interrupted by SIGINT");
  EXPECT_THAT(entries(), ::testing::ElementsAre("out.interrupted-trace.pb"));  // nothing else, no temporary file
}

TEST_F(OutputDirectoryTest, ReplacesOnlyWhatEppsimWrote) {
  touch(root_ / "file");
  EXPECT_THAT(refusal(root_ / "file"), HasSubstr("file: exists and is not a directory"));
  fs::create_directories(root_ / "mine");
  touch(root_ / "mine" / "thesis.tex");
  EXPECT_THAT(refusal(root_ / "mine"), HasSubstr("mine: holds files eppsim did not write (no .eppsim-output in it)"));
  fs::create_directory_symlink(root_ / "mine", root_ / "link");
  EXPECT_THAT(refusal(root_ / "link"), HasSubstr("link: is a symbolic link"));
  EXPECT_THAT(refusal(fs::current_path()), HasSubstr("is the current directory or one of its parents"));
  EXPECT_THAT(refusal(fs::current_path().parent_path()), HasSubstr("is the current directory or one of its parents"));
  fs::create_directories(root_ / "empty");
  EXPECT_EQ(refusal(root_ / "empty"), "accepted");
  EXPECT_TRUE(fs::exists(root_ / "mine" / "thesis.tex"));
}

TEST_F(OutputDirectoryTest, ALockKeepsASecondRunOut) {
  const fs::path dir = root_ / "out";
  {
    OutputLock first(dir);
    try {
      OutputLock second(dir);
      FAIL() << "a second lock was taken";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("out: another eppsim run (pid {}) is writing it", ::getpid())));
    }
  }
  EXPECT_FALSE(fs::exists(root_ / ".out.eppsim-lock"));  // removed on release
  OutputLock again(dir);  // free again
}

}  // namespace
}  // namespace eppsim
