#include "sim/engine/forked_run.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "schedule/executor/executor_core.h"
#include "tests/base/child_process_probes.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

TEST(ForkedRun, ReturnsTheChildsBytes) {
  std::string big(1 << 20, 'x');  // more than a pipe holds at once
  big[12345] = '\0';
  EXPECT_EQ(run_forked("test", [&] { return big; }), big);
}

TEST(ForkedRun, RethrowsTheChildsErrorAsTheSameType) {
  EXPECT_THROW(run_forked("test", []() -> std::string { throw InputError("bad input"); }), InputError);
  EXPECT_THROW(run_forked("test", []() -> std::string { throw ScheduleDeadlock("stuck"); }), ScheduleDeadlock);
  EXPECT_THROW(run_forked("test", []() -> std::string { throw ScheduleMismatch("differ"); }), ScheduleMismatch);
  EXPECT_THROW(run_forked("test", []() -> std::string { throw std::invalid_argument("no"); }), std::invalid_argument);
  try {
    run_forked("test", []() -> std::string { throw ScheduleMismatch("rank 1 op 0 differs"); });
  } catch (const ScheduleMismatch& e) {
    EXPECT_STREQ(e.what(), "rank 1 op 0 differs");
  }
}

TEST(ForkedRun, AChildThatDiesIsNamedWithItsSignal) {
  try {
    run_forked("flow engine", []() -> std::string { std::abort(); });
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("flow engine: the child process died of signal 6"));
  }
}

// A body that writes its pid to `file`, then sleeps far past any test's wait.
std::function<std::string()> sleeper(const std::string& file) {
  return [file]() -> std::string {
    std::ofstream(file) << ::getpid();
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return "woke";
  };
}

TEST(ForkedRun, TheChildDiesWithItsParent) {
  const std::string file = testing::fresh_pid_file("forked_run_parent_killed");
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    run_forked("test", sleeper(file));
    ::_exit(0);
  }
  const pid_t child = testing::wait_for_pid_file(file);
  ASSERT_GT(child, 0);
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  EXPECT_TRUE(testing::stops_within(child, std::chrono::seconds(2)));
}

TEST(ForkedRun, SigtermEndsTheChildAndTheWait) {
  const testing::SigtermedRunner run = testing::sigterm_once_child_runs(
      "forked_run_sigterm", [](const std::string& file) { run_forked("test", sleeper(file)); });
  ASSERT_GT(run.child, 0);
  EXPECT_LT(run.end.took, std::chrono::seconds(1));
  EXPECT_EQ(run.end.exit_status, 3);
  EXPECT_TRUE(testing::stops_within(run.child, std::chrono::seconds(1)));
}

}  // namespace
}  // namespace eppsim
