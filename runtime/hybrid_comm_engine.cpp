#include "runtime/hybrid_comm_engine.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/comm_plan.h"

namespace eppsim::runtime {

HybridCommEngine::HybridCommEngine(const proto::Schedule& schedule, std::uint32_t rank, const VirtualPeers& peers,
                                   std::unique_ptr<CommEngine> real, std::unique_ptr<RealMembersBarrier> barrier,
                                   const StepClock& clock, std::unique_ptr<VirtualWorld> world)
    : schedule_(schedule), rank_(rank), peers_(peers), real_(std::move(real)), barrier_(std::move(barrier)),
      clock_(clock), world_(std::move(world)) {}

void HybridCommEngine::step_started() {
  real_->step_started();
  if (world_) world_->start();
}

void HybridCommEngine::op_ended(OpRef op, double end_s) {
  real_->op_ended(op, end_s);
  if (!world_ || op.rank != rank_ || peers_.meeting(op.op)) return;  // the world times those itself
  world_->advance_to(end_s);
  world_->pinned_ended(op, end_s);
}

void HybridCommEngine::start(ActivityId id, OpRef ref) {
  if (ref.rank != rank_) {
    throw std::invalid_argument(fmt::format("HybridCommEngine of rank {}: asked to start {}", rank_,
                                            describe_op(schedule_, ref)));
  }
  const auto& meeting = peers_.meeting(ref.op);
  if (!meeting) return real_->start(id, ref);
  if (meeting->real_members_meet) {
    if (!barrier_) {
      throw std::logic_error(fmt::format("HybridCommEngine: {} meets real members, and there is no barrier",
                                         describe_op(schedule_, ref)));
    }
    barrier_->start(id, ops_of(schedule_, ref.rank)[ref.op].group());
    if (!world_) {
      at_barrier_.emplace(id, *meeting);
      return;
    }
  }
  if (world_) {
    awaiting_.push_back({id, ref, *meeting});
    return;
  }
  timed_.push_back({id, std::max(clock_.now_s(), meeting->virtual_ready_s) + meeting->transfer_s});
}

std::vector<Completion> HybridCommEngine::poll() {
  std::vector<Completion> done = real_->poll();
  if (barrier_ && (!at_barrier_.empty() || !awaiting_.empty())) {
    for (const Completion& met : barrier_->poll()) {
      if (const auto it = at_barrier_.find(met.id); it != at_barrier_.end()) {
        timed_.push_back({met.id, std::max(met.end_s, it->second.virtual_ready_s) + it->second.transfer_s});
        at_barrier_.erase(it);
      }
      for (Awaiting& a : awaiting_) {
        if (a.id == met.id) a.barrier_end_s = met.end_s;
      }
    }
  }
  const double now = clock_.now_s();
  if (world_) {
    world_->advance_to(now);
    std::erase_if(awaiting_, [&](const Awaiting& a) {
      const auto end = world_->end_of(a.op);
      if (!end || !ready_to_time(a)) return false;
      // Other real members: no earlier than the simulated transfer after they met.
      const double end_s = a.meeting.real_members_meet ? std::max(*end, a.barrier_end_s + a.meeting.transfer_s) : *end;
      timed_.push_back({a.id, end_s});
      return true;
    });
  }
  if (timed_.empty()) return done;
  // Ended: reported at the time it ended, which the poll may see a little later.
  const auto ended = std::stable_partition(timed_.begin(), timed_.end(), [&](const Timed& t) { return t.end_s > now; });
  for (auto it = ended; it != timed_.end(); ++it) done.push_back({it->id, it->end_s});
  timed_.erase(ended, timed_.end());
  return done;
}

std::size_t HybridCommEngine::in_flight() const {
  return real_->in_flight() + timed_.size() + at_barrier_.size() + awaiting_.size();
}

double HybridCommEngine::next_end_s() const {
  double next = real_->next_end_s();
  if (world_) next = std::min(next, world_->next_event_s());
  for (const Timed& t : timed_) next = std::min(next, t.end_s);
  return next;
}

}  // namespace eppsim::runtime
