#pragma once
// For the tests of code that waits on a child process (base/subprocess.h,
// sim/engine/forked_run.h): a runner process that waits the way the code
// does, a child that reports its pid through a file, and how to tell that
// the child stopped.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/interrupt.h"

namespace eppsim::testing {

// A fresh path for a child's pid, in the test's temporary folder.
inline std::string fresh_pid_file(const std::string& name) {
  const std::string file = ::testing::TempDir() + name + ".pid";
  std::remove(file.c_str());
  return file;
}

// The pid a child wrote to `file`, waiting up to 5 s for it; 0 if none came.
inline pid_t wait_for_pid_file(const std::string& file) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(file);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

// Gone, or a zombie no one has reaped yet: no longer running.
inline bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string fields[3];
  return stat >> fields[0] >> fields[1] >> fields[2] && fields[2] != "Z" && fields[2] != "X";
}

inline bool stops_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (running(pid) && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return !running(pid);
}

// A process of its own (the interrupt it records is for good) that installs
// base/interrupt.h's handlers and calls `wait`: it exits 3 when `wait` throws
// Interrupted for SIGTERM, 4 for another signal, 5 when `wait` returns.
inline pid_t fork_interruptible_runner(const std::function<void()>& wait) {
  const pid_t runner = ::fork();
  if (runner != 0) return runner;
  install_interrupt_handlers();
  try {
    wait();
  } catch (const Interrupted&) {
    ::_exit(interrupt_signal() == SIGTERM ? 3 : 4);
  }
  ::_exit(5);
}

// How a runner ended after a SIGTERM: its exit status (-1: not an exit) and how long it took.
struct RunnerEnd {
  int exit_status = -1;
  std::chrono::steady_clock::duration took{};
};

inline RunnerEnd sigterm_and_reap(pid_t runner) {
  const auto start = std::chrono::steady_clock::now();
  ::kill(runner, SIGTERM);
  int status = 0;
  ::waitpid(runner, &status, 0);
  return RunnerEnd{WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::chrono::steady_clock::now() - start};
}

// A runner (fork_interruptible_runner) whose `wait` starts a child that
// writes its pid to the file it is given, sent SIGTERM once that child runs:
// how the runner ended, and the child's pid (0 when no child ran).
struct SigtermedRunner {
  RunnerEnd end;
  pid_t child = 0;
};

inline SigtermedRunner sigterm_once_child_runs(const std::string& name,
                                               const std::function<void(const std::string& pid_file)>& wait) {
  const std::string file = fresh_pid_file(name);
  const pid_t runner = fork_interruptible_runner([&] { wait(file); });
  if (runner < 0) return {};
  const pid_t child = wait_for_pid_file(file);
  return SigtermedRunner{sigterm_and_reap(runner), child};
}

}  // namespace eppsim::testing
