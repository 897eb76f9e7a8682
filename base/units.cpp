#include "base/units.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <span>
#include <system_error>

#include "base/errors.h"

namespace eppsim {
namespace {

struct UnitScale {
  std::string_view suffix;
  double scale;  // base units (bytes, seconds, bytes/s, FLOP/s) per one of this unit
};

constexpr double kKi = 1024.0;
constexpr double kMi = kKi * 1024.0;
constexpr double kGi = kMi * 1024.0;
constexpr double kTi = kGi * 1024.0;
constexpr double kPi = kTi * 1024.0;

// Decimal prefixes accept both "K" (as documented) and the SI "k".
constexpr std::array kByteUnits = {
    UnitScale{"B", 1.0},    UnitScale{"KB", 1e3},   UnitScale{"kB", 1e3},   UnitScale{"MB", 1e6},
    UnitScale{"GB", 1e9},   UnitScale{"TB", 1e12},  UnitScale{"PB", 1e15},  UnitScale{"KiB", kKi},
    UnitScale{"MiB", kMi},  UnitScale{"GiB", kGi},  UnitScale{"TiB", kTi},  UnitScale{"PiB", kPi},
};

constexpr std::array kSecondUnits = {
    UnitScale{"ns", 1e-9},
    UnitScale{"us", 1e-6},
    UnitScale{"\u00b5s", 1e-6},  // micro sign
    UnitScale{"\u03bcs", 1e-6},  // Greek small letter mu
    UnitScale{"ms", 1e-3},
    UnitScale{"s", 1.0},
};

constexpr std::array kBandwidthUnits = {
    // bytes per second
    UnitScale{"B/s", 1.0}, UnitScale{"KB/s", 1e3}, UnitScale{"kB/s", 1e3}, UnitScale{"MB/s", 1e6},
    UnitScale{"GB/s", 1e9}, UnitScale{"TB/s", 1e12}, UnitScale{"PB/s", 1e15}, UnitScale{"KiB/s", kKi},
    UnitScale{"MiB/s", kMi}, UnitScale{"GiB/s", kGi}, UnitScale{"TiB/s", kTi}, UnitScale{"PiB/s", kPi},
    // bits per second
    UnitScale{"bps", 1.0 / 8}, UnitScale{"Kbps", 1e3 / 8}, UnitScale{"kbps", 1e3 / 8},
    UnitScale{"Mbps", 1e6 / 8}, UnitScale{"Gbps", 1e9 / 8}, UnitScale{"Tbps", 1e12 / 8},
    UnitScale{"bit/s", 1.0 / 8}, UnitScale{"Kbit/s", 1e3 / 8}, UnitScale{"kbit/s", 1e3 / 8},
    UnitScale{"Mbit/s", 1e6 / 8}, UnitScale{"Gbit/s", 1e9 / 8}, UnitScale{"Tbit/s", 1e12 / 8},
};

constexpr std::array kFlopsUnits = {
    UnitScale{"FLOPS", 1.0},    UnitScale{"KFLOPS", 1e3},   UnitScale{"kFLOPS", 1e3},
    UnitScale{"MFLOPS", 1e6},   UnitScale{"GFLOPS", 1e9},   UnitScale{"TFLOPS", 1e12},
    UnitScale{"PFLOPS", 1e15},  UnitScale{"EFLOPS", 1e18},  UnitScale{"FLOP/s", 1.0},
    UnitScale{"KFLOP/s", 1e3},  UnitScale{"kFLOP/s", 1e3},  UnitScale{"MFLOP/s", 1e6},
    UnitScale{"GFLOP/s", 1e9},  UnitScale{"TFLOP/s", 1e12}, UnitScale{"PFLOP/s", 1e15},
    UnitScale{"EFLOP/s", 1e18},
};

// What one kind of quantity accepts, for parsing and for error messages.
struct QuantityKind {
  std::string_view what;      // "byte size"
  std::span<const UnitScale> units;
  bool bare_number_allowed;   // a number without a unit is in base units
  std::string_view accepted;  // human list of the accepted forms
};

constexpr QuantityKind kBytesKind{
    "byte size", kByteUnits, true,
    "a non-negative number and an optional unit: B, KB, MB, GB, TB, PB (powers of 1000), "
    "KiB, MiB, GiB, TiB, PiB (powers of 1024); a bare number means bytes "
    "(e.g. '80GiB', '1.5 GB', '4096')"};
constexpr QuantityKind kSecondsKind{
    "duration", kSecondUnits, false,
    "a non-negative number and a unit: ns, us (or \u00b5s), ms, s (e.g. '1.5us', '2 ms', '1e-6s')"};
constexpr QuantityKind kBandwidthKind{
    "bandwidth", kBandwidthUnits, false,
    "a non-negative number and a unit: B/s, KB/s, MB/s, GB/s, TB/s, PB/s, KiB/s, MiB/s, GiB/s, TiB/s, "
    "PiB/s (bytes), or bps, Kbps, Mbps, Gbps, Tbps, bit/s, Kbit/s, Mbit/s, Gbit/s, Tbit/s (bits) "
    "(e.g. '900GB/s', '400Gbps', '100 Mbit/s')"};
constexpr QuantityKind kFlopsKind{
    "FLOP rate", kFlopsUnits, false,
    "a non-negative number and a unit: FLOPS, KFLOPS, MFLOPS, GFLOPS, TFLOPS, PFLOPS, EFLOPS, or the same "
    "as FLOP/s, e.g. TFLOP/s (e.g. '989TFLOPS', '1.98 PFLOPS', '312e12FLOPS')"};

[[noreturn]] void fail(const QuantityKind& kind, std::string_view text, std::string_view reason) {
  throw InputError(fmt::format("invalid {} '{}': {}; expected {}", kind.what, text, reason, kind.accepted));
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The value of `text` in base units: finite and non-negative.
double parse_quantity(std::string_view text, const QuantityKind& kind) {
  const std::string_view s = trim(text);
  if (s.empty()) fail(kind, text, "empty string");
  if (s.front() == '-') fail(kind, text, "negative values are not allowed");
  // A number starts with a digit or '.'; this also rejects "nan", "inf" and a leading '+'.
  if (!(std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '.')) {
    fail(kind, text, "does not start with a number");
  }
  double number = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) fail(kind, text, "number out of range");
  if (ec != std::errc()) fail(kind, text, "does not start with a number");

  const std::string_view unit = trim(s.substr(static_cast<std::size_t>(end - s.data())));
  double scale = 0.0;
  if (unit.empty()) {
    if (!kind.bare_number_allowed) fail(kind, text, "missing unit");
    scale = 1.0;
  } else {
    for (const UnitScale& u : kind.units) {
      if (u.suffix == unit) {
        scale = u.scale;
        break;
      }
    }
    if (scale == 0.0) fail(kind, text, fmt::format("unknown unit '{}'", unit));
  }
  const double value = number * scale;
  if (!std::isfinite(value)) fail(kind, text, "value out of range");
  return value;
}

// A scaled human string with 3 significant digits, e.g. "80 GiB", "1.5 us".
// `units` rise in scale; the largest unit that keeps the number >= 1 is used,
// moving up one more when rounding would print 1000 or more.
std::string format_scaled(double value, std::span<const UnitScale> units) {
  if (value == 0.0 || !std::isfinite(value)) {
    for (const UnitScale& u : units) {
      if (u.scale == 1.0) return fmt::format("{} {}", value, u.suffix);
    }
  }
  const double magnitude = std::fabs(value);
  std::size_t i = 0;
  while (i + 1 < units.size() && magnitude >= units[i + 1].scale) ++i;
  // 999.5 and above prints as "1e+03" with 3 significant digits.
  if (magnitude / units[i].scale >= 999.5) {
    if (i + 1 < units.size()) {
      ++i;
    } else {
      return fmt::format("{:.0f} {}", value / units[i].scale, units[i].suffix);  // no exponent
    }
  }
  return fmt::format("{:.3g} {}", value / units[i].scale, units[i].suffix);
}

constexpr std::array kByteDisplay = {
    UnitScale{"B", 1.0}, UnitScale{"KiB", kKi}, UnitScale{"MiB", kMi},
    UnitScale{"GiB", kGi}, UnitScale{"TiB", kTi}, UnitScale{"PiB", kPi},
};
constexpr std::array kSecondDisplay = {
    UnitScale{"ns", 1e-9}, UnitScale{"us", 1e-6}, UnitScale{"ms", 1e-3}, UnitScale{"s", 1.0},
};
constexpr std::array kBandwidthDisplay = {
    UnitScale{"B/s", 1.0},   UnitScale{"KB/s", 1e3},  UnitScale{"MB/s", 1e6},
    UnitScale{"GB/s", 1e9},  UnitScale{"TB/s", 1e12}, UnitScale{"PB/s", 1e15},
};
constexpr std::array kFlopsDisplay = {
    UnitScale{"FLOP/s", 1.0},    UnitScale{"KFLOP/s", 1e3},  UnitScale{"MFLOP/s", 1e6},
    UnitScale{"GFLOP/s", 1e9},   UnitScale{"TFLOP/s", 1e12}, UnitScale{"PFLOP/s", 1e15},
    UnitScale{"EFLOP/s", 1e18},
};

}  // namespace

Bytes parse_bytes(std::string_view text) {
  const double value = std::round(parse_quantity(text, kBytesKind));
  // 2^64 is exactly representable; every double below it fits in uint64.
  if (value >= 18446744073709551616.0) fail(kBytesKind, text, "more than 2^64 - 1 bytes");
  return Bytes(static_cast<std::uint64_t>(value));
}

Seconds parse_seconds(std::string_view text) { return Seconds(parse_quantity(text, kSecondsKind)); }

BytesPerSecond parse_bandwidth(std::string_view text) {
  return BytesPerSecond(parse_quantity(text, kBandwidthKind));
}

FlopsPerSecond parse_flops(std::string_view text) { return FlopsPerSecond(parse_quantity(text, kFlopsKind)); }

std::string format_bytes(Bytes b) { return format_scaled(static_cast<double>(b.count), kByteDisplay); }
std::string format_seconds(Seconds s) { return format_scaled(s.value, kSecondDisplay); }
std::string format_bandwidth(BytesPerSecond b) { return format_scaled(b.value, kBandwidthDisplay); }
std::string format_flops(FlopsPerSecond f) { return format_scaled(f.value, kFlopsDisplay); }

}  // namespace eppsim
