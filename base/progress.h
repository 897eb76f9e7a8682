#pragma once
// A progress line on stderr for long runs: the simulated time, ops done and
// rate of an engine, or the step a planner is at.
//
// Quiet by default. main() turns it on for a terminal (enable_for_terminal:
// stderr is a TTY); then a ProgressLine draws itself only once its task has run
// for longer than quiet_for_s (2 s), redraws at most every 0.1 s in place
// ("\r" + erase line) and erases itself when the task ends, so short runs and
// redirected output never see it. Updates are cheap: one counter increment; the
// clock is read every `check_every` updates and the text formatted only when a
// redraw is due. Single-threaded, like the engines that use it. Every
// `check_every` updates, drawn or not, it also checks for an interrupt
// (base/interrupt.h), so every loop that reports progress can be stopped.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include "base/interrupt.h"

namespace eppsim::progress {

// Whether new ProgressLines draw (default false). enable_for_terminal() sets it
// to whether stderr is a terminal.
void set_enabled(bool enabled);
bool enabled();
void enable_for_terminal();

struct Options {
  double quiet_for_s = 2.0;       // draw nothing before the task has run this long
  double redraw_every_s = 0.1;
  std::uint32_t check_every = 1024;  // updates between clock reads
  std::FILE* out = stderr;
};

class ProgressLine {
 public:
  // `label` starts the line: "simulating", "planning flexsp".
  explicit ProgressLine(std::string label, Options options = {});
  ~ProgressLine();  // erases the line if it was drawn
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `describe()` returns the text after the label; it is called only when a
  // redraw is due.
  template <typename Describe>
  void update(Describe&& describe) {
    if (--until_check_ != 0) return;  // a decrement per update, not a division: engines call this per op
    until_check_ = options_.check_every;
    throw_if_interrupted();
    if (active_ && due()) draw(std::forward<Describe>(describe)());
  }

  double elapsed_s() const;
  bool drawn() const { return drawn_; }

 private:
  bool due();
  void draw(const std::string& text);

  std::string label_;
  Options options_;
  bool active_;
  bool drawn_ = false;
  std::uint32_t until_check_ = 0;  // updates left before the next check; set to check_every
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace eppsim::progress
