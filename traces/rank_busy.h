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

// From every op's interval at once (a trace's events, or an executor's spans).
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

// The same figures counted as the rank's ops end, for an executor that keeps
// no per-op record: ops must come in the order of their ends, as a discrete-
// event simulator finishes them (an earlier end is a std::logic_error). The
// unions keep only the stretches an op still to come may join: settle(t) says
// no op still to come starts before t, and what ends by t is counted for good.
class RankBusyAsOpsEnd {
 public:
  void add(proto::OpKind kind, proto::Phase phase, std::int64_t start_ns, std::int64_t end_ns);
  void settle(std::int64_t no_start_before_ns);
  // Stretches not yet settled, the largest of the three unions'.
  std::size_t open_stretches() const;
  proto::RankBusy figures(std::uint32_t rank) const;

 private:
  // The union of intervals that come in the order of their ends: its disjoint
  // stretches in order, those before head_ settled into settled_ns_.
  class Union {
   public:
    void add(std::int64_t start_ns, std::int64_t end_ns);
    void settle(std::int64_t no_start_before_ns);
    std::size_t open() const { return stretches_.size() - head_; }
    std::int64_t covered_ns() const;

   private:
    std::vector<std::pair<std::int64_t, std::int64_t>> stretches_;
    std::size_t head_ = 0;
    std::int64_t settled_ns_ = 0;
    std::int64_t last_end_ns_ = 0;
  };
  Union compute_, compute_or_recompute_, busy_;
};

}  // namespace eppsim
