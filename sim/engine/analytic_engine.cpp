#include "sim/engine/analytic_engine.h"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "models/progress.h"
#include "traces/op_cost.h"

namespace eppsim {
namespace {

// Times the executor core's activities with a cost model; an event heap of
// completions advances time.
class AnalyticExecutor final : public ExecutorHooks {
 public:
  AnalyticExecutor(const proto::Schedule& schedule, const CostModel& cost, const AnalyticEngineOptions& options)
      : cost_(cost), core_(schedule, *this, core_options(options)) {}

  proto::Trace run() {
    core_.start(0.0);
    progress::ProgressLine line("simulating");
    while (!heap_.empty()) {
      const Completion c = heap_.top();
      heap_.pop();
      core_.finish(c.id, c.time_s);
      line.update([&] {
        const double done = static_cast<double>(core_.ops_done());
        return fmt::format("{:.3f} s simulated, {:.0f} of {} ops, {:.2f} M ops/s", c.time_s, done, core_.ops_total(),
                           done / std::max(line.elapsed_s(), 1e-9) / 1e6);
      });
    }
    if (!core_.all_done()) core_.throw_deadlock();
    return core_.trace("analytic");
  }

  void compute_ready(ActivityId id, OpRef ref, double now) override {
    const proto::Op& op = core_.op(ref);
    const Seconds duration = compute_duration(cost_, op, segments_);
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
  ExecutorCore core_;
  std::vector<Segment> segments_;  // scratch for compute_duration
  std::uint64_t seq_ = 0;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<Completion>> heap_;
};

}  // namespace

proto::Trace run_analytic(const proto::Schedule& schedule, const CostModel& cost, const AnalyticEngineOptions& options) {
  return AnalyticExecutor(schedule, cost, options).run();
}

}  // namespace eppsim
