#include "base/rng.h"

#include <stdexcept>

namespace eppsim {

// Rejection sampling: of the 2^64 values of next_u64(), the lowest 2^64 mod n are
// rejected, so the rest are an exact multiple of n and `x % n` is unbiased.
std::uint64_t Rng::below(std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("Rng::below: n must be > 0");
  const std::uint64_t threshold = (0 - n) % n;  // (2^64 - n) mod n == 2^64 mod n
  for (;;) {
    const std::uint64_t x = next_u64();
    if (x >= threshold) return x % n;
  }
}

}  // namespace eppsim
