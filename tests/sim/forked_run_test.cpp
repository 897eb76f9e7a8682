#include "sim/engine/forked_run.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/interrupt.h"
#include "schedule/executor/executor_core.h"

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

pid_t wait_for_pid_file(const std::string& file) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(file);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

// Gone, or a zombie no one has reaped yet: no longer running.
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string fields[3];
  return stat >> fields[0] >> fields[1] >> fields[2] && fields[2] != "Z" && fields[2] != "X";
}

bool stops_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (running(pid) && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return !running(pid);
}

TEST(ForkedRun, TheChildDiesWithItsParent) {
  const std::string file = ::testing::TempDir() + "forked_run_parent_killed.pid";
  std::remove(file.c_str());
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    run_forked("test", sleeper(file));
    ::_exit(0);
  }
  const pid_t child = wait_for_pid_file(file);
  ASSERT_GT(child, 0);
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  EXPECT_TRUE(stops_within(child, std::chrono::seconds(2)));
}

TEST(ForkedRun, SigtermEndsTheChildAndTheWait) {
  // In a process of its own: the interrupt it records is for good.
  const std::string file = ::testing::TempDir() + "forked_run_sigterm.pid";
  std::remove(file.c_str());
  const pid_t runner = ::fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {
    install_interrupt_handlers();
    try {
      run_forked("test", sleeper(file));
    } catch (const Interrupted&) {
      ::_exit(interrupt_signal() == SIGTERM ? 3 : 4);
    }
    ::_exit(5);
  }
  const pid_t child = wait_for_pid_file(file);
  ASSERT_GT(child, 0);
  const auto start = std::chrono::steady_clock::now();
  ::kill(runner, SIGTERM);
  int status = 0;
  ::waitpid(runner, &status, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_TRUE(stops_within(child, std::chrono::seconds(1)));
}

}  // namespace
}  // namespace eppsim
