#pragma once
// A simulated time in seconds as the trace's signed 64-bit nanoseconds.
#include <cstdint>
#include <string>

#include "base/input_limits.h"

namespace eppsim {

// Rounded to the nearest nanosecond, halves away from zero (std::llround's
// rounding, without its library call: an executor converts two times an op).
// A time that cannot be represented (past about 292 years, infinite or NaN:
// some input's duration, size or rate is out of all proportion) is an
// InputError naming what(), never a wrapped, negative time.
// The InputError for a time to_ns cannot represent.
[[noreturn]] void throw_unrepresentable_time(const std::string& what, double seconds);

// Out of line and cold, so that to_ns itself inlines into its callers.
template <typename What>
[[noreturn, gnu::noinline, gnu::cold]] void throw_unrepresentable_time_of(const What& what, double seconds) {
  throw_unrepresentable_time(what(), seconds);
}

template <typename What>
std::int64_t to_ns(double seconds, const What& what) {
  if (!(seconds >= 0.0 && seconds <= limits::kMaxSimulatedSeconds)) [[unlikely]] {
    throw_unrepresentable_time_of(what, seconds);
  }
  // ns lies in [0, 2^63). Below 2^53 the fraction truncation leaves is exact
  // (Sterbenz); from 2^53 on every double is a whole number.
  const double ns = seconds * 1e9;
  auto whole = static_cast<std::int64_t>(ns);
  if (ns - static_cast<double>(whole) >= 0.5) ++whole;
  return whole;
}

}  // namespace eppsim
