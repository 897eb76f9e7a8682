#include "sim/engine/op_prices.h"

#include <bit>
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/interrupt.h"
#include "schedule/program_ops.h"

namespace eppsim {

template <typename Table>
std::uint32_t OpPrices::index_of_last(const Table& table) {
  if (table.size() > std::size_t{kPriceIndex} + 1) {
    throw InputError(fmt::format("schedule: more than {} op prices of one kind", std::size_t{kPriceIndex} + 1));
  }
  return static_cast<std::uint32_t>(table.size() - 1);
}

OpPrices::OpPrices(const proto::Schedule& schedule, const CostModel& cost)
    : schedule_(schedule), cost_(cost), prices_s_(1, 0.0), recent_price_(std::size_t{1} << kRecentPriceBits, 0) {
  // A work joins the class of the first work whose inputs hash alike, when
  // they are equal (a rare collision starts a class of its own).
  std::unordered_map<std::uint64_t, std::uint32_t> class_of_hash;
  const auto works = static_cast<std::uint32_t>(schedule.shared_computes_size());
  class_of_work_.reserve(works);
  for (std::uint32_t w = 0; w < works; ++w) {
    const proto::ComputeOp& work = schedule.shared_computes(static_cast<int>(w));
    const auto next = static_cast<std::uint32_t>(class_work_.size());
    const auto [at, added] = class_of_hash.try_emplace(compute_duration_inputs_hash(work), next);
    if (!added && same_compute_duration_inputs(work, schedule.shared_computes(static_cast<int>(class_work_[at->second])))) {
      class_of_work_.push_back(at->second);
      continue;
    }
    class_of_work_.push_back(next);
    class_work_.push_back(w);
  }
  class_price_.assign(class_work_.size(), 0);
}

void OpPrices::price_rank(std::uint32_t rank, std::span<std::uint32_t> words) {
  // Equal durations share an entry, so that the table the run reads at random
  // stays small: a duration seen recently is found in a direct-mapped memo
  // keyed by its bits (a miss only adds an entry).
  const auto new_price = [&](double duration_s) {
    const auto bits = std::bit_cast<std::uint64_t>(duration_s);
    std::uint32_t& slot = recent_price_[(bits * 0x9E3779B97F4A7C15ull) >> (64 - kRecentPriceBits)];
    if (slot != 0 && std::bit_cast<std::uint64_t>(prices_s_[slot]) == bits) return slot;
    prices_s_.push_back(duration_s);
    slot = index_of_last(prices_s_);
    return slot;
  };
  // By index: pricing needs no op's dependencies, which the iterator walks.
  const ProgramOps ops = ops_of(schedule_, rank);
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    const OpView op = ops[i];
    const bool fixed = op.duration_source() == proto::DURATION_FIXED;
    std::uint32_t price = 0;
    switch (op.code()) {
      case proto::OP_COMPUTE:
        if (!fixed) {
          // Works of equal inputs take the same time: the class is priced
          // with its first work.
          const auto c = class_of_work_[op.shared_compute()];
          std::uint32_t& shared = class_price_[c];
          if (shared == 0) {
            const proto::ComputeOp& work = schedule_.shared_computes(static_cast<int>(class_work_[c]));
            shared = new_price(compute_duration(cost_, work, segments_).value);
          }
          price = shared;
        } else {
          price = new_price(compute_duration(cost_, schedule_, op, segments_).value);
        }
        break;
      case proto::OP_SEND: price = new_price(transfer_duration(cost_, op, rank, op.peer()).value); break;
      case proto::OP_COLLECTIVE: {
        const auto& members = schedule_.groups(static_cast<int>(op.group())).ranks();
        const std::span<const std::uint32_t> ranks(members.data(), static_cast<std::size_t>(members.size()));
        if (ranks.front() != rank) continue;
        const auto add = [&] {
          const double duration_s = collective_duration(cost_, op, ranks).value;
          // A measured duration has no latency of its own to tell apart.
          const double latency_s = fixed ? 0.0 : std::min(duration_s, collective_latency(cost_, op, ranks).value);
          collective_prices_.push_back(
              CollectivePrice{duration_s, latency_s, op.group(), op.algorithm() == proto::HIERARCHICAL});
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
          const auto [at, added] = collective_price_of_shape_.try_emplace(shape, 0);
          if (added) {
            throw_if_interrupted();  // a new shape can take a while on a large network
            at->second = add();
          }
          price = at->second;
        }
        break;
      }
      default: continue;
    }
    words[i] = price | (fixed ? kFixedPrice : 0);
  }
}

void OpPrices::release_pricing_tables() {
  std::vector<std::uint32_t>().swap(class_of_work_);
  std::vector<std::uint32_t>().swap(class_work_);
  std::vector<std::uint32_t>().swap(class_price_);
  decltype(collective_price_of_shape_)().swap(collective_price_of_shape_);
  std::vector<std::uint32_t>().swap(recent_price_);
  std::vector<Segment>().swap(segments_);
}

}  // namespace eppsim
