#include "runtime/virtual_world.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "base/errors.h"
#include "schedule/program_ops.h"
#include "schedule/trace_events.h"

namespace eppsim::runtime {

VirtualWorld::VirtualWorld(const proto::Schedule& schedule, const proto::Trace& simulated,
                           std::function<bool(OpRef)> pinned, std::string_view simulated_name)
    : schedule_(schedule), pinned_(std::move(pinned)) {
  const auto error = [&](std::string_view field, const std::string& rule) {
    return InputError(fmt::format("{}: {}: {}", simulated_name, field, rule));
  };
  if (simulated.traced_ranks_size() > 0 && static_cast<std::uint32_t>(simulated.traced_ranks_size()) < schedule.num_ranks()) {
    throw error("traced_ranks", fmt::format("lists the events of {} of {} ranks; a closed loop re-times every virtual "
                                            "rank: simulate with --trace-ranks all",
                                            simulated.traced_ranks_size(), schedule.num_ranks()));
  }
  if (simulated.num_ranks() != schedule.num_ranks()) {
    throw error("num_ranks", fmt::format("the simulation has {} ranks, the Schedule {}: simulate this Schedule",
                                         simulated.num_ranks(), schedule.num_ranks()));
  }
  constexpr double kUnset = -1.0;
  duration_s_.resize(schedule.num_ranks());
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) duration_s_[r].assign(ops_of(schedule, r).size(), kUnset);
  for (const OpEventRef e : events_of(simulated)) {
    if (e.rank() >= duration_s_.size() || e.op() >= duration_s_[e.rank()].size()) {
      throw error("op_events", fmt::format("rank {} op {} is not the Schedule's (another Schedule's simulation?)", e.rank(),
                                           e.op()));
    }
    duration_s_[e.rank()][e.op()] = static_cast<double>(e.end_ns() - e.start_ns()) * 1e-9;
  }
  for (std::uint32_t r = 0; r < duration_s_.size(); ++r) {
    const auto missing = std::find(duration_s_[r].begin(), duration_s_[r].end(), kUnset);
    if (missing != duration_s_[r].end()) {
      throw error("op_events", fmt::format("holds no event of rank {} op {}: a trace of the whole step is needed", r,
                                           missing - duration_s_[r].begin()));
    }
  }
}

VirtualWorld::~VirtualWorld() = default;

void VirtualWorld::start() {
  GlobalExecutorHooks& hooks = *this;  // (a private base: converted here, where it is accessible)
  core_ = std::make_unique<ExecutorCore>(schedule_, hooks);
  events_ = {};
  now_s_ = 0.0;
  known_end_s_.clear();
  waiting_on_.clear();
  pending_.clear();
  timed_end_s_.clear();
  core_->start(0.0);
}

void VirtualWorld::schedule_event(double at_s, ActivityId id) { events_.push({std::max(at_s, now_s_), sequence_++, id}); }

void VirtualWorld::ready(ActivityId id, std::span<const OpRef> ops, double duration_s, double now) {
  bool holds_pinned = false;
  Pending pending;
  for (const OpRef op : ops) {
    if (!pinned_(op)) continue;
    holds_pinned = true;
    if (const auto known = known_end_s_.find(key(op)); known != known_end_s_.end()) {
      pending.latest_end_s = std::max(pending.latest_end_s, known->second);
    } else {
      ++pending.outstanding;
      waiting_on_[key(op)] = id;
    }
  }
  if (!holds_pinned) {
    for (const OpRef op : ops) timed_end_s_[key(op)] = now + duration_s;
    return schedule_event(now + duration_s, id);
  }
  if (pending.outstanding == 0) return schedule_event(std::max(now, pending.latest_end_s), id);
  pending_[id] = pending;
}

void VirtualWorld::compute_ready(ActivityId id, OpRef op, double now) {
  const OpRef ops[1] = {op};
  ready(id, ops, duration_s_[op.rank][op.op], now);
}

void VirtualWorld::transfer_ready(ActivityId id, OpRef send, OpRef recv, double now) {
  const OpRef ops[2] = {send, recv};
  ready(id, ops, duration_s_[send.rank][send.op], now);
}

void VirtualWorld::collective_ready(ActivityId id, std::span<const OpRef> members, double now) {
  ready(id, members, duration_s_[members[0].rank][members[0].op], now);
}

void VirtualWorld::advance_to(double t_s) {
  while (!events_.empty() && events_.top().at_s <= t_s) {
    const Event e = events_.top();
    events_.pop();
    now_s_ = std::max(now_s_, e.at_s);
    core_->finish(e.id, now_s_);
  }
  now_s_ = std::max(now_s_, t_s);
}

void VirtualWorld::pinned_ended(OpRef op, double t_s) {
  known_end_s_[key(op)] = t_s;
  const auto waiting = waiting_on_.find(key(op));
  if (waiting == waiting_on_.end()) return;  // its activity has not started yet: it will know
  const ActivityId id = waiting->second;
  waiting_on_.erase(waiting);
  Pending& pending = pending_.at(id);
  pending.latest_end_s = std::max(pending.latest_end_s, t_s);
  if (--pending.outstanding > 0) return;
  const double end_s = pending.latest_end_s;
  pending_.erase(id);
  schedule_event(end_s, id);
}

std::optional<double> VirtualWorld::end_of(OpRef op) const {
  const auto it = timed_end_s_.find(key(op));
  if (it == timed_end_s_.end()) return std::nullopt;
  return it->second;
}

double VirtualWorld::next_event_s() const {
  return events_.empty() ? std::numeric_limits<double>::infinity() : events_.top().at_s;
}

bool VirtualWorld::done() const { return core_ && core_->all_done(); }

proto::Trace VirtualWorld::trace() const { return core_->trace("hybrid"); }

proto::Trace VirtualWorld::retime(const proto::Trace& real) {
  start();
  for (const OpEventRef e : events_of(real)) pinned_ended({e.rank(), e.op()}, static_cast<double>(e.end_ns()) * 1e-9);
  advance_to(std::numeric_limits<double>::infinity());
  if (!done()) throw std::logic_error("VirtualWorld::retime: the step did not complete with the real ranks' ends pinned");
  return trace();
}

}  // namespace eppsim::runtime
