#include "sim/plan/packing.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

std::uint64_t load(const std::vector<std::uint32_t>& bin, const std::vector<std::uint64_t>& sizes) {
  std::uint64_t total = 0;
  for (auto i : bin) total += sizes[i];
  return total;
}

TEST(BestFitDecreasing, EveryItemOnceAndBinsWithinCapacity) {
  const std::vector<std::uint64_t> sizes{700, 300, 500, 200, 100, 400, 600, 50, 950};
  const auto bins = best_fit_decreasing(sizes, 1000);
  std::vector<int> seen(sizes.size(), 0);
  for (const auto& bin : bins) {
    EXPECT_LE(load(bin, sizes), 1000u);
    for (auto i : bin) ++seen[i];
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  // 3800 units of work in bins of 1000: 4 bins is optimal and BFD finds it here.
  EXPECT_EQ(bins.size(), 4u);
}

TEST(BestFitDecreasing, OversizedItemGetsItsOwnBin) {
  const std::vector<std::uint64_t> sizes{5000, 10, 20};
  const auto bins = best_fit_decreasing(sizes, 1000);
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_EQ(bins[0], std::vector<std::uint32_t>{0});
  EXPECT_EQ(load(bins[1], sizes), 30u);
}

TEST(BestFitDecreasing, ChoosesTheFullestBinThatFits) {
  // After 600 and 500 open two bins (rooms 400 and 500), 400 fills the first exactly.
  const std::vector<std::uint64_t> sizes{600, 500, 400};
  const auto bins = best_fit_decreasing(sizes, 1000);
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_EQ(load(bins[0], sizes), 1000u);
  EXPECT_EQ(load(bins[1], sizes), 500u);
}

TEST(LongestProcessingTime, BalancesLoads) {
  const std::vector<double> costs{7, 5, 4, 3, 3, 2};
  const auto bins = longest_processing_time(costs, 2);
  ASSERT_EQ(bins.size(), 2u);
  double a = 0, b = 0;
  for (auto i : bins[0]) a += costs[i];
  for (auto i : bins[1]) b += costs[i];
  EXPECT_DOUBLE_EQ(a + b, 24.0);
  EXPECT_DOUBLE_EQ(std::max(a, b), 12.0);
}

TEST(LongestProcessingTime, IsDeterministic) {
  std::vector<double> costs(100);
  std::iota(costs.begin(), costs.end(), 1.0);
  EXPECT_EQ(longest_processing_time(costs, 7), longest_processing_time(costs, 7));
}

}  // namespace
}  // namespace eppsim
