#include "schedule/rank_busy.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace eppsim {
namespace {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

// Sorted by start. An executor's ops on one stream run one after another, so
// each set usually arrives sorted, or as a few sorted runs: checked first.
void sort(Intervals& intervals) {
  if (!std::is_sorted(intervals.begin(), intervals.end())) std::sort(intervals.begin(), intervals.end());
}

// `into` and `more` sorted: `more` joins `into`, which stays sorted.
void merge(Intervals& into, Intervals& more) {
  sort(more);
  const auto middle = static_cast<std::ptrdiff_t>(into.size());
  into.insert(into.end(), more.begin(), more.end());
  std::inplace_merge(into.begin(), into.begin() + middle, into.end());
}

// Total length covered by the union of the sorted intervals.
std::int64_t covered(const Intervals& intervals) {
  std::int64_t total = 0;
  std::int64_t open_start = 0;
  std::int64_t open_end = -1;
  bool open = false;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (open && start <= open_end) {
      open_end = std::max(open_end, end);
      continue;
    }
    if (open) total += open_end - open_start;
    open_start = start;
    open_end = end;
    open = true;
  }
  if (open) total += open_end - open_start;
  return total;
}

}  // namespace

void RankBusyCounter::add(proto::OpKind kind, proto::Phase phase, std::int64_t start_ns, std::int64_t end_ns) {
  switch (busy_set(kind, phase)) {
    case BusySet::Compute: compute_.emplace_back(start_ns, end_ns); break;
    case BusySet::Recompute: recompute_.emplace_back(start_ns, end_ns); break;
    case BusySet::Communication: communication_.emplace_back(start_ns, end_ns); break;
    case BusySet::None: break;
  }
}

proto::RankBusy RankBusyCounter::take(std::uint32_t rank) {
  proto::RankBusy busy;
  busy.set_rank(rank);
  sort(compute_);
  busy.set_compute_ns(covered(compute_));
  merge(compute_, recompute_);
  busy.set_compute_or_recompute_ns(covered(compute_));
  merge(compute_, communication_);
  busy.set_busy_ns(covered(compute_));
  compute_.clear();
  recompute_.clear();
  communication_.clear();
  return busy;
}

void RankBusyInTimeOrder::throw_out_of_order(std::int64_t at_ns) const {
  throw std::logic_error(
      fmt::format("busy time: an op's start or end at {} ns came after an event at {} ns", at_ns, last_ns_));
}

void RankBusyInTimeOrder::throw_never_started(std::int64_t at_ns) {
  throw std::logic_error(fmt::format("busy time: an op ended at {} ns that never started", at_ns));
}

proto::RankBusy RankBusyInTimeOrder::figures(std::uint32_t rank) const {
  proto::RankBusy busy;
  busy.set_rank(rank);
  busy.set_compute_ns(covered_ns_[0]);
  busy.set_compute_or_recompute_ns(covered_ns_[1]);
  busy.set_busy_ns(covered_ns_[2]);
  return busy;
}

}  // namespace eppsim
