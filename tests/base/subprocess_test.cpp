#include "base/subprocess.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "base/interrupt.h"

namespace eppsim {
namespace {

TEST(Subprocess, ReportsTheExitStatus) {
  const auto result = run_process({{"/bin/sh", "-c", "exit 3"}, {}, {}});
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_FALSE(result.succeeded());
  EXPECT_EQ(result.describe(), "exit status 3");
  EXPECT_TRUE(run_process({{"true"}, {}, {}}).succeeded());  // looked up on PATH
}

TEST(Subprocess, PassesTheExtraEnvironment) {
  ProcessRequest request{{"/bin/sh", "-c", "test \"$EPPSIM_PROBE\" = yes && test -n \"$PATH\""}, {{"EPPSIM_PROBE", "yes"}}, {}};
  EXPECT_TRUE(run_process(request).succeeded());
  request.environment = {{"EPPSIM_PROBE", "no"}};
  EXPECT_EQ(run_process(request).exit_status, 1);
}

TEST(Subprocess, KillsAChildPastItsTimeLimit) {
  const auto start = std::chrono::steady_clock::now();
  // The shell's own child (sleep) sits in the same process group and dies with it.
  const auto result = run_process({{"/bin/sh", "-c", "sleep 30; exit 0"}, {}, std::chrono::seconds(1)});
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.succeeded());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(Subprocess, SigtermEndsTheWaitAndTheChild) {
  // In a process of its own: the interrupt it records is for good.
  const std::string file = ::testing::TempDir() + "subprocess_sigterm.pid";
  std::remove(file.c_str());
  const pid_t runner = ::fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {
    install_interrupt_handlers();
    try {
      run_process({{"/bin/sh", "-c", "echo $$ > " + file + "; exec sleep 60"}, {}, {}});
    } catch (const Interrupted&) {
      ::_exit(3);
    }
    ::_exit(4);
  }
  pid_t child = 0;
  for (int i = 0; i < 500 && child == 0; ++i) {
    std::ifstream(file) >> child;
    if (child == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(child, 0);
  const auto start = std::chrono::steady_clock::now();
  ::kill(runner, SIGTERM);
  int status = 0;
  ::waitpid(runner, &status, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_NE(::kill(child, 0), 0);  // killed and reaped by the runner
}

TEST(Subprocess, ReportsASignal) {
  const auto result = run_process({{"/bin/sh", "-c", "kill -TERM $$"}, {}, {}});
  EXPECT_EQ(result.signal, 15);
  EXPECT_FALSE(result.succeeded());
}

TEST(Subprocess, AMissingProgramIsAnErrorNamingIt) {
  try {
    run_process({{"/nonexistent/eppsim-nothing"}, {}, {}});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/eppsim-nothing"), std::string::npos) << e.what();
  }
}

TEST(Subprocess, QuotesCommandLinesForPeople) {
  EXPECT_EQ(command_line({"mpirun", "-np", "2", "a b", "it's"}), "mpirun -np 2 'a b' 'it'\\''s'");
}

}  // namespace
}  // namespace eppsim
