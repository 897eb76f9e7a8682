#include "base/interrupt.h"

#include <atomic>
#include <csignal>
#include <thread>
#include <vector>

#include <semaphore.h>

#include <fmt/format.h>

namespace eppsim {
namespace {

std::atomic<int> g_signal{0};
// Posted by the handler (sem_post is async-signal-safe) when a deadline thread waits.
sem_t g_deadline_semaphore;
std::atomic<bool> g_deadline_started{false};
std::atomic<int> g_deadline_holds{0};

void on_signal(int signal) {
  int none = 0;
  if (!g_signal.compare_exchange_strong(none, signal)) {
    std::signal(signal, SIG_DFL);  // the second one: no more waiting for a check
    std::raise(signal);
    return;
  }
  if (g_deadline_started.load()) sem_post(&g_deadline_semaphore);
}

}  // namespace

Interrupted::Interrupted(int signal, std::string outputs)
    : std::runtime_error(fmt::format("interrupted by {}", signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM"
                                                                                                         : "a signal")),
      signal_(signal),
      outputs_(std::move(outputs)) {}

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

void start_interrupt_deadline(std::chrono::milliseconds grace, void (*on_deadline)(int signal)) {
  if (g_deadline_started.exchange(true)) return;
  sem_init(&g_deadline_semaphore, 0, 0);
  std::thread([grace, on_deadline] {
    while (sem_wait(&g_deadline_semaphore) != 0) {
    }
    std::this_thread::sleep_for(grace);
    while (g_deadline_holds.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    on_deadline(interrupt_signal());
  }).detach();
  // A signal recorded before the thread's semaphore was ready.
  if (interrupt_signal() != 0) sem_post(&g_deadline_semaphore);
}

InterruptDeadlineHold::InterruptDeadlineHold() { ++g_deadline_holds; }
InterruptDeadlineHold::~InterruptDeadlineHold() { --g_deadline_holds; }

void keep_until_exit(std::shared_ptr<void> object) {
  static auto* const kept = new std::vector<std::shared_ptr<void>>();  // never destroyed
  kept->push_back(std::move(object));
}

void throw_if_interrupted() {
  if (const int s = interrupt_signal(); s != 0) throw Interrupted(s);
}

}  // namespace eppsim
