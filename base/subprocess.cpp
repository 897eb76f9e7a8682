#include "base/subprocess.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "base/interrupt.h"

extern char** environ;

namespace eppsim {
namespace {

// The environment as KEY=VALUE strings: ours with `extra` added or replaced.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : extra) replaced = replaced || k == key;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string ProcessResult::describe() const {
  if (timed_out) return "killed after its time limit";
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  return fmt::format("exit status {}", exit_status);
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) {
    if (!line.empty()) line += ' ';
    const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    if (plain) {
      line += a;
      continue;
    }
    line += '\'';
    for (const char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

namespace {

// Starts `request` in its own process group (so that a time limit kills what
// it started too: mpirun's ranks), stdout onto stderr.
pid_t spawn(const ProcessRequest& request) {
  if (request.argv.empty()) throw std::invalid_argument("start_process: empty argv");
  std::vector<std::string> args = request.argv;
  std::vector<std::string> env = child_environment(request.environment);
  auto argv = pointers(args);
  auto envp = pointers(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0)
    throw std::runtime_error(fmt::format("cannot start {}: {}", request.argv[0], std::strerror(error)));
  return pid;
}

}  // namespace

RunningProcess::RunningProcess(const ProcessRequest& request)
    : name_(request.argv.empty() ? std::string() : request.argv.front()),
      pid_(spawn(request)),
      deadline_(std::chrono::steady_clock::now() + request.time_limit),
      limited_(request.time_limit.count() > 0) {}

RunningProcess::RunningProcess(RunningProcess&& other) noexcept
    : name_(std::move(other.name_)),
      pid_(std::exchange(other.pid_, 0)),
      deadline_(other.deadline_),
      limited_(other.limited_),
      timed_out_(other.timed_out_) {}

RunningProcess::~RunningProcess() {
  if (pid_ == 0) return;
  kill(-pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::optional<ProcessResult> RunningProcess::poll() {
  if (pid_ == 0) throw std::logic_error("RunningProcess::poll: already reaped");
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done < 0 && errno != EINTR) throw std::runtime_error(fmt::format("waiting for {}: {}", name_, std::strerror(errno)));
  if (done != pid_) {
    if (limited_ && !timed_out_ && std::chrono::steady_clock::now() >= deadline_) {
      timed_out_ = true;
      kill(-pid_, SIGKILL);
    }
    return std::nullopt;
  }
  pid_ = 0;
  ProcessResult result;
  result.timed_out = timed_out_;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

ProcessResult run_process(const ProcessRequest& request) {
  RunningProcess process(request);
  for (auto pause = std::chrono::milliseconds(1);;) {
    if (auto result = process.poll()) return *result;
    throw_if_interrupted();  // the destructor kills the child's process group
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace eppsim
