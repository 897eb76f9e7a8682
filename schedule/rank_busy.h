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

#include "proto/trace.pb.h"

namespace eppsim {

// Which of the figures' sets an op joins: compute (and with it the second and
// third figure), recompute (the second and third), communication (the third).
// Less one, a set's value is the first figure it joins, and its count in
// RankBusyInTimeOrder. MEMORY and unspecified ops join none.
enum class BusySet : std::uint8_t { None = 0, Compute = 1, Recompute = 2, Communication = 3 };

constexpr BusySet busy_set(proto::OpKind kind, proto::Phase phase) {
  switch (kind) {
    case proto::COMPUTE: return phase == proto::RECOMPUTE ? BusySet::Recompute : BusySet::Compute;
    case proto::SEND:
    case proto::RECV:
    case proto::COLLECTIVE: return BusySet::Communication;
    default: return BusySet::None;
  }
}


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
  void start(proto::OpKind kind, proto::Phase phase, std::int64_t at_ns) { start(busy_set(kind, phase), at_ns); }
  void end(proto::OpKind kind, proto::Phase phase, std::int64_t at_ns) { end(busy_set(kind, phase), at_ns); }
  // The same, by the op's set (busy_set): inline, as an executor calls them
  // twice an op.
  void start(BusySet set, std::int64_t at_ns) {
    if (set == BusySet::None) return;
    advance(at_ns);
    ++running_[static_cast<std::size_t>(set) - 1];
  }
  void end(BusySet set, std::int64_t at_ns) {
    if (set == BusySet::None) return;
    advance(at_ns);
    std::uint32_t& running = running_[static_cast<std::size_t>(set) - 1];
    if (running == 0) throw_never_started(at_ns);
    --running;
  }
  proto::RankBusy figures(std::uint32_t rank) const;

 private:
  // The time since the last event joins the figures whose ops run: figure f
  // while an op of the sets joining it runs (BusySet).
  void advance(std::int64_t to_ns) {
    if (to_ns < last_ns_) throw_out_of_order(to_ns);
    const std::int64_t elapsed_ns = to_ns - last_ns_;
    // Figure f grows while an op of set f or of a set before it runs.
    const std::uint32_t compute = running_[0], computing = compute | running_[1], busy = computing | running_[2];
    covered_ns_[0] += compute != 0 ? elapsed_ns : 0;
    covered_ns_[1] += computing != 0 ? elapsed_ns : 0;
    covered_ns_[2] += busy != 0 ? elapsed_ns : 0;
    last_ns_ = to_ns;
  }
  [[noreturn]] void throw_out_of_order(std::int64_t at_ns) const;
  [[noreturn]] static void throw_never_started(std::int64_t at_ns);
  // Per figure, in RankBusy's order: compute, compute or recompute, busy.
  std::array<std::int64_t, 3> covered_ns_{};
  // The ops running of each set: compute, recompute, communication.
  std::array<std::uint32_t, 3> running_{};
  std::int64_t last_ns_ = 0;
};

}  // namespace eppsim
