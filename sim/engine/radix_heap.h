#pragma once
// A radix heap: a priority queue of items keyed by a time that never goes
// below the last popped one's, as an event loop's completions are. Items come
// out earliest first and, among equal times, in the order they were pushed.
//
// Items of one time wait in a list of their own, in push order, and the radix
// heap orders the distinct times: a training step's symmetric replicas end
// many ops at exactly the same time (about 7 items a time on packed-1f1b at
// 16K GPUs, 9 on flexsp at 2K), and a push to a time already waiting only
// appends to its list, found through a hash table of the waiting times.
//
// A time's bits (a non-negative double) order as the time does. The time
// being drained is the last popped one; bucket b > 0 holds the waiting times
// whose highest bit differing from it is bit b - 1. A push of a new time
// appends to its bucket; when the time being drained runs dry, a pop spreads
// the lowest nonempty bucket over the lower ones around its earliest time, as
// every one of its times is at least that. Both walk vectors in order, where a
// binary or d-ary heap of a large event loop misses the cache at each level it
// sifts through.
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
  // Pushes that found no item waiting at their time and opened a list of
  // their own (an instant drained and pushed to again opens another).
  std::uint64_t times_opened() const { return times_opened_; }

  // Inline: an event loop pushes about once an event, and most pushes go to a
  // time already waiting.
  [[gnu::always_inline]] void push(const Item& item) {
    const std::uint64_t key = key_of(item);
    if (key < last_) [[unlikely]] throw_before_last(item.time_s);
    const std::uint32_t node = new_node(item);
    ++size_;
    Slot& slot = slot_of(key);
    if (slot.time != kNone) {
      Time& time = times_[slot.time];
      nodes_[time.tail].next = node;
      time.tail = node;
      return;
    }
    push_time(slot, key, node);
  }

  // The earliest item (the heap is not empty).
  const Item& top() {
    if (current_ != kNone) return nodes_[times_[current_].head].item;
    find_earliest();
    return nodes_[times_[buckets_[earliest_bucket_][earliest_index_].time].head].item;
  }

  void pop() {
    if (current_ == kNone) refill();
    Time& time = times_[current_];
    const std::uint32_t node = time.head;
    time.head = nodes_[node].next;
    nodes_[node].next = free_nodes_;
    free_nodes_ = node;
    --size_;
    if (time.head != kNone) return;
    erase_slot(time.key);
    time.head = free_times_;
    free_times_ = current_;
    current_ = kNone;
    --waiting_;
  }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  struct Node {
    Item item;
    std::uint32_t next;  // the next item of its time, or of the free list
  };
  // A waiting time's items, oldest first (head: the next free one when free).
  struct Time {
    std::uint64_t key;
    std::uint32_t head, tail;
  };
  // A waiting time in its bucket.
  struct Entry {
    std::uint64_t key;
    std::uint32_t time;
  };
  // The hash table's slot of a waiting time (time == kNone: empty).
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t time = kNone;
  };

  [[noreturn, gnu::noinline, gnu::cold]] void throw_before_last(double time_s) const {
    throw std::logic_error(fmt::format("radix heap: an item at {} s after one at {} s was popped", time_s,
                                       std::bit_cast<double>(last_)));
  }

  // A new waiting time `key`, in its empty `slot`, with the item `node`.
  [[gnu::noinline]] void push_time(Slot& slot, std::uint64_t key, std::uint32_t node) {
    const std::uint32_t t = new_time(key, node);
    slot = Slot{key, t};
    ++waiting_;
    ++times_opened_;
    if (key == last_) {
      current_ = t;  // the last popped time, drained already: nothing waits before it
      return;
    }
    const unsigned b = bucket_of(key);
    buckets_[b].push_back(Entry{key, t});
    nonempty_ |= std::uint64_t{1} << (b - 1);
    // An earlier time than the one found next: look again.
    if (earliest_bucket_ != 0 && (b < earliest_bucket_ || (b == earliest_bucket_ && key < earliest_key_))) {
      earliest_bucket_ = 0;
    }
  }

  static std::uint64_t key_of(const Item& item) { return std::bit_cast<std::uint64_t>(item.time_s + 0.0); }
  unsigned bucket_of(std::uint64_t key) const {
    return key == last_ ? 0u : 64u - static_cast<unsigned>(std::countl_zero(key ^ last_));
  }

  std::uint32_t new_node(const Item& item) {
    if (free_nodes_ == kNone) {
      nodes_.push_back(Node{item, kNone});
      return static_cast<std::uint32_t>(nodes_.size() - 1);
    }
    const std::uint32_t node = free_nodes_;
    free_nodes_ = nodes_[node].next;
    nodes_[node] = Node{item, kNone};
    return node;
  }
  std::uint32_t new_time(std::uint64_t key, std::uint32_t node) {
    if (free_times_ == kNone) {
      times_.push_back(Time{key, node, node});
      return static_cast<std::uint32_t>(times_.size() - 1);
    }
    const std::uint32_t t = free_times_;
    free_times_ = times_[t].head;
    times_[t] = Time{key, node, node};
    return t;
  }

  // Open addressing with linear probing, at most half full.
  std::size_t home_of(std::uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> table_shift_; }
  // The slot holding `key`, or the empty slot where it would go (the table
  // grows first if adding it could fill more than half).
  Slot& slot_of(std::uint64_t key) {
    if (2 * (waiting_ + 1) > table_.size()) grow();
    const std::size_t mask = table_.size() - 1;
    for (std::size_t i = home_of(key);; i = (i + 1) & mask) {
      if (table_[i].time == kNone || table_[i].key == key) return table_[i];
    }
  }
  [[gnu::noinline]] void grow() {
    std::vector<Slot> old(table_.size() < 16 ? 16 : 2 * table_.size());
    old.swap(table_);
    table_shift_ = 64 - static_cast<unsigned>(std::countr_zero(table_.size()));
    const std::size_t mask = table_.size() - 1;
    for (const Slot& s : old) {
      if (s.time == kNone) continue;
      std::size_t i = home_of(s.key);
      while (table_[i].time != kNone) i = (i + 1) & mask;
      table_[i] = s;
    }
  }
  // Removes `key`'s slot, shifting back the slots after it that would no
  // longer be found past the gap.
  void erase_slot(std::uint64_t key) {
    const std::size_t mask = table_.size() - 1;
    std::size_t gap = home_of(key);
    while (table_[gap].key != key || table_[gap].time == kNone) gap = (gap + 1) & mask;
    for (std::size_t i = (gap + 1) & mask; table_[i].time != kNone; i = (i + 1) & mask) {
      // The slot at i may fill the gap unless its home lies after the gap (cyclically, up to i).
      const std::size_t home = home_of(table_[i].key);
      if (((i - home) & mask) < ((i - gap) & mask)) continue;
      table_[gap] = table_[i];
      gap = i;
    }
    table_[gap].time = kNone;
  }

  // No time is being drained: the earliest of the lowest nonempty bucket is
  // the heap's earliest.
  void find_earliest() {
    if (earliest_bucket_ != 0) return;
    earliest_bucket_ = static_cast<unsigned>(std::countr_zero(nonempty_)) + 1;
    const std::vector<Entry>& from = buckets_[earliest_bucket_];
    earliest_key_ = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t i = 0; i < from.size(); ++i) {
      if (from[i].key < earliest_key_) {
        earliest_key_ = from[i].key;
        earliest_index_ = i;
      }
    }
  }

  // No time is being drained: the earliest becomes the last popped one and is
  // drained next, and the rest of its bucket is spread over the lower ones.
  void refill() {
    find_earliest();
    const unsigned b = earliest_bucket_;
    earliest_bucket_ = 0;
    last_ = earliest_key_;
    nonempty_ &= ~(std::uint64_t{1} << (b - 1));
    std::vector<Entry>& from = buckets_[b];
    current_ = from[earliest_index_].time;
    for (std::size_t i = 0; i < from.size(); ++i) {
      if (i == earliest_index_) continue;
      const unsigned to = bucket_of(from[i].key);
      buckets_[to].push_back(from[i]);
      nonempty_ |= std::uint64_t{1} << (to - 1);
    }
    from.clear();
  }

  std::vector<Node> nodes_;
  std::uint32_t free_nodes_ = kNone;
  std::vector<Time> times_;
  std::uint32_t free_times_ = kNone;
  std::vector<Slot> table_;
  unsigned table_shift_ = 64;
  std::size_t waiting_ = 0;  // times waiting (in the table), the one being drained included
  std::uint64_t times_opened_ = 0;
  std::vector<Entry> buckets_[65];  // bucket 0 stays empty: its time is current_
  std::uint32_t current_ = kNone;  // the time being drained (its key is last_), or kNone
  std::uint64_t nonempty_ = 0;  // bit b - 1: bucket b > 0 has times
  std::uint64_t last_ = 0;      // the last popped time's bits
  std::size_t size_ = 0;
  // With no time being drained, once top() looked: where the earliest time is
  // (bucket 0: not known).
  unsigned earliest_bucket_ = 0;
  std::size_t earliest_index_ = 0;
  std::uint64_t earliest_key_ = 0;
};

}  // namespace eppsim
