#include "runtime/rank_executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "runtime/comm_plan.h"
#include "runtime/fault_signals.h"
#include "schedule/shared_compute.h"

namespace eppsim::runtime {

double poll_interval_beside_compute_s(const RankExecutorOptions& options, bool compute_shares_core,
                                      std::uint32_t quiet_polls) {
  const double first_s = options.poll_interval_beside_compute_s;
  if (!compute_shares_core) return first_s;
  const double most_s = std::max(first_s, options.poll_interval_beside_compute_max_s);
  return std::min(most_s, std::ldexp(first_s, static_cast<int>(std::min<std::uint32_t>(quiet_polls, 30))));
}

RankExecutor::RankExecutor(const proto::Schedule& schedule, std::uint32_t rank, ComputeQueue& compute, CommEngine& comm,
                           const StepClock& clock, RankExecutorOptions options)
    : schedule_(schedule), rank_(rank), compute_(compute), comm_(comm), clock_(clock), options_(std::move(options)) {
  if (rank >= schedule.num_ranks()) {
    throw std::invalid_argument(fmt::format("RankExecutor: rank {} of a {}-rank schedule", rank, schedule.num_ranks()));
  }
  const auto sizes = group_sizes(schedule);
  const ProgramOps ops = ops_of(schedule, rank);
  plans_.resize(ops.size());
  descriptions_.resize(ops.size());
  for (const OpView op : ops) {
    if (op.is_compute()) plans_[op.index()] = plan_kernels(schedule.header().model(), compute_of(schedule, op), sizes);
    descriptions_[op.index()] = describe_op(schedule, {rank, op.index()});
  }
}

RankExecutor::~RankExecutor() = default;

void RankExecutor::started(ActivityId id, OpRef op, double now) {
  outstanding_.push_back({id, op, now});
  publish_in_flight();
  if (options_.on_op_started) options_.on_op_started(op);
}

void RankExecutor::publish_in_flight() const { set_ops_in_flight(in_flight()); }

std::string RankExecutor::in_flight() const {
  if (outstanding_.empty()) return "no op";
  std::string text;
  for (const auto& o : outstanding_) {
    if (!text.empty()) text += "; ";
    text += descriptions_[o.op.op];
    if (text.size() > 1024) break;  // the crash handler's buffer holds about this much
  }
  return text;
}

void RankExecutor::compute_ready(ActivityId id, OpRef op, double now) {
  started(id, op, now);
  compute_.submit(id, ops_of(schedule_, op.rank)[op.op].stream(), plans_[op.op]);
}

void RankExecutor::communication_ready(ActivityId id, OpRef op, double now) {
  started(id, op, now);
  comm_.start(id, op);
}

void RankExecutor::check_timeouts(double now) const {
  for (const auto& o : outstanding_) {
    if (now - o.start_s <= options_.timeout_s) continue;
    const bool compute = ops_of(schedule_, o.op.rank)[o.op.op].is_compute();
    throw OpTimeout(fmt::format("{}: {} within the timeout of {} s (started {:.3f} s into the step)",
                                descriptions_[o.op.op],
                                compute ? "its kernels did not finish" : "its peers did not answer", options_.timeout_s,
                                o.start_s));
  }
}

// Reports completions to the core in the order they ended. Communication is
// polled before compute, so every completion of a later poll ends after every
// one reported now and the core's time never goes back.
void RankExecutor::finished(const std::vector<Completion>& done) {
  for (const auto& c : done) {
    const auto it = std::find_if(outstanding_.begin(), outstanding_.end(), [&](const Outstanding& o) { return o.id == c.id; });
    last_s_ = std::max(last_s_, c.end_s);
    if (it != outstanding_.end()) {
      comm_.op_ended(it->op, last_s_);
      outstanding_.erase(it);
    }
    publish_in_flight();
    core_->finish(c.id, last_s_);
  }
}

proto::Trace RankExecutor::run_step() {
  outstanding_.clear();
  ExecutorOptions options;
  options.local_ranks = {rank_};
  core_ = std::make_unique<ExecutorCore>(schedule_, *this, options);
  comm_.step_started();
  last_s_ = clock_.now_s();
  core_->start(last_s_);
  double idle_since = -1.0;
  std::uint32_t quiet_polls = 0;  // beside compute, since anything last finished
  const bool compute_shares_core = compute_.shares_host_core();
  std::vector<Completion> done;
  while (!core_->all_done()) {
    if (outstanding_.empty()) core_->throw_deadlock();  // nothing runs, yet ops remain: a bug, explained
    done = comm_.poll();
    const auto compute_done = compute_.poll();
    done.insert(done.end(), compute_done.begin(), compute_done.end());
    if (!done.empty()) {
      std::stable_sort(done.begin(), done.end(), [](const Completion& a, const Completion& b) { return a.end_s < b.end_s; });
      finished(done);
      idle_since = -1.0;
      quiet_polls = 0;
      continue;
    }
    const double now = clock_.now_s();
    check_timeouts(now);
    if (termination_signal() != 0) throw_if_terminated(fmt::format("waiting on {}", in_flight()));
    if (idle_since < 0.0) idle_since = now;
    // A transfer known to end at a given time (a virtual peer's) is not slept past.
    const double until_known_end_s = std::max(0.0, comm_.next_end_s() - now);
    if (compute_.in_flight() > 0) {
      const double interval_s = comm_.in_flight() > 0
                                    ? poll_interval_beside_compute_s(options_, compute_shares_core, quiet_polls++)
                                    : 0.01;
      compute_.wait(std::min(interval_s, until_known_end_s));
    } else if (now - idle_since < 1e-3) {
      std::this_thread::yield();  // a transfer just started: poll it closely
    } else {
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(options_.poll_interval_s, until_known_end_s)));
    }
  }
  set_ops_in_flight("nothing (between steps)");
  return core_->trace(options_.engine);
}

proto::Trace RankExecutor::partial_trace() const {
  if (!core_) return proto::Trace();
  return core_->trace(options_.engine);
}

}  // namespace eppsim::runtime
