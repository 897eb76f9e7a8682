#include "base/rng.h"

#include <gtest/gtest.h>

#include <array>
#include <initializer_list>
#include <limits>
#include <stdexcept>

namespace eppsim {
namespace {

TEST(Rng, IsTheStandardMersenneTwister) {
  // The C++ standard fixes mt19937_64's 10000th output for the default seed 5489.
  Rng rng(5489);
  std::uint64_t x = 0;
  for (int i = 0; i < 10000; ++i) x = rng.next_u64();
  EXPECT_EQ(x, 9981545732273789042ULL);
}

TEST(Rng, SameSeedSameSequence) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, Uniform01IsInTheUnitInterval) {
  Rng rng(7);
  double sum = 0.0;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) {
    const double u = rng.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / kDraws, 0.5, 0.005);
}

TEST(RngBelow, StaysInRange) {
  Rng rng(1);
  for (const std::uint64_t n : std::initializer_list<std::uint64_t>{1, 2, 3, 7, 1000, (std::uint64_t{1} << 63) + 1,
                                                                    std::numeric_limits<std::uint64_t>::max()}) {
    for (int i = 0; i < 1000; ++i) ASSERT_LT(rng.below(n), n) << n;
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(rng.below(1), 0u);
}

TEST(RngBelow, ZeroIsRejected) {
  Rng rng(1);
  EXPECT_THROW(rng.below(0), std::invalid_argument);
}

TEST(RngBelow, IsDeterministic) {
  Rng a(2024), b(2024);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(a.below(12345), b.below(12345));
}

TEST(RngBelow, SmallRangeIsUniform) {
  Rng rng(99);
  constexpr int kDraws = 100000;
  std::array<int, 10> counts{};
  for (int i = 0; i < kDraws; ++i) ++counts[rng.below(10)];
  double chi2 = 0.0;
  for (int c : counts) chi2 += (c - kDraws / 10.0) * (c - kDraws / 10.0) / (kDraws / 10.0);
  EXPECT_LT(chi2, 27.88);  // chi-square, 9 degrees of freedom, p = 0.001
}

TEST(RngBelow, LargeRangeIsUnbiased) {
  // n is about 2/3 of 2^64: plain `next_u64() % n` would land in the lower half of
  // [0, n) two times in three; rejection sampling keeps it at one in two.
  const std::uint64_t n = 0xAAAAAAAAAAAAAAABULL;
  Rng rng(5);
  constexpr int kDraws = 20000;
  int lower_half = 0;
  for (int i = 0; i < kDraws; ++i) lower_half += rng.below(n) < n / 2 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(lower_half) / kDraws, 0.5, 0.02);
}

}  // namespace
}  // namespace eppsim
