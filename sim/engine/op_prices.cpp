#include "sim/engine/op_prices.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include <fmt/format.h>

#include "models/errors.h"
#include "traces/program_ops.h"

namespace eppsim {
namespace {

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

}  // namespace

OpPrices::OpPrices(const proto::Schedule& schedule, const CostModel& cost, const ExecutorCore& core) {
  rank_offset_.assign(std::size_t{schedule.num_ranks()} + 1, 0);
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    rank_offset_[r + 1] = rank_offset_[r] + ops_of(schedule, r).size();
  }
  price_of_op_.assign(rank_offset_.back(), 0);
  prices_s_.assign(1, 0.0);
  const auto index_of_last = [](const auto& table) {
    if (table.size() > kPriceIndex + 1) {
      throw InputError(fmt::format("schedule: more than {} distinct op durations", kPriceIndex + 1));
    }
    return static_cast<std::uint32_t>(table.size() - 1);
  };
  // Equal durations share an entry, so that the table the run reads at random
  // stays small: a duration seen recently is found in a direct-mapped memo
  // keyed by its bits (a miss only adds an entry).
  constexpr int kMemoBits = 12;
  std::vector<std::uint32_t> memo(std::size_t{1} << kMemoBits, 0);
  const auto new_price = [&](double duration_s) {
    const auto bits = std::bit_cast<std::uint64_t>(duration_s);
    std::uint32_t& slot = memo[(bits * 0x9E3779B97F4A7C15ull) >> (64 - kMemoBits)];
    if (slot != 0 && std::bit_cast<std::uint64_t>(prices_s_[slot]) == bits) return slot;
    prices_s_.push_back(duration_s);
    slot = index_of_last(prices_s_);
    return slot;
  };
  std::vector<Segment> segments;
  std::unordered_map<CollectiveShape, std::uint32_t, CollectiveShapeHash> collective_price_of_shape;
  std::vector<std::uint32_t> shared_price(static_cast<std::size_t>(schedule.shared_computes_size()), 0);
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    // By index: pricing needs no op's dependencies, which the iterator walks.
    const ProgramOps ops = ops_of(schedule, r);
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
      const OpView op = ops[i];
      const bool fixed = op.duration_source() == proto::DURATION_FIXED;
      std::uint32_t price = 0;
      switch (op.code()) {
        case proto::OP_COMPUTE:
          if (!fixed) {
            std::uint32_t& shared = shared_price[op.shared_compute()];
            if (shared == 0) shared = new_price(compute_duration(cost, schedule, op, segments).value);
            price = shared;
          } else {
            price = new_price(compute_duration(cost, schedule, op, segments).value);
          }
          break;
        case proto::OP_SEND: price = new_price(transfer_duration(cost, op, r, op.peer()).value); break;
        case proto::OP_COLLECTIVE: {
          const auto ranks = core.group_ranks(op.group());
          if (ranks.front() != r) continue;
          const auto add = [&] {
            collective_prices_.push_back(CollectivePrice{collective_duration(cost, op, ranks).value, op.group(),
                                                         op.algorithm() == proto::HIERARCHICAL});
            return index_of_last(collective_prices_) | kCollectivePrice;
          };
          if (fixed) {
            price = add();
          } else {
            // A group repeats its collectives (layer after layer, micro-batch
            // after micro-batch): equal ones share a price.
            const CollectiveShape shape{op.group(), static_cast<std::uint32_t>(op.collective_kind()) << 8 |
                                                        static_cast<std::uint32_t>(op.algorithm()),
                                        op.size_bytes()};
            const auto [at, added] = collective_price_of_shape.try_emplace(shape, 0);
            if (added) at->second = add();
            price = at->second;
          }
          break;
        }
        default: continue;
      }
      price_of_op_[rank_offset_[r] + i] = price | (fixed ? kFixedPrice : 0);
    }
  }
}

OpPrices::Price OpPrices::of(OpRef ref) const {
  const std::uint32_t entry = price_of_op_[rank_offset_[ref.rank] + ref.op];
  Price p;
  if (entry & kCollectivePrice) {
    const CollectivePrice& c = collective_prices_[entry & kPriceIndex];
    p.duration_s = c.duration_s;
    p.group = c.group;
    p.hierarchical = c.hierarchical;
  } else {
    p.duration_s = prices_s_[entry & kPriceIndex];
  }
  p.fixed = (entry & kFixedPrice) != 0;
  return p;
}

}  // namespace eppsim
