#include "base/interrupt.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "tests/base/child_process_probes.h"

namespace eppsim {
namespace {

using namespace std::chrono_literals;
using testing::fork_interruptible_runner;
using testing::sigterm_and_reap;

TEST(Interrupt, ThrowIfInterruptedThrowsTheRecordedSignal) {
  const pid_t runner = fork_interruptible_runner([] {
    for (;;) {
      throw_if_interrupted();
      std::this_thread::sleep_for(1ms);
    }
  });
  ASSERT_GT(runner, 0);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(sigterm_and_reap(runner).exit_status, 3);
}

// A process that starts the deadline (exit 7 when it strikes), then works for
// up to 20 s without looking for a signal; `hold_s` of it under a deadline hold.
pid_t fork_deaf_worker(double hold_s) {
  const pid_t worker = ::fork();
  if (worker != 0) return worker;
  install_interrupt_handlers();
  start_interrupt_deadline(100ms, [](int signal) { ::_exit(signal == SIGTERM ? 7 : 8); });
  {
    const InterruptDeadlineHold hold;
    while (interrupt_signal() == 0) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(std::chrono::duration<double>(hold_s));
  }
  const auto end = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(1ms);
  ::_exit(5);
}

TEST(Interrupt, TheDeadlineEndsWorkThatLooksForNoSignal) {
  const pid_t worker = fork_deaf_worker(0.0);
  ASSERT_GT(worker, 0);
  std::this_thread::sleep_for(50ms);
  const auto end = sigterm_and_reap(worker);
  EXPECT_EQ(end.exit_status, 7);  // 5: the work ran its 20 s out
}

TEST(Interrupt, AHoldKeepsTheDeadlineWaitingUntilItIsReleased) {
  const pid_t worker = fork_deaf_worker(0.5);
  ASSERT_GT(worker, 0);
  std::this_thread::sleep_for(50ms);
  const auto end = sigterm_and_reap(worker);
  EXPECT_EQ(end.exit_status, 7);
  EXPECT_GE(end.took, 500ms);  // the hold's half second, then the deadline
}

TEST(Interrupt, KeepUntilExitTakesWhatTheObjectHeld) {
  std::vector<int> big(1000, 1);
  abandon(big);
  EXPECT_TRUE(big.empty());  // moved from: its memory lives on, unfreed, until the process ends
}

}  // namespace
}  // namespace eppsim
