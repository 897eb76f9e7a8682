#include "runtime/virtual_peers.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/index_list.h"
#include "schedule/program_ops.h"
#include "schedule/rank_busy.h"
#include "schedule/ranks_met.h"
#include "schedule/trace_events.h"

namespace eppsim::runtime {
namespace {

constexpr std::int64_t kNoEvent = -1;

bool contains(std::span<const std::uint32_t> ascending, std::uint32_t rank) {
  return std::binary_search(ascending.begin(), ascending.end(), rank);
}

// One rank's simulated events, by op index, and which ops of it have been
// matched with a real op already.
struct SimulatedRank {
  std::vector<std::int64_t> start_ns, end_ns;
  std::vector<bool> taken;
  // Ops by (start, end), in program order: a transfer's or collective's sides
  // share both, so this finds the side the simulation matched with a real op.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::uint32_t>> by_span;
};

class Reader {
 public:
  Reader(const proto::Schedule& schedule, const proto::Trace& simulated, std::string_view name)
      : schedule_(schedule), simulated_(simulated), name_(name) {}

  InputError error(std::string_view field, const std::string& rule) const {
    return InputError(fmt::format("{}: {}: {}", name_, field, rule));
  }

  void check_whole() const {
    if (simulated_.num_ranks() != schedule_.num_ranks()) {
      throw error("num_ranks", fmt::format("the simulation has {} ranks, the Schedule {}: simulate this Schedule",
                                           simulated_.num_ranks(), schedule_.num_ranks()));
    }
    if (simulated_.real_ranks_size() > 0) {
      throw error("real_ranks", "is a hybrid emulation's trace; the virtual ranks need the simulation of the whole "
                                "Schedule (eppsim sim)");
    }
    if (simulated_.calibration().empty()) {
      throw error("calibration", fmt::format("the {} trace was not priced by a calibration: virtual ranks are timed by a "
                                             "calibrated simulation of this machine (eppsim calibrate, then "
                                             "cost_model {{ calibration_file: ... }} and eppsim sim)",
                                             simulated_.engine().empty() ? "given" : simulated_.engine()));
    }
    if (simulated_.has_incomplete()) {
      throw error("incomplete", "the simulated step did not complete: its virtual ranks have no step to give");
    }
  }

  // Every rank in `ranks` must have its events listed.
  void check_listed(const std::vector<std::uint32_t>& ranks) const {
    if (simulated_.traced_ranks_size() == 0) return;
    std::vector<std::uint32_t> missing;
    for (const std::uint32_t r : ranks) {
      const auto& traced = simulated_.traced_ranks();
      if (!std::binary_search(traced.begin(), traced.end(), r)) missing.push_back(r);
    }
    if (missing.empty()) return;
    throw error("traced_ranks", fmt::format("holds no events of rank{} {}, which the real ranks meet; simulate with "
                                            "--trace-ranks {} (or all)",
                                            missing.size() == 1 ? "" : "s", format_index_list(missing),
                                            format_index_list(ranks)));
  }

  SimulatedRank& rank(std::uint32_t r) {
    auto [it, inserted] = ranks_.try_emplace(r);
    if (inserted) read(r, it->second);
    return it->second;
  }

 private:
  void read(std::uint32_t r, SimulatedRank& out) {
    const ProgramOps ops = ops_of(schedule_, r);
    out.start_ns.assign(ops.size(), kNoEvent);
    out.end_ns.assign(ops.size(), kNoEvent);
    out.taken.assign(ops.size(), false);
    if (events_by_rank_.empty()) index_events();
    for (const int i : events_by_rank_[r]) {
      const OpEventRef e = events_of(simulated_)[i];
      if (e.op() >= ops.size() || event_kind(ops[e.op()]) != e.kind()) {
        throw error("op_events", fmt::format("rank {} op {} is not the Schedule's (another Schedule's simulation?)", r,
                                             e.op()));
      }
      out.start_ns[e.op()] = e.start_ns();
      out.end_ns[e.op()] = e.end_ns();
    }
    for (std::uint32_t op = 0; op < ops.size(); ++op) {
      if (out.start_ns[op] == kNoEvent) {
        throw error("op_events", fmt::format("holds no event of rank {} op {}: a trace of the whole step is needed", r, op));
      }
      out.by_span[{out.start_ns[op], out.end_ns[op]}].push_back(op);
    }
  }

  void index_events() {
    events_by_rank_.resize(schedule_.num_ranks());
    const TraceEvents events = events_of(simulated_);
    for (int i = 0; i < events.size(); ++i) {
      const std::uint32_t r = events[i].rank();
      if (r >= schedule_.num_ranks()) {
        throw error("op_events", fmt::format("event {} is of rank {}, past the Schedule's {}", i, r, schedule_.num_ranks()));
      }
      events_by_rank_[r].push_back(i);
    }
  }

  const proto::Schedule& schedule_;
  const proto::Trace& simulated_;
  std::string name_;
  std::map<std::uint32_t, SimulatedRank> ranks_;
  std::vector<std::vector<int>> events_by_rank_;
};

// When op `op` of rank `r` became ready in the simulation: the latest end of
// the previous op on its stream and of its dependencies (0 for neither).
std::int64_t readiness_ns(const proto::Schedule& schedule, const SimulatedRank& simulated, std::uint32_t r,
                          std::uint32_t op) {
  const ProgramOps ops = ops_of(schedule, r);
  const OpView view = ops[op];
  std::int64_t ready = 0;
  for (std::uint32_t before = op; before-- > 0;) {
    if (ops[before].stream() == view.stream()) {
      ready = simulated.end_ns[before];
      break;
    }
  }
  for (const std::uint32_t dep : view.deps()) ready = std::max(ready, simulated.end_ns[dep]);
  return ready;
}

}  // namespace

VirtualPeers::VirtualPeers(const proto::Schedule& schedule, const proto::Trace& simulated,
                           std::span<const std::uint32_t> real_ranks, std::uint32_t rank, std::string_view simulated_name) {
  Reader reader(schedule, simulated, simulated_name);
  reader.check_whole();
  std::vector<std::uint32_t> needed = {rank};
  for (const std::uint32_t r : ranks_met(schedule, rank)) {
    if (!contains(real_ranks, r)) needed.push_back(r);
  }
  std::sort(needed.begin(), needed.end());
  reader.check_listed(needed);

  const ProgramOps ops = ops_of(schedule, rank);
  meetings_.resize(ops.size());
  const SimulatedRank& own = reader.rank(rank);
  // The virtual side of a real op: the first op of `peer` not matched yet with
  // the real op's simulated span that `fits`; its readiness.
  const auto virtual_side = [&](std::uint32_t peer, std::uint32_t op, auto fits) {
    SimulatedRank& other = reader.rank(peer);
    const auto it = other.by_span.find({own.start_ns[op], own.end_ns[op]});
    if (it != other.by_span.end()) {
      for (const std::uint32_t candidate : it->second) {
        if (other.taken[candidate] || !fits(ops_of(schedule, peer)[candidate])) continue;
        other.taken[candidate] = true;
        return readiness_ns(schedule, other, peer, candidate);
      }
    }
    throw reader.error("op_events", fmt::format("rank {} has no op that the simulation matched with rank {} op {}: the "
                                                "trace is of another Schedule",
                                                peer, rank, op));
  };
  for (const OpView op : ops) {
    std::int64_t ready_ns = std::numeric_limits<std::int64_t>::min();
    bool real_members_meet = false;
    if (op.is_send() || op.is_recv()) {
      if (contains(real_ranks, op.peer())) continue;
      const bool sends = op.is_send();
      ready_ns = virtual_side(op.peer(), op.index(), [&](OpView other) {
        return (sends ? other.is_recv() : other.is_send()) && other.peer() == rank && other.tag() == op.tag();
      });
    } else if (op.is_collective()) {
      std::size_t real_members = 0;
      for (const std::uint32_t member : schedule.groups(static_cast<int>(op.group())).ranks()) {
        if (contains(real_ranks, member)) {
          ++real_members;
          continue;
        }
        ready_ns = std::max(ready_ns, virtual_side(member, op.index(), [&](OpView other) {
                              return other.is_collective() && other.group() == op.group();
                            }));
      }
      if (ready_ns == std::numeric_limits<std::int64_t>::min()) continue;  // every member is real
      real_members_meet = real_members > 1;
    } else {
      continue;
    }
    meetings_[op.index()] = VirtualMeeting{real_members_meet, static_cast<double>(ready_ns) * 1e-9,
                                           static_cast<double>(own.end_ns[op.index()] - own.start_ns[op.index()]) * 1e-9};
    ++count_;
  }
}

void add_virtual_ranks(proto::Trace& hybrid, const proto::Trace& simulated, std::span<const std::uint32_t> real_ranks) {
  proto::OpEvents& columns = *hybrid.mutable_op_events();
  for (const OpEventRef e : events_of(simulated)) {
    if (!contains(real_ranks, e.rank())) add_event(columns, fields_of(e));
  }
  for (const auto& sample : simulated.memory()) {
    if (!contains(real_ranks, sample.rank())) *hybrid.add_memory() = sample;
  }
  hybrid.clear_real_ranks();
  for (const std::uint32_t r : real_ranks) hybrid.add_real_ranks(r);
  hybrid.set_num_ranks(simulated.num_ranks());
  if (simulated.traced_ranks_size() > 0) {
    std::vector<std::uint32_t> traced(real_ranks.begin(), real_ranks.end());
    traced.insert(traced.end(), simulated.traced_ranks().begin(), simulated.traced_ranks().end());
    std::sort(traced.begin(), traced.end());
    traced.erase(std::unique(traced.begin(), traced.end()), traced.end());
    hybrid.clear_traced_ranks();
    for (const std::uint32_t r : traced) hybrid.add_traced_ranks(r);
    // Every rank's busy figures: the real ranks' from their measured events.
    std::vector<RankBusyCounter> counters(real_ranks.size());
    for (const OpEventRef e : events_of(hybrid)) {
      const auto at = std::lower_bound(real_ranks.begin(), real_ranks.end(), e.rank());
      if (at != real_ranks.end() && *at == e.rank()) {
        counters[static_cast<std::size_t>(at - real_ranks.begin())].add(e.kind(), e.phase(), e.start_ns(), e.end_ns());
      }
    }
    hybrid.clear_busy();
    for (const auto& busy : simulated.busy()) {
      const auto at = std::lower_bound(real_ranks.begin(), real_ranks.end(), busy.rank());
      *hybrid.add_busy() = at != real_ranks.end() && *at == busy.rank()
                               ? counters[static_cast<std::size_t>(at - real_ranks.begin())].take(busy.rank())
                               : busy;
    }
  }
  // One clock from here: the earliest start is 0.
  std::int64_t start = std::numeric_limits<std::int64_t>::max(), end = std::numeric_limits<std::int64_t>::min();
  for (const OpEventRef e : events_of(hybrid)) {
    start = std::min(start, e.start_ns());
    end = std::max(end, e.end_ns());
  }
  if (start > end) start = end = 0;
  for (int i = 0; i < columns.start_ns_size(); ++i) {
    columns.set_start_ns(i, columns.start_ns(i) - start);
    columns.set_end_ns(i, columns.end_ns(i) - start);
  }
  for (auto& sample : *hybrid.mutable_memory()) sample.set_time_ns(sample.time_ns() - start);
  hybrid.set_step_time_ns(end - start);
}

}  // namespace eppsim::runtime
