#include "runtime/fault_signals.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

namespace eppsim::runtime {
namespace {

constexpr std::size_t kTextBytes = 1024;

// Two copies of the ops-in-flight text: the writer fills the one not
// published, then publishes it, so the handler never reads a half-written one
// unless two updates race it (then the text may be garbled, never out of bounds).
std::array<std::array<char, kTextBytes>, 2> g_in_flight{};
std::atomic<int> g_published{0};
std::array<char, 64> g_prefix{};  // "eppsim-run: rank R: error: died of signal "
std::atomic<int> g_termination{0};

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int kTerminationSignals[] = {SIGTERM, SIGINT, SIGHUP};

const char* signal_name(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    default: return "?";
  }
}

// Only async-signal-safe calls below: write(2), signal(2), raise(3).
void write_text(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t written = ::write(STDERR_FILENO, text, left);
    if (written <= 0) return;
    text += written;
    left -= static_cast<std::size_t>(written);
  }
}

void on_crash(int signal) {
  char number[12];
  int n = signal, i = sizeof(number) - 1;
  number[i] = '\0';
  do {
    number[--i] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0 && i > 0);
  write_text(g_prefix.data());
  write_text(number + i);
  write_text(" (");
  write_text(signal_name(signal));
  write_text(") while running: ");
  write_text(g_in_flight[static_cast<std::size_t>(g_published.load())].data());
  write_text("\n");
  std::signal(signal, SIG_DFL);
  std::raise(signal);  // delivered when the handler returns: the rank dies of it, as mpirun expects
}

void on_termination(int signal) { g_termination.store(signal); }

void install(int signal, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(signal, &action, nullptr);
}

}  // namespace

void install_fault_signals(int rank) {
  const auto prefix = fmt::format("eppsim-run: rank {}: error: died of signal ", rank);
  const std::size_t bytes = std::min(prefix.size(), g_prefix.size() - 1);
  std::memcpy(g_prefix.data(), prefix.data(), bytes);
  g_prefix[bytes] = '\0';
  set_ops_in_flight("nothing (between steps)");
  for (const int s : kCrashSignals) install(s, on_crash);
  for (const int s : kTerminationSignals) install(s, on_termination);
}

void set_ops_in_flight(std::string_view text) {
  const int next = 1 - g_published.load();
  auto& buffer = g_in_flight[static_cast<std::size_t>(next)];
  const std::size_t bytes = std::min(text.size(), buffer.size() - 1);
  std::memcpy(buffer.data(), text.data(), bytes);
  buffer[bytes] = '\0';
  g_published.store(next);
}

int termination_signal() { return g_termination.load(); }

void throw_if_terminated(std::string_view doing) {
  const int signal = g_termination.load();
  if (signal == 0) return;
  throw Terminated(signal, fmt::format("terminated by signal {} ({}; mpirun sends it to every rank when one dies or "
                                       "the job is cancelled) while {}",
                                       signal, signal_name(signal), doing));
}

}  // namespace eppsim::runtime
