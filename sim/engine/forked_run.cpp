#include "sim/engine/forked_run.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/interrupt.h"
#include "schedule/executor/executor_core.h"

namespace eppsim {
namespace {

// The first byte of the child's answer: what follows is a result or an error.
enum class Answer : char { Result = 'R', InputError = 'I', Deadlock = 'D', Mismatch = 'M', InvalidArgument = 'A', Other = 'E' };

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone; nothing to tell
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void child(int fd, const std::function<std::string()>& body) {
  std::string answer;
  try {
    answer = static_cast<char>(Answer::Result) + body();
  } catch (const InputError& e) {
    answer = static_cast<char>(Answer::InputError) + std::string(e.what());
  } catch (const ScheduleDeadlock& e) {
    answer = static_cast<char>(Answer::Deadlock) + std::string(e.what());
  } catch (const ScheduleMismatch& e) {
    answer = static_cast<char>(Answer::Mismatch) + std::string(e.what());
  } catch (const std::invalid_argument& e) {
    answer = static_cast<char>(Answer::InvalidArgument) + std::string(e.what());
  } catch (const std::exception& e) {
    answer = static_cast<char>(Answer::Other) + std::string(e.what());
  } catch (...) {
    answer = static_cast<char>(Answer::Other) + std::string("unknown exception");
  }
  write_all(fd, answer.data(), answer.size());
  ::close(fd);
  std::fflush(stderr);
  ::_exit(0);
}

}  // namespace

std::string run_forked(std::string_view what, const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(fmt::format("{}: pipe failed: {}", what, std::strerror(errno)));
  std::fflush(nullptr);  // the child must not inherit unwritten output
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(fmt::format("{}: fork failed: {}", what, std::strerror(errno)));
  }
  if (pid == 0) {
    // The child ends with its parent: a parent killed outright cannot end it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the parent died before the line above
    ::close(fds[0]);
    child(fds[1], body);
  }
  ::close(fds[1]);
  const auto reap = [pid] {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  };
  std::string answer;
  char buffer[1 << 16];
  for (;;) {
    // Waits in slices, so that SIGINT or SIGTERM (recorded by base/interrupt.h's
    // handlers, which restart reads) ends the child and the run within one.
    pollfd readable{fds[0], POLLIN, 0};
    const int ready = ::poll(&readable, 1, 100);
    if (interrupt_signal() != 0) {
      ::kill(pid, SIGKILL);
      ::close(fds[0]);
      reap();
      throw_if_interrupted();
    }
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  const int status = reap();
  // An answer counts only from a child that ended normally: one killed while
  // writing (out of memory, a signal) leaves a truncated answer behind.
  const bool ended_normally = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (answer.empty() || !ended_normally) {
    if (WIFSIGNALED(status)) {
      throw std::runtime_error(fmt::format("{}: the child process died of signal {} ({})", what, WTERMSIG(status),
                                           strsignal(WTERMSIG(status))));
    }
    throw std::runtime_error(fmt::format("{}: the child process exited with status {} without an answer", what,
                                         WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  std::string message = answer.substr(1);
  switch (static_cast<Answer>(answer.front())) {
    case Answer::Result: return message;
    case Answer::InputError: throw InputError(message);
    case Answer::Deadlock: throw ScheduleDeadlock(message);
    case Answer::Mismatch: throw ScheduleMismatch(message);
    case Answer::InvalidArgument: throw std::invalid_argument(message);
    case Answer::Other: break;
  }
  throw std::runtime_error(message);
}

}  // namespace eppsim
