#include "sim/engine/forked_run.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
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

}  // namespace
}  // namespace eppsim
