#pragma once
// The flow engine's interference bookkeeping (flow_engine.h, "Interference"):
// per rank, the compute ops running and the communication in flight of each
// class; per communication, how many of its ranks compute. When either
// changes, the actors whose re-timed sleeps (Rated tasks) it affects are
// queued for an interrupt, which the engine delivers once the executor core
// has returned. A template over the engine's actor type, of which it keeps
// only pointers.
#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/interference.h"
#include "schedule/executor/executor_core.h"

namespace eppsim {

template <typename Actor>
class FlowInterference {
 public:
  // `ranks`: the Schedule's; 0 when interference is off (nothing is tracked).
  FlowInterference(const Interference& model, std::uint32_t ranks) : model_(model), ranks_(ranks) {}

  // Compute op `id` started on `rank`, run by `actor`.
  void start_compute(ActivityId id, std::uint32_t rank, Actor* actor) {
    Rank& s = ranks_[rank];
    computes_.emplace(id, std::pair(rank, actor));
    s.computing.push_back(actor);
    if (s.computing.size() == 1) computing_changed(rank, +1);
  }
  // Communication `id` of class `traffic` started over `ranks` (a rank
  // sending to itself counts once); `sleeper`: the actor sleeping its time
  // (a calibrated one), else null (its messages are SimGrid communications).
  void start_comm(ActivityId id, TrafficClass traffic, std::vector<std::uint32_t> ranks, Actor* sleeper) {
    if (ranks.size() == 2 && ranks[0] == ranks[1]) ranks.pop_back();
    Comm& comm = comms_[id];
    comm.traffic = traffic;
    comm.ranks = std::move(ranks);
    comm.sleeper = sleeper;
    for (const std::uint32_t r : comm.ranks) {
      Rank& s = ranks_[r];
      ++s.comms_in_flight[static_cast<std::size_t>(traffic)];
      s.comms.push_back(id);
      comm.computing += s.computing.empty() ? 0u : 1u;
      to_interrupt_.insert(to_interrupt_.end(), s.computing.begin(), s.computing.end());
    }
  }
  // The activity `id` ended: it leaves its ranks.
  void end(ActivityId id) {
    if (const auto it = computes_.find(id); it != computes_.end()) {
      const auto [rank, actor] = it->second;
      computes_.erase(it);
      auto& list = ranks_[rank].computing;
      list.erase(std::find(list.begin(), list.end(), actor));
      if (list.empty()) computing_changed(rank, -1);
      return;
    }
    const auto it = comms_.find(id);
    if (it == comms_.end()) return;
    for (const std::uint32_t r : it->second.ranks) {
      Rank& s = ranks_[r];
      --s.comms_in_flight[static_cast<std::size_t>(it->second.traffic)];
      s.comms.erase(std::find(s.comms.begin(), s.comms.end(), id));
      to_interrupt_.insert(to_interrupt_.end(), s.computing.begin(), s.computing.end());
    }
    comms_.erase(it);
  }

  // The factor communication `id` runs slowed by now (any of its ranks computing).
  double comm_slowdown(ActivityId id) const {
    const auto it = comms_.find(id);
    if (it == comms_.end() || it->second.computing == 0) return 1.0;
    return model_.of(it->second.traffic).comm_slowdown;
  }
  // The factor compute on `rank` runs slowed by now (the largest of the
  // classes of communication in flight there).
  double compute_slowdown(std::uint32_t rank) const {
    double slowdown = 1.0;
    for (std::size_t t = 0; t < kTrafficClasses; ++t) {
      if (ranks_[rank].comms_in_flight[t] > 0) slowdown = std::max(slowdown, model_.factors[t].compute_slowdown);
    }
    return slowdown;
  }

  // The actors to interrupt, queued since they were last taken.
  std::vector<Actor*>& to_interrupt() { return to_interrupt_; }

 private:
  struct Comm {
    TrafficClass traffic = TrafficClass::PointToPoint;
    std::vector<std::uint32_t> ranks;
    std::uint32_t computing = 0;     // its ranks computing
    Actor* sleeper = nullptr;
  };
  struct Rank {
    std::array<std::uint32_t, kTrafficClasses> comms_in_flight{};
    std::vector<ActivityId> comms;        // in flight
    std::vector<Actor*> computing;  // actors running one of its compute ops
  };

  // Rank `rank` started (+1) or stopped (-1) computing.
  void computing_changed(std::uint32_t rank, int delta) {
    for (const ActivityId c : ranks_[rank].comms) {
      Comm& comm = comms_.at(c);
      comm.computing = static_cast<std::uint32_t>(static_cast<int>(comm.computing) + delta);
      if (comm.sleeper != nullptr) to_interrupt_.push_back(comm.sleeper);
    }
  }

  Interference model_;
  std::vector<Rank> ranks_;
  std::unordered_map<ActivityId, std::pair<std::uint32_t, Actor*>> computes_;
  std::unordered_map<ActivityId, Comm> comms_;
  std::vector<Actor*> to_interrupt_;
};

}  // namespace eppsim
