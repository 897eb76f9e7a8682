#include "traces/rank_busy.h"

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

// Which of the figures' sets an op joins: compute (and with it the second and
// third figure), recompute (the second and third), communication (the third).
enum class BusySet { None, Compute, Recompute, Communication };
BusySet busy_set(proto::OpKind kind, proto::Phase phase) {
  switch (kind) {
    case proto::COMPUTE:
      return phase == proto::RECOMPUTE ? BusySet::Recompute : BusySet::Compute;
    case proto::SEND:
    case proto::RECV:
    case proto::COLLECTIVE:
      return BusySet::Communication;
    default:
      return BusySet::None;
  }
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

void RankBusyAsOpsEnd::Union::add(std::int64_t start_ns, std::int64_t end_ns) {
  if (end_ns <= start_ns) return;  // as covered(): an empty interval covers nothing
  if (end_ns < last_end_ns_) {
    throw std::logic_error(fmt::format("busy time: an op ending at {} ns came after one ending at {} ns", end_ns,
                                       last_end_ns_));
  }
  if (head_ > 0 && stretches_[head_ - 1].second > start_ns) {
    throw std::logic_error(fmt::format("busy time: an op starting at {} ns came after time to {} ns was settled",
                                       start_ns, stretches_[head_ - 1].second));
  }
  last_end_ns_ = end_ns;
  // It ends last, so it joins every open stretch that does not end before it starts.
  while (stretches_.size() > head_ && stretches_.back().second >= start_ns) {
    start_ns = std::min(start_ns, stretches_.back().first);
    stretches_.pop_back();
  }
  stretches_.emplace_back(start_ns, end_ns);
}

void RankBusyAsOpsEnd::Union::settle(std::int64_t no_start_before_ns) {
  while (head_ < stretches_.size() && stretches_[head_].second <= no_start_before_ns) {
    settled_ns_ += stretches_[head_].second - stretches_[head_].first;
    ++head_;
  }
  if (head_ >= 64 && 2 * head_ >= stretches_.size()) {
    // Keep the last settled stretch: add() checks new starts against it.
    stretches_.erase(stretches_.begin(), stretches_.begin() + static_cast<std::ptrdiff_t>(head_ - 1));
    head_ = 1;
  }
}

std::int64_t RankBusyAsOpsEnd::Union::covered_ns() const {
  std::int64_t total = settled_ns_;
  for (std::size_t i = head_; i < stretches_.size(); ++i) total += stretches_[i].second - stretches_[i].first;
  return total;
}

void RankBusyAsOpsEnd::add(proto::OpKind kind, proto::Phase phase, std::int64_t start_ns, std::int64_t end_ns) {
  const BusySet set = busy_set(kind, phase);
  if (set == BusySet::None) return;
  if (set == BusySet::Compute) compute_.add(start_ns, end_ns);
  if (set != BusySet::Communication) compute_or_recompute_.add(start_ns, end_ns);
  busy_.add(start_ns, end_ns);
}

void RankBusyAsOpsEnd::settle(std::int64_t no_start_before_ns) {
  compute_.settle(no_start_before_ns);
  compute_or_recompute_.settle(no_start_before_ns);
  busy_.settle(no_start_before_ns);
}

std::size_t RankBusyAsOpsEnd::open_stretches() const {
  return std::max({compute_.open(), compute_or_recompute_.open(), busy_.open()});
}

proto::RankBusy RankBusyAsOpsEnd::figures(std::uint32_t rank) const {
  proto::RankBusy busy;
  busy.set_rank(rank);
  busy.set_compute_ns(compute_.covered_ns());
  busy.set_compute_or_recompute_ns(compute_or_recompute_.covered_ns());
  busy.set_busy_ns(busy_.covered_ns());
  return busy;
}

}  // namespace eppsim
