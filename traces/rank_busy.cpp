#include "traces/rank_busy.h"

#include <algorithm>

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
  switch (kind) {
    case proto::COMPUTE:
      (phase == proto::RECOMPUTE ? recompute_ : compute_).emplace_back(start_ns, end_ns);
      break;
    case proto::SEND:
    case proto::RECV:
    case proto::COLLECTIVE:
      communication_.emplace_back(start_ns, end_ns);
      break;
    default:
      break;
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

}  // namespace eppsim
