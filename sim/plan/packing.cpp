#include "sim/plan/packing.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>

namespace eppsim {
namespace {

std::vector<std::uint32_t> order_decreasing(std::size_t n, const std::function<bool(std::uint32_t, std::uint32_t)>& greater) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), greater);
  return order;
}

}  // namespace

Bins best_fit_decreasing(std::span<const std::uint64_t> sizes, std::uint64_t capacity) {
  const auto order = order_decreasing(sizes.size(), [&](std::uint32_t a, std::uint32_t b) { return sizes[a] > sizes[b]; });
  Bins bins;
  // Remaining room -> bins with that room, lowest index first: best fit is the
  // smallest room that is still large enough.
  std::multimap<std::uint64_t, std::uint32_t> by_room;
  for (auto item : order) {
    const auto size = sizes[item];
    if (size > capacity) {
      bins.push_back({item});
      continue;
    }
    auto it = by_room.lower_bound(size);
    if (it == by_room.end()) {
      bins.push_back({item});
      by_room.emplace(capacity - size, static_cast<std::uint32_t>(bins.size() - 1));
      continue;
    }
    const auto bin = it->second;
    const auto room = it->first - size;
    by_room.erase(it);
    bins[bin].push_back(item);
    by_room.emplace(room, bin);
  }
  return bins;
}

Bins longest_processing_time(std::span<const double> costs, std::uint32_t bins) {
  Bins result(bins);
  if (bins == 0) return result;
  const auto order = order_decreasing(costs.size(), [&](std::uint32_t a, std::uint32_t b) { return costs[a] > costs[b]; });
  using Load = std::pair<double, std::uint32_t>;  // (load, bin): smallest load, then lowest bin
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> loads;
  for (std::uint32_t b = 0; b < bins; ++b) loads.emplace(0.0, b);
  for (auto item : order) {
    auto [load, bin] = loads.top();
    loads.pop();
    result[bin].push_back(item);
    loads.emplace(load + costs[item], bin);
  }
  return result;
}

}  // namespace eppsim
