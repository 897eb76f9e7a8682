#include "base/log.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <vector>

#include "base/errors.h"

namespace eppsim::logging {
namespace {

struct Rule {
  std::string category;
  Level level;
};

struct State {
  Level default_level = Level::Info;
  std::vector<Rule> rules;
  // The most verbose threshold of any rule or the default: a message above it
  // is dropped without looking at the rules.
  std::atomic<int> most_verbose{static_cast<int>(Level::Info)};
  std::mutex write_mutex;
  Sink sink;
};

State& state() {
  static State s;
  return s;
}

// "plan" matches "plan" and "plan.flexsp", not "planner".
bool covers(std::string_view rule, std::string_view category) {
  return category.starts_with(rule) && (category.size() == rule.size() || category[rule.size()] == '.');
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

}  // namespace

Level parse_level(std::string_view name) {
  if (name == "error") return Level::Error;
  if (name == "warn") return Level::Warn;
  if (name == "info") return Level::Info;
  if (name == "debug") return Level::Debug;
  throw InputError(fmt::format("unknown log level '{}' (levels: error, warn, info, debug)", name));
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::Error: return "error";
    case Level::Warn: return "warn";
    case Level::Info: return "info";
    case Level::Debug: return "debug";
  }
  return "info";
}

void configure(std::string_view spec) {
  Level default_level = Level::Info;
  std::vector<Rule> rules;
  std::size_t begin = 0;
  while (begin <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', begin), spec.size());
    const std::string_view entry = trim(spec.substr(begin, comma - begin));
    begin = comma + 1;
    if (entry.empty()) {
      if (trim(spec).empty()) break;
      throw InputError(fmt::format("--log '{}': empty entry (expected CATEGORY:LEVEL or LEVEL)", spec));
    }
    const std::size_t colon = entry.rfind(':');
    if (colon == std::string_view::npos) {
      try {
        default_level = parse_level(entry);
      } catch (const InputError& e) {
        throw InputError(fmt::format("--log '{}': {}", spec, e.what()));
      }
      continue;
    }
    const std::string_view category = trim(entry.substr(0, colon));
    if (category.empty()) throw InputError(fmt::format("--log '{}': '{}' names no category", spec, entry));
    try {
      const Level level = parse_level(trim(entry.substr(colon + 1)));
      // A later rule for the same category replaces the earlier one.
      std::erase_if(rules, [&](const Rule& r) { return r.category == category; });
      rules.push_back(Rule{std::string(category), level});
    } catch (const InputError& e) {
      throw InputError(fmt::format("--log '{}': {}", spec, e.what()));
    }
  }
  State& s = state();
  int most_verbose = static_cast<int>(default_level);
  for (const auto& r : rules) most_verbose = std::max(most_verbose, static_cast<int>(r.level));
  s.default_level = default_level;
  s.rules = std::move(rules);
  s.most_verbose.store(most_verbose, std::memory_order_relaxed);
}

bool enabled(Level level, std::string_view category) {
  const State& s = state();
  if (static_cast<int>(level) > s.most_verbose.load(std::memory_order_relaxed)) return false;
  Level threshold = s.default_level;
  std::size_t matched = 0;
  bool any = false;
  for (const auto& r : s.rules) {
    if (covers(r.category, category) && (!any || r.category.size() > matched)) {
      threshold = r.level;
      matched = r.category.size();
      any = true;
    }
  }
  return level <= threshold;
}

Sink set_sink(Sink sink) {
  State& s = state();
  const std::lock_guard lock(s.write_mutex);
  std::swap(s.sink, sink);
  return sink;
}

void write(Level level, std::string_view category, std::string_view message) {
  if (!enabled(level, category)) return;
  const std::string line = fmt::format("[{} {}] {}\n", level_name(level), category, message);
  State& s = state();
  const std::lock_guard lock(s.write_mutex);
  if (s.sink) {
    s.sink(line);
  } else {
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

}  // namespace eppsim::logging
