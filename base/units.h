#pragma once
// Strong types for physical quantities, parsed from human unit strings.
//
//   Bytes           "80GiB", "1.5GB", "512MiB", "4096B", "4096"
//   Seconds         "1.5us", "2ms", "3s", "500ns", "1e-6s"
//   BytesPerSecond  "900GB/s", "50GiB/s", "400Gbps" (bits), "1.8TB/s", "100Mbit/s"
//   FlopsPerSecond  "989TFLOPS", "1.98PFLOPS", "312e12FLOPS"
//
// Decimal prefixes (K, M, G, T, P) are powers of 1000, binary prefixes (Ki, Mi,
// Gi, Ti, Pi) powers of 1024. "b"/"bit" means bits, "B" bytes. Parsing throws
// InputError naming the string and the accepted forms; negative, NaN and
// infinite values are rejected.
//
// Details: whitespace may surround the number and separate it from the unit
// ("80 GiB"); "k" is accepted for "K"; "µs" for "us"; FLOP rates also as
// "TFLOP/s" and bandwidth in bits also as "Gbit/s". Only Bytes take a bare
// number (bytes); the others require a unit. Bytes round to the nearest whole
// byte and must fit in 64 bits.
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace eppsim {

struct Bytes {
  std::uint64_t count = 0;
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::uint64_t n) : count(n) {}
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes(count + o.count); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(count - o.count); }
  constexpr Bytes& operator+=(Bytes o) { count += o.count; return *this; }
  constexpr Bytes operator*(std::uint64_t k) const { return Bytes(count * k); }
};

struct Seconds {
  double value = 0.0;
  constexpr Seconds() = default;
  constexpr explicit Seconds(double s) : value(s) {}
  constexpr auto operator<=>(const Seconds&) const = default;
  constexpr Seconds operator+(Seconds o) const { return Seconds(value + o.value); }
  constexpr Seconds operator-(Seconds o) const { return Seconds(value - o.value); }
  constexpr Seconds& operator+=(Seconds o) { value += o.value; return *this; }
  constexpr Seconds operator*(double k) const { return Seconds(value * k); }
};

struct BytesPerSecond {
  double value = 0.0;
  constexpr BytesPerSecond() = default;
  constexpr explicit BytesPerSecond(double bps) : value(bps) {}
  constexpr auto operator<=>(const BytesPerSecond&) const = default;
};

struct FlopsPerSecond {
  double value = 0.0;
  constexpr FlopsPerSecond() = default;
  constexpr explicit FlopsPerSecond(double f) : value(f) {}
  constexpr auto operator<=>(const FlopsPerSecond&) const = default;
};

// Time to move `size` at `rate`.
constexpr Seconds transfer_time(Bytes size, BytesPerSecond rate) {
  return Seconds(static_cast<double>(size.count) / rate.value);
}
// Time to execute `flops` at `rate`.
constexpr Seconds compute_time(double flops, FlopsPerSecond rate) { return Seconds(flops / rate.value); }

Bytes parse_bytes(std::string_view text);
Seconds parse_seconds(std::string_view text);
BytesPerSecond parse_bandwidth(std::string_view text);
FlopsPerSecond parse_flops(std::string_view text);

// Human forms for summaries: "80 GiB", "1.5 us", "900 GB/s", "989 TFLOP/s".
std::string format_bytes(Bytes b);
std::string format_seconds(Seconds s);
std::string format_bandwidth(BytesPerSecond b);
std::string format_flops(FlopsPerSecond f);

}  // namespace eppsim
