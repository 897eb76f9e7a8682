#pragma once
// The analytic engine's price of every op: the cost model's uncontended
// duration, read from the Schedule in one pass in program order before the
// run. The engine's hooks are called in time order, which jumps across ranks,
// and reading each op's columns and its work then would cost a few cache
// misses an op.
#include <cstdint>
#include <vector>

#include "traces/executor/executor_core.h"
#include "traces/executor/huge_page_allocator.h"
#include "traces/op_cost.h"

namespace eppsim {

class OpPrices {
 public:
  struct Price {
    double duration_s = 0.0;  // the cost model's uncontended time
    bool fixed = false;       // DURATION_FIXED
    bool hierarchical = false;  // COLLECTIVE: its algorithm
    std::uint32_t group = 0;    // COLLECTIVE
  };

  // Prices every COMPUTE and SEND op, and every COLLECTIVE op of the first
  // rank of its group (the first of collective_ready's members) with its group
  // and algorithm. A group's members run one work, every op of a shared
  // compute one duration, and a group's collectives of one kind, algorithm and
  // size one duration: each is priced once, and an op holds its price's
  // index; compute and send ops of equal durations mostly share one index.
  // More than 2^30 durations of either kind is an InputError.
  OpPrices(const proto::Schedule& schedule, const CostModel& cost, const ExecutorCore& core);

  // An op's price (0 for an op never priced).
  Price of(OpRef ref) const;
  // Brings the price of the op after global op `g` (ExecutorCore::prefetch's
  // numbering) toward the cache: its successors' are likely on that line.
  void prefetch_after(std::uint32_t g) const {
    if (g + 1 < price_of_op_.size()) __builtin_prefetch(&price_of_op_[g + 1]);
  }

 private:
  struct CollectivePrice {
    double duration_s = 0.0;
    std::uint32_t group = 0;
    bool hierarchical = false;
  };
  // Per op of the Schedule (a rank's first op at rank_offset_[rank]): the
  // index of its duration in prices_s_, or with kCollectivePrice set in
  // collective_prices_, and kFixedPrice set when the duration is fixed.
  // prices_s_[0] = 0: ops never priced.
  static constexpr std::uint32_t kFixedPrice = std::uint32_t{1} << 31;
  static constexpr std::uint32_t kCollectivePrice = std::uint32_t{1} << 30;
  static constexpr std::uint32_t kPriceIndex = kCollectivePrice - 1;
  std::vector<std::uint32_t> rank_offset_;
  OpTable<std::uint32_t> price_of_op_;
  std::vector<double> prices_s_;
  std::vector<CollectivePrice> collective_prices_;
};

}  // namespace eppsim
