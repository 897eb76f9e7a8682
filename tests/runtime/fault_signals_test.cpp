// runtime/fault_signals.h: a crashing rank names the ops in flight; a
// termination signal turns into Terminated where the rank next waits.
#include "runtime/fault_signals.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

namespace eppsim::runtime {
namespace {

TEST(FaultSignals, ACrashNamesTheRankAndTheOpsInFlightThenDiesOfTheSignal) {
  EXPECT_EXIT(
      {
        install_fault_signals(3);
        set_ops_in_flight("rank 3 op 7 (RECV of 4 KiB from rank 2, tag 1)");
        std::raise(SIGSEGV);
      },
      ::testing::KilledBySignal(SIGSEGV),
      "eppsim-run: rank 3: error: died of signal 11 \\(SIGSEGV\\) while running: rank 3 op 7 \\(RECV of 4 KiB from "
      "rank 2, tag 1\\)");
}

TEST(FaultSignals, AnAbortBetweenStepsSaysSo) {
  EXPECT_EXIT(
      {
        install_fault_signals(0);
        std::abort();
      },
      ::testing::KilledBySignal(SIGABRT), "rank 0: error: died of signal 6 \\(SIGABRT\\) while running: nothing");
}

TEST(FaultSignals, TheOpsInFlightAreCutToTheHandlersBuffer) {
  EXPECT_EXIT(
      {
        install_fault_signals(1);
        std::string ops(5000, 'x');
        ops.append("END");  // not string + "END": GCC 12 warns of a false -Warray-bounds in it at -O2
        set_ops_in_flight(ops);
        std::raise(SIGBUS);
      },
      ::testing::KilledBySignal(SIGBUS), "while running: x{1000,1023}\n");
}

TEST(FaultSignals, ATerminationSignalIsThrownWhereTheRankNextWaits) {
  install_fault_signals(0);
  EXPECT_EQ(termination_signal(), 0);
  EXPECT_NO_THROW(throw_if_terminated("waiting on nothing"));
  std::raise(SIGTERM);  // handled: recorded, the process goes on
  EXPECT_EQ(termination_signal(), SIGTERM);
  try {
    throw_if_terminated("waiting on rank 0 op 5");
    FAIL() << "no Terminated";
  } catch (const Terminated& e) {
    EXPECT_EQ(e.signal(), SIGTERM);
    EXPECT_EQ(std::string(e.what()),
              "terminated by signal 15 (SIGTERM; mpirun sends it to every rank when one dies or the job is cancelled) "
              "while waiting on rank 0 op 5");
  }
}

}  // namespace
}  // namespace eppsim::runtime
