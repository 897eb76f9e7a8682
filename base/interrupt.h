#pragma once
// Ending a long run cleanly on SIGINT (Ctrl-C) or SIGTERM: main() installs the
// handlers, which only record the signal; long loops (the engines and
// planners, through progress::ProgressLine::update) call throw_if_interrupted,
// so the run unwinds: its staging output directory is removed
// (sim/output_directory.h), the previous complete outputs stay, and main()
// exits with 128 + the signal's number.
#include <stdexcept>
#include <string>

namespace eppsim {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

// SIGINT and SIGTERM record the signal (the first one); a second SIGINT ends
// the process at once, as usual, for a run that does not reach a check.
void install_interrupt_handlers();
// The signal that arrived, or 0.
int interrupt_signal();
// Throws Interrupted when a signal arrived.
void throw_if_interrupted();

}  // namespace eppsim
