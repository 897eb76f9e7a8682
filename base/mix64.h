#pragma once
// A deterministic 64-bit mix (splitmix64's finaliser): ECMP hashing in the
// topologies, and hashes of values to find equal ones.
#include <cstdint>

namespace eppsim {

constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace eppsim
