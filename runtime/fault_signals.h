#pragma once
// What a rank of eppsim-run says when it dies or is told to end (issue 11,
// item 8; issue 14, item 6). Signals are process-wide, so this is too.
//
// - A rank that crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, on any
//   thread) writes "eppsim-run: rank R: error: died of signal N (NAME) while
//   running: <the ops in flight>" to stderr, then dies of the same signal, so
//   mpirun still reports it and ends the job.
// - A rank told to end (SIGTERM, SIGINT, SIGHUP: mpirun sends SIGTERM to every
//   other rank when one dies, then SIGKILL about a second later) only records
//   the signal; the loops that wait (the rank executor, mpi_wait) call
//   throw_if_terminated between polls, so the rank fails naming the op it was
//   waiting on and rank 0 keeps its partial trace before the SIGKILL.
// A rank killed outright (SIGKILL: the OOM killer, `kill -9`) cannot say
// anything; mpirun names it, and the others name the ops that waited on it.
#include <stdexcept>
#include <string>
#include <string_view>

namespace eppsim::runtime {

// Installs the handlers above for `rank`. Call once, before any thread starts.
void install_fault_signals(int rank);

// Sets the text the crash handler prints as the ops in flight (truncated to
// about 1 KiB). Called by the thread that runs the executor; the handler may
// run on any thread and reads whichever copy was published last.
void set_ops_in_flight(std::string_view text);

// The signal that told the process to end, or 0.
int termination_signal();

class Terminated : public std::runtime_error {
 public:
  Terminated(int signal, const std::string& message) : std::runtime_error(message), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Throws Terminated "terminated by signal N (NAME) while <doing>" when a
// termination signal has arrived.
void throw_if_terminated(std::string_view doing);

}  // namespace eppsim::runtime
