#include "base/progress.h"

#include <unistd.h>

#include <atomic>

#include <fmt/format.h>

namespace eppsim::progress {
namespace {

std::atomic<bool> g_enabled{false};

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

void set_enabled(bool enabled) { g_enabled.store(enabled); }
bool enabled() { return g_enabled.load(); }
void enable_for_terminal() { set_enabled(::isatty(STDERR_FILENO) == 1); }

ProgressLine::ProgressLine(std::string label, Options options)
    : label_(std::move(label)),
      options_(options),
      active_(enabled() && options_.out != nullptr),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  if (options_.check_every == 0) options_.check_every = 1;
  until_check_ = options_.check_every;
}

ProgressLine::~ProgressLine() {
  if (drawn_) {
    std::fputs("\r\033[K", options_.out);
    std::fflush(options_.out);
  }
}

double ProgressLine::elapsed_s() const { return seconds_between(start_, std::chrono::steady_clock::now()); }

bool ProgressLine::due() {
  const auto now = std::chrono::steady_clock::now();
  if (seconds_between(start_, now) < options_.quiet_for_s) return false;
  if (drawn_ && seconds_between(last_draw_, now) < options_.redraw_every_s) return false;
  last_draw_ = now;
  return true;
}

void ProgressLine::draw(const std::string& text) {
  fmt::print(options_.out, "\r\033[K{}: {}", label_, text);
  std::fflush(options_.out);
  drawn_ = true;
}

}  // namespace eppsim::progress
