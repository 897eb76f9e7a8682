#include "sim/engine/analytic_engine.h"

#include <queue>
#include <stdexcept>
#include <vector>

#include "traces/op_cost.h"

namespace eppsim {
namespace {

// Times the executor core's activities with a cost model; an event heap of
// completions advances time.
class AnalyticExecutor final : public ExecutorHooks {
 public:
  // `timer`, when given, prices COMPUTE ops not DURATION_FIXED instead of `cost`.
  AnalyticExecutor(const proto::Schedule& schedule, const CostModel& cost, const ComputeTimer* timer,
                   const AnalyticEngineOptions& options)
      : cost_(cost), timer_(timer), core_(schedule, *this, core_options(options)) {}

  proto::Trace run() {
    core_.start(0.0);
    while (!heap_.empty()) {
      const Completion c = heap_.top();
      heap_.pop();
      core_.finish(c.id, c.time_s);
    }
    if (!core_.all_done()) core_.throw_deadlock();
    return core_.trace("analytic");
  }

  void compute_ready(ActivityId id, OpRef ref, double now) override {
    const proto::Op& op = core_.op(ref);
    const Seconds duration = timer_ != nullptr && op.duration_source() != proto::DURATION_FIXED
                                 ? (*timer_)(op.compute())
                                 : compute_duration(cost_, op, segments_);
    schedule_completion(id, now + duration.value);
  }

  void transfer_ready(ActivityId id, OpRef send, OpRef recv, double now) override {
    schedule_completion(id, now + transfer_duration(cost_, core_.op(send), send.rank, recv.rank).value);
  }

  void collective_ready(ActivityId id, std::span<const OpRef> members, double now) override {
    const proto::Op& op = core_.op(members.front());
    schedule_completion(id, now + collective_duration(cost_, op, core_.group_ranks(op.collective().group())).value);
  }

 private:
  struct Completion {
    double time_s;
    std::uint64_t seq;
    ActivityId id;
    bool operator>(const Completion& o) const { return time_s != o.time_s ? time_s > o.time_s : seq > o.seq; }
  };

  static ExecutorOptions core_options(const AnalyticEngineOptions& options) {
    ExecutorOptions o;
    o.max_blocked_ops_reported = options.max_blocked_ops_reported;
    return o;
  }

  void schedule_completion(ActivityId id, double time_s) { heap_.push(Completion{time_s, seq_++, id}); }

  const CostModel& cost_;
  const ComputeTimer* timer_;
  ExecutorCore core_;
  std::vector<Segment> segments_;  // scratch for compute_duration
  std::uint64_t seq_ = 0;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<Completion>> heap_;
};

proto::CollectiveKind to_proto(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce: return proto::ALL_REDUCE;
    case CollectiveKind::AllGather: return proto::ALL_GATHER;
    case CollectiveKind::ReduceScatter: return proto::REDUCE_SCATTER;
    case CollectiveKind::AllToAll: return proto::ALL_TO_ALL;
    case CollectiveKind::Broadcast: return proto::BROADCAST;
  }
  return proto::COLLECTIVE_KIND_UNSPECIFIED;
}

proto::CollectiveAlgorithm to_proto(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::Ring: return proto::RING;
    case CollectiveAlgorithm::Tree: return proto::TREE;
    case CollectiveAlgorithm::Direct: return proto::DIRECT;
    case CollectiveAlgorithm::Hierarchical: return proto::HIERARCHICAL;
    case CollectiveAlgorithm::Auto: return proto::ALGORITHM_AUTO;
  }
  return proto::ALGORITHM_AUTO;
}

// The CostModel facade over a NetworkModel and, when given, a compute cost
// model; without one, compute is priced by the caller's ComputeTimer.
class CompatCostModel final : public CostModel {
 public:
  CompatCostModel(const NetworkModel& network, const ComputeCostModel* compute, BytesPerSecond hbm_bandwidth)
      : network_(network), compute_(compute), hbm_bandwidth_(hbm_bandwidth) {}

  Seconds compute_time(const ComputeWork& work) const override {
    if (compute_ == nullptr) throw std::logic_error("CompatCostModel: compute ops are priced by the ComputeTimer");
    return Seconds(compute_->cost(work.pass, work.chunk).time.value / static_cast<double>(work.shards));
  }
  Seconds optimizer_time(Bytes memory_traffic) const override {
    if (compute_ == nullptr) throw std::logic_error("CompatCostModel: compute ops are priced by the ComputeTimer");
    return transfer_time(memory_traffic, hbm_bandwidth_);
  }
  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const override {
    return network_.p2p_time(src_rank, dst_rank, size);
  }
  Seconds collective_time(CollectiveKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                          Bytes size) const override {
    return network_.collective_time(to_proto(kind), to_proto(algorithm), ranks, size);
  }

 private:
  const NetworkModel& network_;
  const ComputeCostModel* compute_;
  BytesPerSecond hbm_bandwidth_;
};

}  // namespace

proto::Trace run_analytic(const proto::Schedule& schedule, const CostModel& cost, const AnalyticEngineOptions& options) {
  return AnalyticExecutor(schedule, cost, nullptr, options).run();
}

proto::Trace run_analytic(const proto::Schedule& schedule, const NetworkModel& network, const ComputeTimer& timer,
                          const AnalyticEngineOptions& options) {
  const CompatCostModel cost(network, nullptr, BytesPerSecond(0.0));
  return AnalyticExecutor(schedule, cost, &timer, options).run();
}

std::unique_ptr<CostModel> compat_cost_model(const NetworkModel& network, const ComputeCostModel& compute,
                                             const GpuSpec& gpu) {
  return std::make_unique<CompatCostModel>(network, &compute, gpu.memory_bandwidth);
}

}  // namespace eppsim
