#include "sim/engine/analytic_engine.h"

#include <algorithm>
#include <array>
#include <limits>
#include <queue>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "models/progress.h"
#include "sim/engine/endpoint_sharing.h"
#include "traces/executor/op_prefetch.h"
#include "traces/executor/step_incomplete.h"
#include "traces/op_cost.h"

namespace eppsim {
namespace {

// A rank's ports: rank * kPortsPerRank + one of these.
enum PortKind : PortId { kNvlinkEgress = 0, kNvlinkIngress = 1, kNicEgress = 2, kNicIngress = 3, kPortsPerRank = 4 };

constexpr FlowId kNoFlow = std::numeric_limits<FlowId>::max();

// Times the executor core's activities with a cost model; communication shares
// its endpoints (EndpointSharing); an event heap of completions advances time.
class AnalyticExecutor final : public ExecutorHooks {
 public:
  AnalyticExecutor(const proto::Schedule& schedule, const CostModel& cost, const AnalyticEngineOptions& options)
      : cost_(cost),
        options_(options),
        core_(schedule, *this, core_options(options)),
        sharing_(options.share_endpoints ? std::size_t{schedule.num_ranks()} * kPortsPerRank : 0),
        group_ports_(options.share_endpoints ? 2 * static_cast<std::size_t>(schedule.groups_size()) : 0),
        group_ports_built_(group_ports_.size(), false) {
    if (!options.node_of_rank.empty() && options.node_of_rank.size() < schedule.num_ranks()) {
      throw std::invalid_argument(fmt::format("run_analytic: node_of_rank has {} entries for {} ranks",
                                              options.node_of_rank.size(), schedule.num_ranks()));
    }
    price(schedule);
  }

  proto::Trace run() {
    double now = 0.0;
    core_.start(now);
    progress::ProgressLine line("simulating");
    const FaultPlan empty;
    const FaultPlan& faults = options_.faults != nullptr ? *options_.faults : empty;
    std::size_t next_fault = 0, next_endpoint = 0;
    const EngineFault* fatal = nullptr;
    constexpr double kNever = std::numeric_limits<double>::infinity();
    for (;;) {
      // Rates change only between instants: once every event of this instant
      // is handled, the flows started or ended in it get their new rates.
      if (sharing_.pending() && (heap_.empty() || heap_.top().time_s > now)) {
        sharing_.update(now, [&](FlowId flow, double finish_s) {
          if (finish_s == kNever) return;  // on a dead port: it never ends
          heap_.push(Completion{finish_s, seq_++, flow_activity_[flow], flow, sharing_.version(flow)});
        });
      }
      // The next fault strikes after every completion of its instant and
      // before anything later; once the step is done, none strikes.
      const double fault_s =
          std::min(next_fault < faults.faults().size() ? faults.faults()[next_fault].at_s : kNever,
                   next_endpoint < faults.endpoint_changes().size() ? faults.endpoint_changes()[next_endpoint].at_s : kNever);
      if (!core_.all_done() && fault_s < (heap_.empty() ? kNever : heap_.top().time_s)) {
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
        continue;
      }
      if (heap_.empty()) break;
      const Completion c = heap_.top();
      heap_.pop();
      if (c.flow != kNoFlow) {
        if (sharing_.version(c.flow) != c.version) continue;  // its rate changed since
        sharing_.remove(c.flow, c.time_s);
      }
      now = c.time_s;
      last_end_s_ = now;
      core_.finish(c.id, now);
      try {
        line.update([&] {
          const double done = static_cast<double>(core_.ops_done());
          return fmt::format("{:.3f} s simulated, {:.0f} of {} ops, {:.2f} M ops/s", now, done, core_.ops_total(),
                             done / std::max(line.elapsed_s(), 1e-9) / 1e6);
        });
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
    return core_.trace("analytic");
  }

  void compute_ready(ActivityId id, OpRef ref, double now) override {
    const double duration_s = price_[index(ref)].duration_s;
    schedule_completion(id, now + (options_.faults != nullptr ? options_.faults->compute_time_s(ref.rank, now, duration_s)
                                                              : duration_s));
  }

  void transfer_ready(ActivityId id, OpRef send, OpRef recv, double now) override {
    const Price& p = price_[index(send)];
    if (!p.shares || send.rank == recv.rank) return schedule_completion(id, now + p.duration_s);
    const bool nic = node_of(send.rank) != node_of(recv.rank);
    const std::array<PortId, 2> ports{port(send.rank, nic ? kNicEgress : kNvlinkEgress),
                                      port(recv.rank, nic ? kNicIngress : kNvlinkIngress)};
    start_flow(id, ports, p.duration_s, now);
  }

  void collective_ready(ActivityId id, std::span<const OpRef> members, double now) override {
    const Price& p = price_[index(members.front())];
    if (!p.shares || members.size() < 2) return schedule_completion(id, now + p.duration_s);
    start_flow(id, ports_of_group(p.group, p.hierarchical), p.duration_s, now);
  }

 private:
  struct Completion {
    double time_s;
    std::uint64_t seq;
    ActivityId id;
    FlowId flow;  // kNoFlow: not shared
    std::uint32_t version;
    bool operator>(const Completion& o) const { return time_s != o.time_s ? time_s > o.time_s : seq > o.seq; }
  };

  // What the hooks need of an op, read from the Schedule in one pass in program
  // order before the run: the hooks are called in time order, which jumps
  // across ranks, and reading the ops' messages then costs a cache miss each.
  struct Price {
    double duration_s = 0.0;  // the cost model's uncontended time
    bool shares = false;      // see shares()
    bool hierarchical = false;
    std::uint32_t group = 0;  // COLLECTIVE
  };

  // Prices every COMPUTE and SEND op, and every COLLECTIVE op of the first
  // rank of its group (collective_ready's members.front()), as the hooks would.
  void price(const proto::Schedule& schedule) {
    rank_offset_.assign(std::size_t{schedule.num_ranks()} + 1, 0);
    for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
      rank_offset_[r + 1] = rank_offset_[r] + static_cast<std::uint32_t>(schedule.programs(static_cast<int>(r)).ops_size());
    }
    price_.resize(rank_offset_.back());
    std::vector<Segment> segments;
    for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
      const auto& program = schedule.programs(static_cast<int>(r)).ops();
      for (int i = 0; i < program.size(); ++i) {
        prefetch_ops(program, i);
        const proto::Op& op = program[i];
        Price& p = price_[rank_offset_[r] + static_cast<std::uint32_t>(i)];
        switch (op.kind_case()) {
          case proto::Op::kCompute: p.duration_s = compute_duration(cost_, op, segments).value; break;
          case proto::Op::kSend: p.duration_s = transfer_duration(cost_, op, r, op.send().peer()).value; break;
          case proto::Op::kCollective: {
            p.group = op.collective().group();
            p.hierarchical = op.collective().algorithm() == proto::HIERARCHICAL;
            const auto ranks = core_.group_ranks(p.group);
            if (ranks.front() != r) continue;
            p.duration_s = collective_duration(cost_, op, ranks).value;
            break;
          }
          default: continue;
        }
        p.shares = shares(op, p.duration_s);
      }
    }
  }

  std::uint32_t index(OpRef ref) const { return rank_offset_[ref.rank] + ref.op; }

  static ExecutorOptions core_options(const AnalyticEngineOptions& options) {
    ExecutorOptions o;
    o.max_blocked_ops_reported = options.max_blocked_ops_reported;
    return o;
  }

  // Whether the op's time is shared with others: measured (fixed) times and
  // free communication are not.
  bool shares(const proto::Op& op, double duration_s) const {
    return options_.share_endpoints && op.duration_source() != proto::DURATION_FIXED && duration_s > 0.0;
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
    const auto ranks = core_.group_ranks(group);
    std::vector<std::uint32_t> nodes;
    for (const std::uint32_t r : ranks) nodes.push_back(node_of(r));
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

  void start_flow(ActivityId id, std::span<const PortId> ports, double duration_s, double now) {
    const FlowId flow = sharing_.add(ports, duration_s, now);
    if (flow >= flow_activity_.size()) flow_activity_.resize(flow + 1);
    flow_activity_[flow] = id;
  }

  void schedule_completion(ActivityId id, double time_s) { heap_.push(Completion{time_s, seq_++, id, kNoFlow, 0}); }

  const CostModel& cost_;
  const AnalyticEngineOptions& options_;
  ExecutorCore core_;
  EndpointSharing sharing_;
  std::vector<std::vector<PortId>> group_ports_;  // [2 * group + nvlink_too]
  std::vector<bool> group_ports_built_;
  std::vector<ActivityId> flow_activity_;  // the activity each running flow times
  std::vector<std::uint32_t> rank_offset_;  // ranks + 1: a rank's first op in price_
  std::vector<Price> price_;               // per op of the Schedule
  std::uint64_t seq_ = 0;
  double last_end_s_ = 0.0;  // when the last activity ended
  std::priority_queue<Completion, std::vector<Completion>, std::greater<Completion>> heap_;
};

}  // namespace

proto::Trace run_analytic(const proto::Schedule& schedule, const CostModel& cost, const AnalyticEngineOptions& options) {
  return AnalyticExecutor(schedule, cost, options).run();
}

}  // namespace eppsim
