#pragma once
// The analytic engine's price of every op: the cost model's uncontended
// duration, read from the Schedule in program order as the executor core
// compiles each rank, and kept as the op's executor word. The engine's hooks
// are called in time order, which jumps across ranks, and reading each op's
// columns and its work then would cost a few cache misses an op.
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "schedule/executor/executor_core.h"
#include "schedule/op_cost.h"

namespace eppsim {

class OpPrices {
 public:
  struct Price {
    double duration_s = 0.0;  // the cost model's uncontended time
    double latency_s = 0.0;   // COLLECTIVE: of duration_s, its time at 0 bytes (not stretched by sharing)
    bool fixed = false;       // DURATION_FIXED
    bool hierarchical = false;  // COLLECTIVE: its algorithm
    std::uint32_t group = 0;    // COLLECTIVE
  };

  // `schedule` and `cost` must outlive this.
  OpPrices(const proto::Schedule& schedule, const CostModel& cost);

  // Prices rank `rank`'s ops (its program validated), in one pass in program
  // order: words[i] (zero) becomes op i's price, for the executor core to keep
  // as the op's executor word (ExecutorOptions::executor_words). Every COMPUTE
  // and SEND op is priced, and every COLLECTIVE op of the first rank of its
  // group (the first of collective_ready's members) with its group and
  // algorithm. A group's members run one work, every op of a shared compute
  // one duration, and a group's collectives of one kind, algorithm and size one
  // duration: each is priced once; compute and send ops of equal durations
  // mostly share one price too. More than 2^30 prices of either kind is an
  // InputError.
  void price_rank(std::uint32_t rank, std::span<std::uint32_t> words);
  // Frees what pricing needed and running does not, once every rank is priced.
  void release_pricing_tables();

  // The price of an op whose executor word is `word` (0: never priced):
  // inline, as the engine asks it once an op.
  Price of(std::uint32_t word) const;

 private:
  // What a collective's uncontended duration depends on besides the cost model.
  struct CollectiveShape {
    std::uint32_t group;
    std::uint32_t kind_and_algorithm;
    std::uint64_t bytes;
    bool operator==(const CollectiveShape&) const = default;
  };
  struct CollectiveShapeHash {
    std::size_t operator()(const CollectiveShape& s) const {
      const std::uint64_t h = (std::uint64_t{s.group} << 32 | s.kind_and_algorithm) * 0x9E3779B97F4A7C15ull ^ s.bytes;
      return static_cast<std::size_t>(h ^ h >> 29);
    }
  };
  struct CollectivePrice {
    double duration_s = 0.0;
    double latency_s = 0.0;
    std::uint32_t group = 0;
    bool hierarchical = false;
  };
  // An op's word: the index of its duration in prices_s_, or with
  // kCollectivePrice set in collective_prices_, and kFixedPrice set when the
  // duration is fixed. prices_s_[0] = 0: ops never priced.
  static constexpr std::uint32_t kFixedPrice = std::uint32_t{1} << 31;
  static constexpr std::uint32_t kCollectivePrice = std::uint32_t{1} << 30;
  static constexpr std::uint32_t kPriceIndex = kCollectivePrice - 1;
  static constexpr int kRecentPriceBits = 12;  // recent_price_ has 2^12 slots
  // The index of the table's last entry (an InputError past kPriceIndex).
  template <typename Table>
  static std::uint32_t index_of_last(const Table& table);
  const proto::Schedule& schedule_;
  const CostModel& cost_;
  std::vector<double> prices_s_;
  std::vector<CollectivePrice> collective_prices_;
  // While pricing: the works' classes of equal inputs (same_compute_duration_inputs)
  // and each class's price (0: not priced yet), each collective shape's, a
  // memo of recent durations (bits to index), and the cost model's scratch.
  // The classes are found in one pass over the works in order, which reads
  // their messages one after another; pricing a rank's ops then reads a word
  // per op rather than its work, which lies anywhere in the Schedule.
  std::vector<std::uint32_t> class_of_work_;
  std::vector<std::uint32_t> class_work_;  // per class: its first work, which it is priced with
  std::vector<std::uint32_t> class_price_;
  std::unordered_map<CollectiveShape, std::uint32_t, CollectiveShapeHash> collective_price_of_shape_;
  std::vector<std::uint32_t> recent_price_;
  std::vector<Segment> segments_;
};

inline OpPrices::Price OpPrices::of(std::uint32_t word) const {
  Price p;
  if (word & kCollectivePrice) {
    const CollectivePrice& c = collective_prices_[word & kPriceIndex];
    p.duration_s = c.duration_s;
    p.latency_s = c.latency_s;
    p.group = c.group;
    p.hierarchical = c.hierarchical;
  } else {
    p.duration_s = prices_s_[word & kPriceIndex];
  }
  p.fixed = (word & kFixedPrice) != 0;
  return p;
}

}  // namespace eppsim
