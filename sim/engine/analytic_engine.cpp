#include "sim/engine/analytic_engine.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/log.h"
#include "base/peak_rss.h"
#include "base/progress.h"
#include "sim/engine/endpoint_sharing.h"
#include "sim/engine/engine_core.h"
#include "sim/engine/interference_tracker.h"
#include "sim/engine/op_prices.h"
#include "sim/engine/radix_heap.h"
#include "schedule/executor/step_incomplete.h"

namespace eppsim {
namespace {

// A rank's ports: rank * kPortsPerRank + one of these.
enum PortKind : PortId { kNvlinkEgress = 0, kNvlinkIngress = 1, kNicEgress = 2, kNicIngress = 3, kPortsPerRank = 4 };

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

constexpr FlowId kNoFlow = std::numeric_limits<FlowId>::max();
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// Times the executor core's activities with a cost model; communication shares
// its endpoints (EndpointSharing); an event heap of completions advances time.
class AnalyticExecutor final : public GlobalExecutorHooks, public ComputeChainHooks {
 public:
  // `started`: when the run began, for the phase times logged at debug level.
  AnalyticExecutor(const proto::Schedule& schedule, const CostModel& cost, const AnalyticEngineOptions& options,
                   Clock::time_point started)
      : started_(started),
        options_(options),
        prices_(std::in_place, schedule, cost),
        core_(schedule, *this, core_options(options)),
        sharing_(options.share_endpoints ? std::size_t{schedule.num_ranks()} * kPortsPerRank : 0),
        group_ports_(options.share_endpoints ? 2 * static_cast<std::size_t>(schedule.groups_size()) : 0),
        group_ports_built_(group_ports_.size(), false),
        interference_(options.interference.enabled),
        interference_ranks_(interference_ ? schedule.num_ranks() : 0),
        tracker_(options.interference, interference_ ? schedule.num_ranks() : 0),
        group_traffic_(interference_ ? static_cast<std::size_t>(schedule.groups_size()) : 0, kUnknownTraffic) {
    if (!options.node_of_rank.empty() && options.node_of_rank.size() < schedule.num_ranks()) {
      throw std::invalid_argument(fmt::format("run_analytic: node_of_rank has {} entries for {} ranks",
                                              options.node_of_rank.size(), schedule.num_ranks()));
    }
    prices_->release_pricing_tables();
    compiled_ = Clock::now();
    compiled_rss_ = peak_rss_bytes();
  }

  proto::Trace run() {
    logging::debug("engine.analytic", "{} ops validated and priced in {:.3f} s: the event loop starts",
                   core_.ops_total(), seconds_between(started_, compiled_));
    double now = 0.0;
    core_.start(now);
    progress::ProgressLine line("simulating");
    const FaultPlan empty;
    const FaultPlan& faults = options_.faults != nullptr ? *options_.faults : empty;
    std::size_t next_fault = 0, next_endpoint = 0;
    const EngineFault* fatal = nullptr;
    constexpr double kNever = std::numeric_limits<double>::infinity();
    // When the next fault or endpoint change strikes (kNever: none is left).
    const auto next_fault_s = [&] {
      return std::min(
          next_fault < faults.faults().size() ? faults.faults()[next_fault].at_s : kNever,
          next_endpoint < faults.endpoint_changes().size() ? faults.endpoint_changes()[next_endpoint].at_s : kNever);
    };
    double fault_s = next_fault_s();
    for (;;) {
      // Rates change only between instants: once every event of this instant
      // is handled, the flows started or ended in it get their new rates.
      if ((sharing_.pending() || interference_pending()) && (heap_.empty() || heap_.top().time_s > now)) {
        if (interference_pending()) update_interference(now);
        sharing_.update(now, [&](FlowId flow, double finish_s) {
          if (finish_s == kNever) return;  // on a dead port: it never ends
          heap_.push(Completion{finish_s, flow_activity_[flow], flow, sharing_.version(flow), kNone});
        });
      }
      // The next fault strikes after every completion of its instant and
      // before anything later; once the step is done, none strikes.
      if (fault_s < (heap_.empty() ? kNever : heap_.top().time_s) && !core_.all_done()) {
        now = fault_s;
        for (; next_endpoint < faults.endpoint_changes().size() && faults.endpoint_changes()[next_endpoint].at_s <= now;
             ++next_endpoint) {
          const EndpointCapacity& e = faults.endpoint_changes()[next_endpoint];
          if (!options_.share_endpoints) continue;
          sharing_.set_capacity(port(e.rank, e.nic ? kNicEgress : kNvlinkEgress), e.capacity);
          sharing_.set_capacity(port(e.rank, e.nic ? kNicIngress : kNvlinkIngress), e.capacity);
        }
        for (; next_fault < faults.faults().size() && faults.faults()[next_fault].at_s <= now; ++next_fault) {
          if (faults.faults()[next_fault].fatal && fatal == nullptr) fatal = &faults.faults()[next_fault];
        }
        if (fatal != nullptr) break;
        fault_s = next_fault_s();
        continue;
      }
      if (heap_.empty()) break;
      const Completion c = heap_.top();
      heap_.pop();
      ++events_;
      if (c.flow != kNoFlow) {
        if (sharing_.version(c.flow) != c.version) continue;  // its rate changed since
        sharing_.remove(c.flow, c.time_s);
      } else if (c.rated != kNone && rated_[c.rated].version != c.version) {
        continue;  // its rate changed since
      }
      now = c.time_s;
      if (!heap_.empty()) core_.prefetch(heap_.top().id);
      if (interference_) end_interference(c.id, c.rated);
      last_end_s_ = now;
      core_.finish(c.id, now);
      try {
        line.update([&] { return simulation_progress(core_, now, line.elapsed_s()); });
      } catch (...) {
        rethrow_keeping_partial_trace(std::current_exception(), core_, "analytic");
      }
    }
    if (fatal != nullptr) {
      proto::Trace trace = core_.trace("analytic");
      mark_incomplete(trace, fatal->at_s, fatal->reason, core_);
      return trace;
    }
    if (!core_.all_done()) {
      // The last op ended at `last_end_s_`; a stalled transfer never ends.
      const std::string reason = stall_reason(faults, last_end_s_);
      if (reason.empty()) core_.throw_deadlock();
      proto::Trace trace = core_.trace("analytic");
      mark_incomplete(trace, last_end_s_, reason, core_);
      return trace;
    }
    // The step is done: what timed it is not needed for its trace.
    const Clock::time_point simulated = Clock::now();
    const double simulated_rss = peak_rss_bytes();
    prices_.reset();
    std::vector<ActivityId>().swap(flow_activity_);
    std::vector<std::vector<PortId>>().swap(group_ports_);
    proto::Trace trace = core_.take_trace("analytic");
    log_phases(simulated, simulated_rss, Clock::now());
    return trace;
  }

  void compute_ready(ActivityId id, OpRef ref, double now) override {
    const Price p = price(ref);
    const double duration_s = p.duration_s;
    if (interferes(p)) return start_compute(id, ref.rank, duration_s, now);
    schedule_completion(id, now + (options_.faults != nullptr ? options_.faults->compute_time_s(ref.rank, now, duration_s)
                                                              : duration_s));
  }

  // Without faults or interference (core_options): each op ends when the one
  // before it does plus its own duration, added op by op as one event after
  // another would.
  void compute_chain_ready(ActivityId id, std::span<const OpRef> ops, double now) override {
    double end_s = now;
    for (const OpRef ref : ops) end_s += prices_->of(core_.executor_word(ref)).duration_s;
    schedule_completion(id, end_s);
  }

  void transfer_ready(ActivityId id, OpRef send, OpRef recv, double now) override {
    const Price p = price(send);
    FlowId flow = kNoFlow;
    if (p.shares && send.rank != recv.rank) {
      const bool nic = node_of(send.rank) != node_of(recv.rank);
      const std::array<PortId, 2> ports{port(send.rank, nic ? kNicEgress : kNvlinkEgress),
                                        port(recv.rank, nic ? kNicIngress : kNvlinkIngress)};
      flow = start_flow(id, ports, p.duration_s, now);
    }
    if (interferes(p)) {
      const std::array<std::uint32_t, 2> ranks{send.rank, recv.rank};
      const std::span<const std::uint32_t> endpoints(ranks.data(), send.rank == recv.rank ? 1 : 2);
      return start_comm(id, TrafficClass::PointToPoint, bytes_of(send), endpoints, flow, p.duration_s, now);
    }
    if (flow == kNoFlow) schedule_completion(id, now + p.duration_s);
  }

  void collective_ready(ActivityId id, std::span<const OpRef> members, double now) override {
    const Price p = price(members.front());
    FlowId flow = kNoFlow;
    if (p.shares && members.size() >= 2) {
      flow = start_flow(id, ports_of_group(p.group, p.hierarchical), p.duration_s, now, p.latency_s);
    }
    if (interferes(p)) {
      return start_comm(id, traffic_of_group(p.group), bytes_of(members.front()), core_.group_ranks(p.group), flow,
                        p.duration_s, now);
    }
    if (flow == kNoFlow) schedule_completion(id, now + p.duration_s);
  }

 private:
  // Taken from the heap earliest first, then first pushed (RadixHeap).
  struct Completion {
    double time_s;
    ActivityId id;
    FlowId flow;  // kNoFlow: not shared
    std::uint32_t version;
    std::uint32_t rated;  // kNone: not in rated_
  };

  // What the hooks need of an op: its price, and whether it shares endpoints
  // (neither fixed, as measured durations are, nor free).
  struct Price : OpPrices::Price {
    bool shares = false;
  };
  // The op's size_bytes, which interference factors depend on.
  double bytes_of(OpRef ref) const { return static_cast<double>(core_.op(ref).size_bytes()); }
  Price price(OpRef ref) const {
    Price p{prices_->of(core_.executor_word(ref))};
    p.shares = options_.share_endpoints && !p.fixed && p.duration_s > 0.0;
    return p;
  }

  // Where a run's wall time went (eppsim --log engine.analytic:debug): the
  // executor core's validation and flat arrays with every op's price, the
  // event loop, and building the trace; and the process's peak resident set
  // at the end of each.
  void log_phases(Clock::time_point simulated, double simulated_rss, Clock::time_point traced) const {
    const double ops = static_cast<double>(core_.ops_total());
    const double loop_s = seconds_between(compiled_, simulated);
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    logging::debug("engine.analytic",
                   "{:.0f} ops: validation, flat arrays and pricing {:.3f} s (peak RSS {:.2f} GiB), event "
                   "loop {:.3f} s ({} events at {} instants, {:.2f} M ops/s, peak RSS {:.2f} GiB), trace {:.3f} s "
                   "(peak RSS {:.2f} GiB); {:.2f} M ops/s in all",
                   ops, seconds_between(started_, compiled_), compiled_rss_ / kGiB,
                   loop_s, events_, heap_.times_opened(), ops / std::max(loop_s, 1e-9) / 1e6, simulated_rss / kGiB,
                   seconds_between(simulated, traced), peak_rss_bytes() / kGiB, ops / std::max(seconds_between(started_, traced), 1e-9) / 1e6);
  }

  // The core keeps each op's price as its executor word, priced as it compiles each rank.
  ExecutorOptions core_options(const AnalyticEngineOptions& options) {
    ExecutorOptions o = simulated_core_options(options.max_blocked_ops_reported, options.trace);
    o.executor_words = [this](std::uint32_t rank, std::span<std::uint32_t> words) { prices_->price_rank(rank, words); };
    // A compute op's duration is known when it starts unless faults or
    // interference change its rate as it runs.
    const bool chains = !options.trace.op_events && options.faults == nullptr && !options.interference.enabled;
    o.compute_chains = chains ? this : nullptr;
    return o;
  }


  std::uint32_t node_of(std::uint32_t rank) const {
    return options_.node_of_rank.empty() ? rank : options_.node_of_rank[rank];
  }
  static PortId port(std::uint32_t rank, PortKind kind) { return rank * kPortsPerRank + kind; }

  // The ports a collective over `group` uses (analytic_engine.h), built once
  // per group and variant.
  std::span<const PortId> ports_of_group(std::uint32_t group, bool nvlink_too) {
    const std::size_t slot = 2 * std::size_t{group} + (nvlink_too ? 1 : 0);
    std::vector<PortId>& ports = group_ports_[slot];
    if (group_ports_built_[slot]) return ports;
    group_ports_built_[slot] = true;
    // The nodes of every member; the ports of those that run their own
    // programs (a replica simulated through another's has the same flows at
    // its ports as that one, so the shares there are the same).
    const auto ranks = core_.group_ranks(group);
    std::vector<std::uint32_t> nodes;
    for (const std::uint32_t r : core_.schedule().groups(static_cast<int>(group)).ranks()) nodes.push_back(node_of(r));
    std::sort(nodes.begin(), nodes.end());
    const bool spans = nodes.front() != nodes.back();
    for (const std::uint32_t r : ranks) {
      const auto [lo, hi] = std::equal_range(nodes.begin(), nodes.end(), node_of(r));
      const bool shares_node = hi - lo > 1;
      if (!spans || (nvlink_too && shares_node)) {
        ports.push_back(port(r, kNvlinkEgress));
        ports.push_back(port(r, kNvlinkIngress));
      }
      if (spans) {
        ports.push_back(port(r, kNicEgress));
        ports.push_back(port(r, kNicIngress));
      }
    }
    return ports;
  }

  FlowId start_flow(ActivityId id, std::span<const PortId> ports, double duration_s, double now, double latency_s = 0.0) {
    const FlowId flow = sharing_.add(ports, duration_s, now, latency_s);
    if (flow >= flow_activity_.size()) flow_activity_.resize(flow + 1);
    flow_activity_[flow] = id;
    return flow;
  }

  void schedule_completion(ActivityId id, double time_s) {
    heap_.push(Completion{time_s, id, kNoFlow, 0, kNone});
  }

  // Interference (analytic_engine.h): which ops take part, and their bookkeeping.
  bool interferes(const Price& p) const { return interference_ && !p.fixed && p.duration_s > 0.0; }
  bool interference_pending() const { return tracker_.pending(); }

  TrafficClass traffic_of_group(std::uint32_t group) {
    std::uint8_t& traffic = group_traffic_[group];
    if (traffic == kUnknownTraffic) {
      // Every member, those of replicas simulated through another's too.
      const auto& ranks = core_.schedule().groups(static_cast<int>(group)).ranks();
      bool spans = false;
      for (const std::uint32_t r : ranks) spans = spans || node_of(r) != node_of(ranks[0]);
      traffic = static_cast<std::uint8_t>(spans ? TrafficClass::InterNodeCollective : TrafficClass::IntraNodeCollective);
    }
    return static_cast<TrafficClass>(traffic);
  }

  std::uint32_t new_rated(ActivityId id, std::uint32_t rank, std::uint32_t comm, double duration_s, double now) {
    std::uint32_t slot;
    if (!free_rated_.empty()) {
      slot = free_rated_.back();
      free_rated_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(rated_.size());
      rated_.emplace_back();
    }
    Rated& a = rated_[slot];
    a.id = id;
    a.rank = rank;
    a.comm = comm;
    a.remaining_s = duration_s;
    a.updated_s = now;
    a.slowdown = 0.0;  // timed by the next update_interference
    return slot;
  }

  void start_compute(ActivityId id, std::uint32_t rank, double duration_s, double now) {
    interference_ranks_[rank].push_back(new_rated(id, rank, kNone, duration_s, now));
    tracker_.compute_started(rank);
  }

  void start_comm(ActivityId id, TrafficClass traffic, double bytes, std::span<const std::uint32_t> ranks, FlowId flow,
                  double duration_s, double now) {
    const InterferenceTracker::CommId c = tracker_.comm_started(traffic, bytes, ranks);
    if (c >= comm_timing_.size()) comm_timing_.resize(std::size_t{c} + 1);
    comm_timing_[c] = CommTiming{flow, flow == kNoFlow ? new_rated(id, ranks.front(), c, duration_s, now) : kNone};
    if (id >= comm_of_activity_.size()) comm_of_activity_.resize(std::size_t{id} + 1, kNone);
    comm_of_activity_[id] = c;
  }

  // The activity `id` (rated slot `rated`, or kNone) ended: it leaves its ranks.
  void end_interference(ActivityId id, std::uint32_t rated) {
    if (rated != kNone && rated_[rated].comm == kNone) {
      const std::uint32_t rank = rated_[rated].rank;
      auto& list = interference_ranks_[rank];
      *std::find(list.begin(), list.end(), rated) = list.back();
      list.pop_back();
      free_rated_.push_back(rated);
      tracker_.compute_ended(rank);
      return;
    }
    if (id >= comm_of_activity_.size() || comm_of_activity_[id] == kNone) return;
    const std::uint32_t c = comm_of_activity_[id];
    comm_of_activity_[id] = kNone;
    if (comm_timing_[c].rated != kNone) free_rated_.push_back(comm_timing_[c].rated);
    tracker_.comm_ended(c);
  }

  // Gives every compute op on a rank whose communication changed, and every
  // communication whose ranks started or stopped computing, its new rate.
  void update_interference(double now) {
    tracker_.update(
        [&](std::uint32_t rank, double slowdown) {
          for (const std::uint32_t a : interference_ranks_[rank]) retime(a, slowdown, now);
        },
        [&](InterferenceTracker::CommId c, double slowdown) {
          if (comm_timing_[c].flow != kNoFlow) {
            sharing_.set_slowdown(comm_timing_[c].flow, slowdown, now);
          } else {
            retime(comm_timing_[c].rated, slowdown, now);
          }
        });
  }

  // The rated activity `slot` runs at 1 / `slowdown` from `now` on: its work
  // so far is counted at its old rate, its completion re-timed.
  void retime(std::uint32_t slot, double slowdown, double now) {
    Rated& a = rated_[slot];
    if (a.slowdown == slowdown) return;
    const bool compute = a.comm == kNone;
    const FaultPlan* faults = compute ? options_.faults : nullptr;
    if (a.slowdown > 0.0) {
      const double done_s = faults != nullptr ? faults->compute_work_s(a.rank, a.updated_s, now) : now - a.updated_s;
      a.remaining_s = std::max(0.0, a.remaining_s - done_s / a.slowdown);
    }
    a.updated_s = now;
    a.slowdown = slowdown;
    const double work_s = slowdown * a.remaining_s;
    ++a.version;
    heap_.push(Completion{now + (faults != nullptr ? faults->compute_time_s(a.rank, now, work_s) : work_s), a.id, kNoFlow,
                          a.version, slot});
  }

  const Clock::time_point started_;
  Clock::time_point compiled_;
  double compiled_rss_ = 0.0;
  const AnalyticEngineOptions& options_;
  std::optional<OpPrices> prices_;  // from construction until the step is done
  ExecutorCore core_;
  EndpointSharing sharing_;
  std::vector<std::vector<PortId>> group_ports_;  // [2 * group + nvlink_too]
  std::vector<bool> group_ports_built_;
  std::vector<ActivityId> flow_activity_;  // the activity each running flow times

  // Interference (options.interference.enabled; all empty without it).
  // A compute op, or a communication that shares no ports, timed by its work
  // left at full speed and its slowdown.
  struct Rated {
    ActivityId id = 0;
    std::uint32_t rank = 0;     // compute: its rank
    std::uint32_t comm = kNone;  // communication: its tracker id; kNone: compute
    double remaining_s = 0.0;   // work left at full speed as of updated_s
    double updated_s = 0.0;
    double slowdown = 0.0;      // 0: not timed yet
    std::uint32_t version = 0;
  };
  // How a communication in flight (by its tracker id) is timed: sharing
  // ports (`flow`), or alone (`rated`).
  struct CommTiming {
    FlowId flow = kNoFlow;
    std::uint32_t rated = kNone;
  };
  static constexpr std::uint8_t kUnknownTraffic = 0xff;
  bool interference_;
  std::vector<std::vector<std::uint32_t>> interference_ranks_;  // rated_ slots of each rank's compute ops running
  InterferenceTracker tracker_;
  std::vector<std::uint8_t> group_traffic_;  // TrafficClass per group, built on first use
  std::vector<Rated> rated_;
  std::vector<std::uint32_t> free_rated_;
  std::vector<CommTiming> comm_timing_;
  std::vector<std::uint32_t> comm_of_activity_;  // its tracker id; kNone: none
  std::uint64_t events_ = 0;  // completions taken from the heap, stale ones too
  double last_end_s_ = 0.0;  // when the last activity ended
  RadixHeap<Completion> heap_;
};

}  // namespace

proto::Trace run_analytic(const proto::Schedule& schedule, const CostModel& cost, const AnalyticEngineOptions& options) {
  return AnalyticExecutor(schedule, cost, options, Clock::now()).run();
}

}  // namespace eppsim
