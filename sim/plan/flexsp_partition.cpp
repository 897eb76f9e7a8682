#include "sim/plan/flexsp_partition.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

#include <boost/iterator/counting_iterator.hpp>

namespace eppsim {

std::vector<std::uint32_t> split_consecutive(std::span<const std::uint64_t> sizes, std::uint32_t parts) {
  const std::size_t n = sizes.size();
  if (n == 0) return {};
  parts = std::clamp<std::uint32_t>(parts, 1, static_cast<std::uint32_t>(n));
  std::vector<std::uint64_t> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + sizes[i];
  // best[i] (row j): the smallest largest sum cutting the first i items into j
  // chunks; cut[j][i]: where the last of them starts, the first such cut when
  // several reach it. Row 1 is the prefix sums.
  std::vector<std::uint64_t> previous(prefix), best(n + 1, 0);
  std::vector<std::vector<std::uint32_t>> cut(parts + 1, std::vector<std::uint32_t>(n + 1, 0));
  for (std::uint32_t j = 2; j <= parts; ++j) {
    for (std::size_t i = j; i <= n; ++i) {
      // Over cuts c in [j-1, i): previous[c] never falls as c grows (one more
      // item never lowers the best largest sum) and the last chunk's sum
      // prefix[i] - prefix[c] never rises, so their maximum falls, then rises:
      // its minimum is beside the first c where the first reaches the second.
      const std::size_t first = j - 1;
      // (Counting iterators rather than std::views::iota: clang 14, which the
      // sanitizer and fuzz builds use, cannot take libstdc++ 12's iota_view.)
      const auto below = [&](std::size_t c) { return previous[c] < prefix[i] - prefix[c]; };
      const std::size_t cross =
          std::partition_point(boost::make_counting_iterator(first), boost::make_counting_iterator(i), below).base();
      std::size_t c_best = cross;
      std::uint64_t v_best = c_best < i ? previous[c_best] : std::numeric_limits<std::uint64_t>::max();
      if (cross > first) {
        // Left of the crossing the last chunk dominates; its smallest sum,
        // prefix[i] - prefix[cross - 1], is first reached at the first c with
        // that prefix (zero sizes repeat it).
        const std::uint64_t left = prefix[i] - prefix[cross - 1];
        if (left <= v_best) {
          v_best = left;
          c_best = static_cast<std::size_t>(
              std::lower_bound(prefix.begin() + static_cast<std::ptrdiff_t>(first), prefix.begin() + static_cast<std::ptrdiff_t>(cross), prefix[cross - 1]) -
              prefix.begin());
        }
      }
      best[i] = v_best;
      cut[j][i] = static_cast<std::uint32_t>(c_best);
    }
    std::swap(previous, best);
  }
  std::vector<std::uint32_t> out(parts);
  std::size_t i = n;
  for (std::uint32_t j = parts; j >= 1; --j) {
    out[j - 1] = static_cast<std::uint32_t>(i - cut[j][i]);
    i = cut[j][i];
  }
  return out;
}

std::vector<std::uint32_t> bucket_lengths(std::span<const std::uint64_t> lengths, std::uint32_t max_buckets) {
  const std::size_t n = lengths.size();
  if (n == 0) return {};
  const std::size_t b = std::clamp<std::size_t>(max_buckets, 1, n);
  std::vector<std::uint64_t> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + lengths[i];
  // Padding of the bucket [c, i): every length raised to lengths[c] (the longest).
  auto pad = [&](std::size_t c, std::size_t i) { return (i - c) * lengths[c] - (prefix[i] - prefix[c]); };
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::vector<std::uint64_t>> best(b + 1, std::vector<std::uint64_t>(n + 1, kMax));
  std::vector<std::vector<std::uint32_t>> cut(b + 1, std::vector<std::uint32_t>(n + 1, 0));
  best[0][0] = 0;
  for (std::size_t i = 1; i <= n; ++i) best[1][i] = pad(0, i);
  // The padding is Monge over descending lengths (pad(a,c) + pad(b,d) <= pad(a,d) +
  // pad(b,c) for a <= b <= c <= d), so the first best cut never moves left as i
  // grows: each row by divide and conquer, O(n log n) instead of O(n^2), the
  // first of equal cuts still kept.
  for (std::size_t j = 2; j <= b; ++j) {
    const auto& previous = best[j - 1];
    auto& row = best[j];
    auto& row_cut = cut[j];
    // Rows i in [lo, hi) whose first best cut lies in [c_lo, c_hi].
    auto solve = [&](auto& self, std::size_t lo, std::size_t hi, std::size_t c_lo, std::size_t c_hi) -> void {
      if (lo >= hi) return;
      const std::size_t i = lo + (hi - lo) / 2;
      std::size_t at = c_lo;
      for (std::size_t c = c_lo; c <= std::min(c_hi, i - 1); ++c) {
        const std::uint64_t v = previous[c] + pad(c, i);
        if (v < row[i]) {
          row[i] = v;
          at = c;
        }
      }
      row_cut[i] = static_cast<std::uint32_t>(at);
      self(self, lo, i, c_lo, at);
      self(self, i + 1, hi, at, c_hi);
    };
    solve(solve, j, n + 1, j - 1, n - 1);
  }
  // Fewest buckets reaching the least padding.
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

}  // namespace eppsim
