#pragma once
// A small logger on stderr with levels and dotted categories.
//
// Categories name where a message comes from: "cli", "plan.flexsp",
// "engine.analytic". configure("plan.flexsp:debug,engine:info") sets the
// threshold of each category; a rule applies to its category and every
// sub-category ("plan" covers "plan.flexsp" but not "planner"), the longest
// matching rule wins, and a bare level ("debug") sets the default for all
// (info unless configured: what a normal run prints).
//
// A message below its category's threshold costs one comparison and is never
// formatted:
//   logging::debug("plan.flexsp", "micro-batch {}: MILP {}", j, status);
// Lines read "[LEVEL CATEGORY] message". Configure before starting threads;
// logging itself is thread-safe (one line at a time).
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace eppsim::logging {

enum class Level { Error = 0, Warn = 1, Info = 2, Debug = 3 };

// "error", "warn", "info" or "debug"; InputError for anything else.
Level parse_level(std::string_view name);
std::string_view level_name(Level level);

// Replaces every rule: comma-separated "CATEGORY:LEVEL" or "LEVEL" (the
// default). An empty spec restores the default (info for all). InputError
// naming the spec and the rule for a bad entry (empty category, unknown level).
void configure(std::string_view spec);

// Whether a message of `level` in `category` is written.
bool enabled(Level level, std::string_view category);

// Where finished lines go (default: stderr). Returns the previous sink; for tests.
using Sink = std::function<void(std::string_view line)>;
Sink set_sink(Sink sink);

// Writes one line (newline added) if enabled.
void write(Level level, std::string_view category, std::string_view message);

template <typename... Args>
void message(Level level, std::string_view category, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level, category)) write(level, category, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void error(std::string_view category, fmt::format_string<Args...> format, Args&&... args) {
  message(Level::Error, category, format, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(std::string_view category, fmt::format_string<Args...> format, Args&&... args) {
  message(Level::Warn, category, format, std::forward<Args>(args)...);
}
template <typename... Args>
void info(std::string_view category, fmt::format_string<Args...> format, Args&&... args) {
  message(Level::Info, category, format, std::forward<Args>(args)...);
}
template <typename... Args>
void debug(std::string_view category, fmt::format_string<Args...> format, Args&&... args) {
  message(Level::Debug, category, format, std::forward<Args>(args)...);
}

}  // namespace eppsim::logging
