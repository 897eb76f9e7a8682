#include "base/interrupt.h"

#include <atomic>
#include <csignal>

#include <fmt/format.h>

namespace eppsim {
namespace {

std::atomic<int> g_signal{0};

void on_signal(int signal) {
  int none = 0;
  if (!g_signal.compare_exchange_strong(none, signal)) {
    std::signal(signal, SIG_DFL);  // the second one: no more waiting for a check
    std::raise(signal);
  }
}

}  // namespace

Interrupted::Interrupted(int signal)
    : std::runtime_error(fmt::format("interrupted by {}", signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM"
                                                                                                         : "a signal")),
      signal_(signal) {}

void install_interrupt_handlers() {
  for (const int s : {SIGINT, SIGTERM}) {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(s, &action, nullptr);
  }
}

int interrupt_signal() { return g_signal.load(std::memory_order_relaxed); }

void throw_if_interrupted() {
  if (const int s = interrupt_signal(); s != 0) throw Interrupted(s);
}

}  // namespace eppsim
