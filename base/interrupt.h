#pragma once
// Ending a long run cleanly on SIGINT (Ctrl-C) or SIGTERM: main() installs the
// handlers, which only record the signal; long loops (the engines and
// planners, through progress::ProgressLine::update) call throw_if_interrupted,
// so the run unwinds: its staging output directory is removed
// (sim/output_directory.h), the previous complete outputs stay, and main()
// exits with 128 + the signal's number.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace eppsim {

class Interrupted : public std::runtime_error {
 public:
  // `outputs`: what became of the run's outputs, for main()'s last line.
  explicit Interrupted(int signal, std::string outputs = "the output directory keeps what it held before");
  int signal() const { return signal_; }
  const std::string& outputs() const { return outputs_; }

 private:
  int signal_;
  std::string outputs_;
};

// SIGINT and SIGTERM record the signal (the first one); a second SIGINT ends
// the process at once, as usual, for a run that does not reach a check.
void install_interrupt_handlers();
// The signal that arrived, or 0.
int interrupt_signal();
// Throws Interrupted when a signal arrived.
void throw_if_interrupted();

// For main(): once a signal has been recorded, a thread of its own waits
// `grace` more and, if the process is still running, calls `on_deadline` with
// the signal (main's function ends the process). Work that looks for no signal
// for a long while (protobuf turning a report of a million ranks into JSON)
// still ends within a second. Call once, after install_interrupt_handlers.
void start_interrupt_deadline(std::chrono::milliseconds grace, void (*on_deadline)(int signal));

// While one lives, that deadline waits: for what an interrupted run must
// still write (the trace of an interrupted step's finished ops, kept beside
// its output directory), however long that takes.
class InterruptDeadlineHold {
 public:
  InterruptDeadlineHold();
  ~InterruptDeadlineHold();
  InterruptDeadlineHold(const InterruptDeadlineHold&) = delete;
  InterruptDeadlineHold& operator=(const InterruptDeadlineHold&) = delete;
};

// Keeps what `object` held until the process ends, unfreed: a run that ends on
// a signal would otherwise spend seconds in destructors (a Schedule of
// millions of ops and shared computes) before it exits. Reachable from a
// global, so leak checkers do not report it.
void keep_until_exit(std::shared_ptr<void> object);
template <typename T>
void abandon(T& object) {
  keep_until_exit(std::make_shared<T>(std::move(object)));
}

}  // namespace eppsim
