// The contiguous partitions of FlexSP's planner (sim/plan/flexsp_partition.h):
// their optima on hand-worked lists, and the same answers as the exhaustive
// dynamic programmes they replaced, on random lists with many ties.
#include "sim/plan/flexsp_partition.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

TEST(FlexSpSplit, ConsecutiveMinimisesTheLargestChunk) {
  const std::vector<std::uint64_t> sizes{9, 5, 4, 3, 3, 2, 1, 1};
  EXPECT_EQ(split_consecutive(sizes, 1), (std::vector<std::uint32_t>{8}));
  const auto two = split_consecutive(sizes, 2);  // 9+5 = 14 | 4+3+3+2+1+1 = 14
  EXPECT_EQ(two, (std::vector<std::uint32_t>{2, 6}));
  const auto three = split_consecutive(sizes, 3);  // 9 | 5+4 | 3+3+2+1+1 = 10
  EXPECT_EQ(three, (std::vector<std::uint32_t>{1, 2, 5}));
  EXPECT_EQ(split_consecutive(sizes, 20).size(), 8u);
}

// The quadratic DP split_consecutive replaced: every cut tried, the first of equal ones kept.
std::vector<std::uint32_t> split_consecutive_by_every_cut(const std::vector<std::uint64_t>& sizes, std::uint32_t parts) {
  const std::size_t n = sizes.size();
  parts = std::clamp<std::uint32_t>(parts, 1, static_cast<std::uint32_t>(n));
  std::vector<std::uint64_t> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + sizes[i];
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::vector<std::uint64_t>> best(parts + 1, std::vector<std::uint64_t>(n + 1, kMax));
  std::vector<std::vector<std::uint32_t>> cut(parts + 1, std::vector<std::uint32_t>(n + 1, 0));
  best[0][0] = 0;
  for (std::uint32_t j = 1; j <= parts; ++j) {
    for (std::size_t i = j; i <= n; ++i) {
      for (std::size_t c = j - 1; c < i; ++c) {
        if (best[j - 1][c] == kMax) continue;
        const std::uint64_t v = std::max(best[j - 1][c], prefix[i] - prefix[c]);
        if (v < best[j][i]) {
          best[j][i] = v;
          cut[j][i] = static_cast<std::uint32_t>(c);
        }
      }
    }
  }
  std::vector<std::uint32_t> out(parts);
  std::size_t i = n;
  for (std::uint32_t j = parts; j >= 1; --j) {
    out[j - 1] = static_cast<std::uint32_t>(i - cut[j][i]);
    i = cut[j][i];
  }
  return out;
}

TEST(FlexSpSplit, SameCutsAsTryingEveryCut) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + rng() % 40;
    // Small values (ties, zeros) and descending batches as the Sequence Blaster sorts them.
    const std::uint64_t span = trial % 3 == 0 ? 3 : 1000;
    std::vector<std::uint64_t> sizes(n);
    for (auto& s : sizes) s = rng() % span;
    if (trial % 2 == 0) std::sort(sizes.rbegin(), sizes.rend());
    for (std::uint32_t parts = 1; parts <= n + 1; ++parts) {
      EXPECT_EQ(split_consecutive(sizes, parts), split_consecutive_by_every_cut(sizes, parts))
          << "trial " << trial << " parts " << parts;
    }
  }
}

// The quadratic DP bucket_lengths replaced: every cut tried, the first of equal ones kept.
std::vector<std::uint32_t> bucket_lengths_by_every_cut(const std::vector<std::uint64_t>& lengths, std::uint32_t max_buckets) {
  const std::size_t n = lengths.size();
  const std::size_t b = std::clamp<std::size_t>(max_buckets, 1, n);
  std::vector<std::uint64_t> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + lengths[i];
  auto pad = [&](std::size_t c, std::size_t i) { return (i - c) * lengths[c] - (prefix[i] - prefix[c]); };
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::vector<std::uint64_t>> best(b + 1, std::vector<std::uint64_t>(n + 1, kMax));
  std::vector<std::vector<std::uint32_t>> cut(b + 1, std::vector<std::uint32_t>(n + 1, 0));
  best[0][0] = 0;
  for (std::size_t j = 1; j <= b; ++j) {
    for (std::size_t i = j; i <= n; ++i) {
      for (std::size_t c = j - 1; c < i; ++c) {
        if (best[j - 1][c] == kMax) continue;
        const std::uint64_t v = best[j - 1][c] + pad(c, i);
        if (v < best[j][i]) {
          best[j][i] = v;
          cut[j][i] = static_cast<std::uint32_t>(c);
        }
      }
    }
  }
  std::size_t use = b;
  for (std::size_t j = 1; j <= b; ++j) {
    if (best[j][n] == best[b][n]) {
      use = j;
      break;
    }
  }
  std::vector<std::uint32_t> out(use);
  std::size_t i = n;
  for (std::size_t j = use; j >= 1; --j) {
    out[j - 1] = static_cast<std::uint32_t>(i - cut[j][i]);
    i = cut[j][i];
  }
  return out;
}

TEST(FlexSpBuckets, SameBucketsAsTryingEveryCut) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + rng() % 60;
    const std::uint64_t span = trial % 3 == 0 ? 4 : 10000;  // many ties, or few
    std::vector<std::uint64_t> lengths(n);
    for (auto& s : lengths) s = 1 + rng() % span;
    std::sort(lengths.rbegin(), lengths.rend());
    for (std::uint32_t buckets = 1; buckets <= n + 1; ++buckets) {
      EXPECT_EQ(bucket_lengths(lengths, buckets), bucket_lengths_by_every_cut(lengths, buckets))
          << "trial " << trial << " buckets " << buckets;
    }
  }
}

TEST(FlexSpBuckets, MinimisePadding) {
  const std::vector<std::uint64_t> lengths{100, 99, 98, 10, 9, 8, 1};
  EXPECT_EQ(bucket_lengths(lengths, 3), (std::vector<std::uint32_t>{3, 3, 1}));
  EXPECT_EQ(bucket_lengths(lengths, 1), (std::vector<std::uint32_t>{7}));
  // Equal lengths need one bucket even when more are allowed.
  const std::vector<std::uint64_t> same(5, 7);
  EXPECT_EQ(bucket_lengths(same, 4), (std::vector<std::uint32_t>{5}));
}

}  // namespace
}  // namespace eppsim
