#include "base/subprocess.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "tests/base/child_process_probes.h"

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
  const testing::SigtermedRunner run = testing::sigterm_once_child_runs("subprocess_sigterm", [](const std::string& file) {
    run_process({{"/bin/sh", "-c", "echo $$ > " + file + "; exec sleep 60"}, {}, {}});
  });
  ASSERT_GT(run.child, 0);
  EXPECT_LT(run.end.took, std::chrono::seconds(1));
  EXPECT_EQ(run.end.exit_status, 3);
  EXPECT_NE(::kill(run.child, 0), 0);  // killed and reaped by the runner
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
