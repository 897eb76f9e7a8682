#pragma once
// Running another program and waiting for it, for the commands that drive
// other tools (`eppsim testbed` launches `eppsim-bench` and `mpirun eppsim-run`).
// The child inherits stdin and stderr; its stdout goes to our stderr, since
// eppsim writes results to files and logs to stderr.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace eppsim {

struct ProcessRequest {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH unless it holds a '/'
  // Added to (or replacing in) the inherited environment.
  std::vector<std::pair<std::string, std::string>> environment;
  // The child (and its process group) is killed past this; zero: no limit.
  std::chrono::seconds time_limit{0};
};

struct ProcessResult {
  int exit_status = 0;   // when it exited
  int signal = 0;        // when a signal ended it (SIGKILL after the time limit)
  bool timed_out = false;
  bool succeeded() const { return signal == 0 && !timed_out && exit_status == 0; }
  // "exit status 2", "killed by signal 9", "killed after the 600 s limit".
  std::string describe() const;
};

// Starts the program and waits for it. Throws std::runtime_error when it cannot
// be started (not found, not executable), naming it.
ProcessResult run_process(const ProcessRequest& request);

// The command line as a shell would show it, for logs and messages.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace eppsim
