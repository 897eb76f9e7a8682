#pragma once
// Running other programs, for the commands that drive other tools (`eppsim
// testbed` launches `eppsim-bench` and `mpirun eppsim-run`; `eppsim sweep` runs
// its points as processes of their own).
// The child inherits stdin and stderr; its stdout goes to our stderr, since
// eppsim writes results to files and logs to stderr.
#include <chrono>
#include <optional>
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
// be started (not found, not executable), naming it; Interrupted (base/interrupt.h)
// within 50 ms of a SIGINT or SIGTERM the handlers recorded, the child's process
// group killed.
ProcessResult run_process(const ProcessRequest& request);

// A started program, for callers that run several at once (`eppsim sweep`).
// Its time limit is enforced by poll(); the destructor of one still running
// kills its process group and reaps it.
class RunningProcess {
 public:
  // Starts the program (std::runtime_error as run_process).
  explicit RunningProcess(const ProcessRequest& request);
  ~RunningProcess();
  RunningProcess(RunningProcess&& other) noexcept;
  RunningProcess& operator=(RunningProcess&&) = delete;
  RunningProcess(const RunningProcess&) = delete;
  RunningProcess& operator=(const RunningProcess&) = delete;

  // Its result once it has ended, else nullopt; never blocks.
  std::optional<ProcessResult> poll();

 private:
  std::string name_;
  int pid_ = 0;  // 0 once reaped
  std::chrono::steady_clock::time_point deadline_;
  bool limited_ = false;
  bool timed_out_ = false;
};

// The command line as a shell would show it, for logs and messages.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace eppsim
