#pragma once
// The flow engine's side of interference (flow_engine.h, "Interference"): the
// shared bookkeeping (interference_tracker.h) plus which actor runs what, so
// that a change of rate interrupts exactly the actors whose re-timed sleep (a
// Rated task) it moves: the compute actors of a rank whose compute factor
// changed, and the sleeper of a communication whose factor changed. A
// template over the engine's actor type, of which it keeps only pointers.
#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/interference.h"
#include "schedule/executor/executor_core.h"
#include "sim/engine/interference_tracker.h"

namespace eppsim {

template <typename Actor>
class FlowInterference {
 public:
  // `ranks`: the Schedule's; 0 when interference is off (nothing is tracked).
  FlowInterference(const Interference& model, std::uint32_t ranks)
      : tracker_(model, ranks), computing_(ranks), rank_slowdown_(ranks, 1.0) {}

  // Compute op `id` started on `rank`, run by `actor`.
  void start_compute(ActivityId id, std::uint32_t rank, Actor* actor) {
    computes_.emplace(id, std::pair(rank, actor));
    computing_[rank].push_back(actor);
    tracker_.compute_started(rank);
  }
  // Communication `id` of class `traffic` and `bytes` (its op's size_bytes)
  // started over `ranks`; `sleeper`: the
  // actor sleeping its time (a calibrated one), else null (its messages are
  // SimGrid communications).
  void start_comm(ActivityId id, TrafficClass traffic, double bytes, std::span<const std::uint32_t> ranks,
                  Actor* sleeper) {
    const InterferenceTracker::CommId c = tracker_.comm_started(traffic, bytes, ranks);
    comm_of_activity_[id] = c;
    if (c >= sleeps_.size()) sleeps_.resize(std::size_t{c} + 1);
    sleeps_[c] = Sleep{sleeper, 0.0};
  }
  // The activity `id` ended: it leaves its ranks.
  void end(ActivityId id) {
    if (const auto it = computes_.find(id); it != computes_.end()) {
      const auto [rank, actor] = it->second;
      computes_.erase(it);
      auto& list = computing_[rank];
      list.erase(std::find(list.begin(), list.end(), actor));
      tracker_.compute_ended(rank);
      return;
    }
    const auto it = comm_of_activity_.find(id);
    if (it == comm_of_activity_.end()) return;
    tracker_.comm_ended(it->second);
    comm_of_activity_.erase(it);
  }

  // Applies the changes since the last call and queues, in to_interrupt(),
  // the actors whose rate they moved.
  void update() {
    if (!tracker_.pending()) return;
    tracker_.update(
        [&](std::uint32_t rank, double slowdown) {
          if (slowdown == rank_slowdown_[rank]) return;
          rank_slowdown_[rank] = slowdown;
          to_interrupt_.insert(to_interrupt_.end(), computing_[rank].begin(), computing_[rank].end());
        },
        [&](InterferenceTracker::CommId c, double slowdown) {
          Sleep& sleep = sleeps_[c];
          const bool changed = sleep.slowdown != 0.0 && sleep.slowdown != slowdown;
          sleep.slowdown = slowdown;
          if (changed && sleep.sleeper != nullptr) to_interrupt_.push_back(sleep.sleeper);
        });
  }
  std::vector<Actor*>& to_interrupt() { return to_interrupt_; }

  // The factor compute on `rank` runs slowed by now.
  double compute_slowdown(std::uint32_t rank) const { return tracker_.compute_slowdown(rank); }
  // The factor communication `id` runs slowed by, as of the last update (1 when not tracked).
  double comm_slowdown(ActivityId id) const {
    const auto it = comm_of_activity_.find(id);
    return it == comm_of_activity_.end() ? 1.0 : tracker_.comm_slowdown(it->second);
  }

 private:
  struct Sleep {
    Actor* sleeper = nullptr;
    double slowdown = 0.0;  // as last re-timed; 0: not read yet
  };

  InterferenceTracker tracker_;
  std::vector<std::vector<Actor*>> computing_;  // per rank, the actors running one of its compute ops
  std::vector<double> rank_slowdown_;           // per rank, its compute's factor as last re-timed
  std::unordered_map<ActivityId, std::pair<std::uint32_t, Actor*>> computes_;  // rank and actor
  std::unordered_map<ActivityId, InterferenceTracker::CommId> comm_of_activity_;
  std::vector<Sleep> sleeps_;  // by tracker id
  std::vector<Actor*> to_interrupt_;
};

}  // namespace eppsim
