#pragma once
// How long a rank's ops kept it busy (Trace.busy): the union of the
// [start, end) intervals of its compute ops, of its compute and recompute
// ops, and of every compute and communication op. The report's breakdown
// (traces/trace_report.h) is made of these three lengths, whether they come
// from a trace's op events or from an executor that kept no events.
#include <cstdint>
#include <utility>
#include <vector>

#include "traces/trace.pb.h"

namespace eppsim {

class RankBusyCounter {
 public:
  // One op of the rank: kind COMPUTE (with its phase), SEND, RECV or
  // COLLECTIVE; MEMORY and unspecified ops are not counted.
  void add(proto::OpKind kind, proto::Phase phase, std::int64_t start_ns, std::int64_t end_ns);
  // The rank's figures; the counter is then empty, for the next rank.
  proto::RankBusy take(std::uint32_t rank);

 private:
  using Interval = std::pair<std::int64_t, std::int64_t>;
  std::vector<Interval> compute_, recompute_, communication_;
};

}  // namespace eppsim
