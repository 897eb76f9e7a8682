#pragma once
// How long a rank's ops kept it busy (Trace.busy): the union of the
// [start, end) intervals of its compute ops, of its compute and recompute
// ops, and of every compute and communication op. The report's breakdown
// (traces/trace_report.h) is made of these three lengths, whether they come
// from a trace's op events or from an executor that kept no events.
#include <array>
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

// The same figures counted as the rank's ops start and end, for an executor
// that keeps no per-op record: the starts and ends must come in time order, as
// a discrete-event simulator runs them (an earlier one is a std::logic_error).
// Each figure grows by the time from one event to the next while one of its
// ops runs: a few counters a rank, whatever the number of ops. An op that
// started and never ended counts up to the rank's last event; a step that
// ran to its end has none.
class RankBusyInTimeOrder {
 public:
  // One op of the rank (kinds as RankBusyCounter::add) starts or ends.
  void start(proto::OpKind kind, proto::Phase phase, std::int64_t at_ns);
  void end(proto::OpKind kind, proto::Phase phase, std::int64_t at_ns);
  proto::RankBusy figures(std::uint32_t rank) const;

 private:
  // The time since the last event joins the figures whose ops run.
  void advance(std::int64_t to_ns);
  // Per figure, in RankBusy's order: compute, compute or recompute, busy.
  std::array<std::int64_t, 3> covered_ns_{};
  // The ops running of each set: compute, recompute, communication.
  std::array<std::uint32_t, 3> running_{};
  std::int64_t last_ns_ = 0;
};

}  // namespace eppsim
