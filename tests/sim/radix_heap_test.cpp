#include "sim/engine/radix_heap.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

struct Event {
  double time_s;
  std::uint32_t id;
};

// The order the analytic engine's events must come out in: earliest first,
// then first pushed.
struct Reference {
  using Entry = std::tuple<double, std::uint64_t, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  std::uint64_t seq = 0;
  void push(const Event& e) { queue.emplace(e.time_s, seq++, e.id); }
};

TEST(RadixHeap, EqualTimesComeOutInTheOrderTheyWerePushed) {
  RadixHeap<Event> heap;
  for (std::uint32_t id = 0; id < 5; ++id) heap.push({2.0, id});
  heap.push({1.0, 9});
  heap.push({-0.0, 7});  // -0.0 is 0.0
  heap.push({0.0, 8});
  EXPECT_EQ(heap.times_opened(), 3u);  // 2.0, 1.0 and 0.0 (-0.0 is 0.0)
  std::vector<std::uint32_t> order;
  while (!heap.empty()) {
    order.push_back(heap.top().id);
    heap.pop();
  }
  EXPECT_EQ(order, (std::vector<std::uint32_t>{7, 8, 9, 0, 1, 2, 3, 4}));
}

// An event loop peeks at the next event, then pushes events at or after the
// last one it took, which may come before the one it peeked at.
TEST(RadixHeap, MatchesABinaryHeapOverARandomEventLoop) {
  std::mt19937_64 random(7);
  RadixHeap<Event> heap;
  Reference reference;
  double now = 0.0;
  std::uint32_t next_id = 0;
  const auto push = [&](double time_s) {
    heap.push({time_s, next_id});
    reference.push({time_s, next_id});
    ++next_id;
  };
  for (int i = 0; i < 64; ++i) push(std::uniform_real_distribution<double>(0.0, 1e-3)(random));
  for (int step = 0; step < 200000 && !heap.empty(); ++step) {
    ASSERT_EQ(heap.size(), reference.queue.size());
    const auto [time_s, seq, id] = reference.queue.top();
    ASSERT_EQ(heap.top().time_s, time_s) << "step " << step;
    ASSERT_EQ(heap.top().id, id) << "step " << step;
    // Peeked at: now push at `now` and after it, some before the peeked event.
    const int pushes = static_cast<int>(random() % 3);
    for (int k = 0; k < pushes && next_id < 150000; ++k) {
      switch (random() % 4) {
        case 0: push(now); break;                           // this instant
        case 1: push(now + (time_s - now) * 0.5); break;    // before the peeked one
        case 2: push(time_s); break;                        // with it
        default: push(now + std::ldexp(1.0, -static_cast<int>(random() % 40))); break;
      }
    }
    if (reference.queue.top() != std::make_tuple(time_s, seq, id)) continue;  // an earlier one came in
    heap.pop();
    reference.queue.pop();
    now = time_s;
  }
  EXPECT_GT(next_id, 100000u);
}

// Items of one time wait in a list, and the waiting times in a hash table
// that grows and shifts slots back as times are drained: thousands of
// distinct times, each pushed several times in random order, popped while
// more are pushed.
TEST(RadixHeap, ManyTimesEachPushedManyTimes) {
  std::mt19937_64 random(11);
  RadixHeap<Event> heap;
  Reference reference;
  std::vector<double> times;
  for (int k = 0; k < 4000; ++k) times.push_back(1.0 + 1e-6 * static_cast<double>(random() % 100000));
  std::uint32_t next_id = 0;
  double now = 0.0;
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 500; ++k) {
      const double t = std::max(now, times[random() % times.size()]);
      heap.push({t, next_id});
      reference.push({t, next_id});
      ++next_id;
    }
    for (int k = 0; k < 400 && !heap.empty(); ++k) {
      const auto [time_s, seq, id] = reference.queue.top();
      ASSERT_EQ(heap.top().time_s, time_s) << "round " << round;
      ASSERT_EQ(heap.top().id, id) << "round " << round;
      heap.pop();
      reference.queue.pop();
      now = time_s;
    }
  }
  while (!heap.empty()) {
    ASSERT_EQ(heap.top().id, std::get<2>(reference.queue.top()));
    heap.pop();
    reference.queue.pop();
  }
  EXPECT_TRUE(reference.queue.empty());
}

TEST(RadixHeap, RejectsAnItemBeforeTheLastPopped) {
  RadixHeap<Event> heap;
  heap.push({2.0, 0});
  heap.pop();
  heap.push({2.0, 1});
  EXPECT_THROW(heap.push({1.5, 2}), std::logic_error);
  EXPECT_EQ(heap.size(), 1u);
  EXPECT_EQ(heap.top().id, 1u);
}

}  // namespace
}  // namespace eppsim
