#pragma once
// Who slows whom while compute and communication overlap (models/interference.h),
// for every engine that models it (the analytic engine, analytic_engine.h; the
// flow engine, flow_engine.h): per rank, its compute ops running and its
// communication in flight, each with the factors of its traffic class at its
// message size; per communication, how many of its ranks compute.
//
// Engines report starts and ends as they happen; what they change is applied
// in update(), which an engine calls before time moves on (several changes at
// one instant are then applied once). update() reports, in the order they
// were first touched since the last update:
//   each rank whose compute ops started or ended or whose communication
//   started or ended, with the factor its compute runs slowed by now (the
//   largest compute_slowdown of its communications in flight);
//   then each communication that started or whose ranks started or stopped
//   computing, with its factor now (its comm_slowdown when any of its ranks
//   computes, else 1).
// The engine re-times what runs there; a rate that did not change needs no
// re-timing.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "models/interference.h"

namespace eppsim {

class InterferenceTracker {
 public:
  using CommId = std::uint32_t;  // reused once its communication has ended

  // `ranks`: the Schedule's (0 when interference is off: nothing is tracked).
  InterferenceTracker(const Interference& model, std::uint32_t ranks) : model_(model), ranks_(ranks) {}

  void compute_started(std::uint32_t rank) {
    ++ranks_[rank].computes;
    mark_rank(rank);
  }
  void compute_ended(std::uint32_t rank) {
    --ranks_[rank].computes;
    mark_rank(rank);
  }
  // A communication of class `traffic` and `bytes` (its op's size_bytes) over
  // `ranks` (a rank sending to itself counts once).
  CommId comm_started(TrafficClass traffic, double bytes, std::span<const std::uint32_t> ranks) {
    CommId c;
    if (!free_comms_.empty()) {
      c = free_comms_.back();
      free_comms_.pop_back();
    } else {
      c = static_cast<CommId>(comms_.size());
      comms_.emplace_back();
    }
    Comm& comm = comms_[c];
    comm.factors = model_.at(traffic, bytes);
    comm.ranks.assign(ranks.begin(), ranks.end());
    if (comm.ranks.size() == 2 && comm.ranks[0] == comm.ranks[1]) comm.ranks.pop_back();
    comm.computing = 0;
    comm.live = true;
    for (const std::uint32_t r : comm.ranks) {
      Rank& s = ranks_[r];
      s.comms.push_back(c);
      comm.computing += s.computing ? 1u : 0u;
      mark_rank(r);
    }
    mark_comm(c);
    return c;
  }
  void comm_ended(CommId c) {
    Comm& comm = comms_[c];
    for (const std::uint32_t r : comm.ranks) {
      Rank& s = ranks_[r];
      *std::find(s.comms.begin(), s.comms.end(), c) = s.comms.back();
      s.comms.pop_back();
      mark_rank(r);
    }
    comm.live = false;
    free_comms_.push_back(c);
  }

  bool pending() const { return !dirty_ranks_.empty() || !dirty_comms_.empty(); }

  // Applies the changes since the last update, as the header says:
  // rank_changed(rank, compute_slowdown), then comm_changed(comm, comm_slowdown).
  template <typename RankChanged, typename CommChanged>
  void update(RankChanged&& rank_changed, CommChanged&& comm_changed) {
    for (const std::uint32_t r : dirty_ranks_) {
      Rank& s = ranks_[r];
      s.dirty = false;
      rank_changed(r, compute_slowdown(r));
      const bool computing = s.computes > 0;
      if (computing == s.computing) continue;
      s.computing = computing;
      for (const CommId c : s.comms) {
        comms_[c].computing += computing ? 1u : static_cast<std::uint32_t>(-1);
        mark_comm(c);
      }
    }
    dirty_ranks_.clear();
    for (const CommId c : dirty_comms_) {
      Comm& comm = comms_[c];
      comm.dirty = false;
      if (comm.live) comm_changed(c, comm_slowdown(c));
    }
    dirty_comms_.clear();
  }

  // The factor compute on `rank` runs slowed by: the largest of its
  // communications in flight now.
  double compute_slowdown(std::uint32_t rank) const {
    double slowdown = 1.0;
    for (const CommId c : ranks_[rank].comms) slowdown = std::max(slowdown, comms_[c].factors.compute_slowdown);
    return slowdown;
  }
  // The factor communication `c` runs slowed by, as of the last update.
  double comm_slowdown(CommId c) const {
    const Comm& comm = comms_[c];
    return comm.computing > 0 ? comm.factors.comm_slowdown : 1.0;
  }

 private:
  struct Comm {
    InterferenceFactors factors;  // of its class at its size
    std::vector<std::uint32_t> ranks;
    std::uint32_t computing = 0;  // its ranks computing, as of the last update
    bool live = false;
    bool dirty = false;
  };
  struct Rank {
    std::vector<CommId> comms;  // in flight
    std::uint32_t computes = 0;  // compute ops running
    bool computing = false;      // as of the last update
    bool dirty = false;
  };

  void mark_rank(std::uint32_t rank) {
    if (ranks_[rank].dirty) return;
    ranks_[rank].dirty = true;
    dirty_ranks_.push_back(rank);
  }
  void mark_comm(CommId c) {
    if (comms_[c].dirty) return;
    comms_[c].dirty = true;
    dirty_comms_.push_back(c);
  }

  Interference model_;
  std::vector<Rank> ranks_;
  std::vector<Comm> comms_;
  std::vector<CommId> free_comms_;
  std::vector<std::uint32_t> dirty_ranks_;
  std::vector<CommId> dirty_comms_;
};

}  // namespace eppsim
