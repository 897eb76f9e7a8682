#pragma once
// The one source of randomness: seeded, and portable across standard libraries
// (std distributions are implementation-defined; these conversions are not).
#include <cstdint>
#include <random>

namespace eppsim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  std::uint64_t next_u64() { return engine_(); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); n > 0.
  std::uint64_t below(std::uint64_t n);

 private:
  std::mt19937_64 engine_;
};

}  // namespace eppsim
