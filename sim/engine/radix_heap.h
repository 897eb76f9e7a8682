#pragma once
// A radix heap: a priority queue of items keyed by a time that never goes
// below the last popped one's, as an event loop's completions are. Items come
// out earliest first and, among equal times, in the order they were pushed.
//
// A time's bits (a non-negative double) order as the time does. Bucket 0
// holds the items whose time is the last popped one; bucket b > 0 those whose
// highest bit differing from it is bit b - 1. A push appends to its bucket;
// when bucket 0 runs dry, a pop spreads the lowest nonempty bucket over the
// lower ones around its earliest time, as every one of its items is at least
// that. Both walk vectors in order, where a binary or d-ary heap of a large
// event loop misses the cache at each level it sifts through.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace eppsim {

// `Item` has a `double time_s`: finite and not negative.
template <typename Item>
class RadixHeap {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(const Item& item) {
    const std::uint64_t key = key_of(item);
    if (key < last_) {
      throw std::logic_error(fmt::format("radix heap: an item at {} s after one at {} s was popped", item.time_s,
                                         std::bit_cast<double>(last_)));
    }
    const unsigned b = bucket_of(key);
    buckets_[b].push_back(item);
    if (b != 0) nonempty_ |= std::uint64_t{1} << (b - 1);
    ++size_;
    // An earlier item than the one found next, or one in bucket 0: look again.
    if (earliest_bucket_ != 0 && (b < earliest_bucket_ || (b == earliest_bucket_ && key < earliest_key_))) {
      earliest_bucket_ = 0;
    }
  }

  // The earliest item (the heap is not empty).
  const Item& top() {
    if (head_ < buckets_[0].size()) return buckets_[0][head_];
    find_earliest();
    return buckets_[earliest_bucket_][earliest_index_];
  }

  void pop() {
    if (head_ == buckets_[0].size()) refill();
    ++head_;
    --size_;
  }

 private:
  static std::uint64_t key_of(const Item& item) { return std::bit_cast<std::uint64_t>(item.time_s + 0.0); }
  unsigned bucket_of(std::uint64_t key) const {
    return key == last_ ? 0u : 64u - static_cast<unsigned>(std::countl_zero(key ^ last_));
  }

  // Bucket 0 is used up: the first earliest item of the lowest nonempty
  // bucket is the heap's earliest.
  void find_earliest() {
    if (earliest_bucket_ != 0) return;
    earliest_bucket_ = static_cast<unsigned>(std::countr_zero(nonempty_)) + 1;
    const std::vector<Item>& from = buckets_[earliest_bucket_];
    earliest_key_ = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t i = 0; i < from.size(); ++i) {
      const std::uint64_t key = key_of(from[i]);
      if (key < earliest_key_) {
        earliest_key_ = key;
        earliest_index_ = i;
      }
    }
  }

  // Bucket 0 is used up: the earliest time becomes the last popped one's, and
  // its bucket is spread over the lower ones around it.
  void refill() {
    find_earliest();
    buckets_[0].clear();
    head_ = 0;
    const unsigned b = earliest_bucket_;
    earliest_bucket_ = 0;
    last_ = earliest_key_;
    nonempty_ &= ~(std::uint64_t{1} << (b - 1));
    // Every item lands in a lower bucket, in its order here: equal times keep
    // the order they were pushed in.
    std::vector<Item>& from = buckets_[b];
    for (const Item& item : from) {
      const unsigned to = bucket_of(key_of(item));
      buckets_[to].push_back(item);
      if (to != 0) nonempty_ |= std::uint64_t{1} << (to - 1);
    }
    from.clear();
  }

  std::vector<Item> buckets_[65];
  std::size_t head_ = 0;        // bucket 0's next item
  std::uint64_t nonempty_ = 0;  // bit b - 1: bucket b > 0 has items
  std::uint64_t last_ = 0;      // the last popped time's bits
  std::size_t size_ = 0;
  // With bucket 0 used up, once top() looked: where the earliest item is
  // (bucket 0: not known).
  unsigned earliest_bucket_ = 0;
  std::size_t earliest_index_ = 0;
  std::uint64_t earliest_key_ = 0;
};

}  // namespace eppsim
