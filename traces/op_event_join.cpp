#include "traces/op_event_join.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/memory_limit.h"

namespace eppsim {
namespace {

// Half what the memory limit leaves, in events of both traces; at least 2^20.
std::uint64_t default_batch_events() {
  const std::uint64_t limit = memory_limit_bytes(), held = held_memory_bytes();
  const std::uint64_t free_bytes = limit > held ? limit - held : 0;
  return std::max<std::uint64_t>(std::uint64_t{1} << 20, free_bytes / 2 / sizeof(OpEventFields));
}

// The events of ranks [first, last) of `side`, by op; InputError for an op listed twice.
std::vector<OpEventFields> batch_of(const JoinSide& side, std::uint32_t first, std::uint32_t last,
                                    std::uint64_t events) {
  std::vector<OpEventFields> batch;
  batch.reserve(static_cast<std::size_t>(events));
  side.trace.for_each_part([&](const proto::Trace& part, std::uint64_t) {
    const auto& ranks = part.op_events().rank();
    for (int i = 0; i < ranks.size(); ++i) {
      if (ranks[i] >= first && ranks[i] < last) batch.push_back(fields_of(OpEventRef(part.op_events(), i)));
    }
  });
  const auto key = [](const OpEventFields& e) { return std::tie(e.rank, e.op); };
  std::stable_sort(batch.begin(), batch.end(),
                   [&](const OpEventFields& x, const OpEventFields& y) { return key(x) < key(y); });
  const auto twice = std::adjacent_find(batch.begin(), batch.end(),
                                        [&](const OpEventFields& x, const OpEventFields& y) { return key(x) == key(y); });
  if (twice != batch.end()) {
    throw InputError(
        fmt::format("{}: events: rank {} op {} appears twice", side.trace.name(), twice->rank, twice->op));
  }
  return batch;
}

}  // namespace

std::string join_op_events(const JoinSide& a, const JoinSide& b,
                           const std::function<void(const OpEventFields&, const OpEventFields&)>& matched,
                           std::uint64_t batch_events) {
  if (batch_events == 0) batch_events = default_batch_events();
  const auto ranks = static_cast<std::uint32_t>(a.tally.events_per_rank.size());
  const auto only = [](const OpEventFields& e, std::string_view label) {
    return fmt::format("rank {} op {} is in {} only", e.rank, e.op, label);
  };
  for (std::uint32_t first = 0; first < ranks;) {
    // As many ranks as fit the batch, one at least.
    std::uint32_t last = first;
    std::uint64_t a_events = 0, b_events = 0;
    while (last < ranks && (last == first || a_events + b_events + a.tally.events_per_rank[last] +
                                                     b.tally.events_per_rank[last] <=
                                                 batch_events)) {
      a_events += a.tally.events_per_rank[last];
      b_events += b.tally.events_per_rank[last];
      ++last;
    }
    if (a_events + b_events > 0) {
      const std::vector<OpEventFields> in_a = batch_of(a, first, last, a_events);
      const std::vector<OpEventFields> in_b = batch_of(b, first, last, b_events);
      auto x = in_a.begin();
      auto y = in_b.begin();
      for (; x != in_a.end() && y != in_b.end(); ++x, ++y) {
        if (x->rank != y->rank || x->op != y->op) {
          return std::tie(x->rank, x->op) < std::tie(y->rank, y->op) ? only(*x, a.label) : only(*y, b.label);
        }
        if (const std::string field = event_difference(*x, *y); !field.empty()) {
          return fmt::format("rank {} op {}: {}", x->rank, x->op, field);
        }
        matched(*x, *y);
      }
      if (x != in_a.end()) return only(*x, a.label);
      if (y != in_b.end()) return only(*y, b.label);
    }
    first = last;
  }
  return {};
}

}  // namespace eppsim
