#pragma once
// Closed-loop hybrid emulation (eppsim-run --ranks R --virtual SIM --closed-loop):
// the virtual ranks re-timed from the real ranks' progress. A VirtualWorld runs
// the whole Schedule on the executor core as the simulators do, each op taking
// the time the calibrated simulation gave it (a compute op its event's length;
// a transfer or a collective its length from its last side's arrival, which is
// when the simulators start it), except pinned ops, which end when they are
// said to (pinned_ended): real ranks' ops as they ran. An activity holding a
// pinned op (a real rank's compute, a transfer or collective with a real side)
// ends when its pinned ops have, and never before its last side arrived.
//
// Driven two ways:
//   - online, in a real rank's process (runtime/hybrid_comm_engine.h): its own
//     ops pinned, but for those that meet a virtual rank, which the world times:
//     a virtual peer sends or joins a collective when the world, fed this
//     rank's real progress as the step clock runs, says it does. Other real
//     ranks are as the simulation timed them in this world, except where they
//     meet this rank for real (their progress is not shared between processes);
//   - after the step, on the rank that merges the trace: every real rank's ops
//     pinned to their measured ends, which re-times the virtual ranks for the
//     hybrid trace and its step time.
// The simulated trace must list every rank's events (a run that kept only some
// ranks' is an InputError naming it).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "schedule/executor/executor_core.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim::runtime {

class VirtualWorld final : private GlobalExecutorHooks {
 public:
  // `pinned(op)`: whether op ends when told. `schedule` must outlive the world;
  // `simulated` is read once.
  VirtualWorld(const proto::Schedule& schedule, const proto::Trace& simulated, std::function<bool(OpRef)> pinned,
               std::string_view simulated_name);
  ~VirtualWorld() override;

  // Starts a step at time 0; again, a new step (what the last one was told forgotten).
  void start();
  // Runs every event up to `t_s` (the world's time never goes back).
  void advance_to(double t_s);
  // A pinned op ended at `t_s` (before its activity started too: the world
  // then knows it in advance).
  void pinned_ended(OpRef op, double t_s);
  // When `op` ends, once the world has timed it (from its activity's start on:
  // known before it happens); nullopt before, and for pinned ops.
  std::optional<double> end_of(OpRef op) const;
  // The time of the world's next event; infinity when it waits on pinned ops alone.
  double next_event_s() const;
  bool done() const;
  // Every rank's events as the world ran them.
  proto::Trace trace() const;
  // After a step: the world run again with the pinned ops of `real` (events on
  // one clock whose 0 is the step's start) ending as they did; its trace. Every
  // op of a rank that `real` lists must be pinned: this re-times the others.
  proto::Trace retime(const proto::Trace& real);

 private:
  void compute_ready(ActivityId id, OpRef op, double now) override;
  void transfer_ready(ActivityId id, OpRef send, OpRef recv, double now) override;
  void collective_ready(ActivityId id, std::span<const OpRef> members, double now) override;
  // An activity of `ops` may start now: timed by `duration_s` unless it holds pinned ops.
  void ready(ActivityId id, std::span<const OpRef> ops, double duration_s, double now);
  void schedule_event(double at_s, ActivityId id);
  static std::uint64_t key(OpRef op) { return (static_cast<std::uint64_t>(op.rank) << 32) | op.op; }

  struct Pending {  // an activity waiting on its pinned ops
    std::uint32_t outstanding = 0;
    double latest_end_s = 0.0;
  };
  struct Event {
    double at_s;
    std::uint64_t sequence;  // ties in the order they were scheduled
    ActivityId id;
    bool operator>(const Event& other) const {
      return at_s != other.at_s ? at_s > other.at_s : sequence > other.sequence;
    }
  };
  const proto::Schedule& schedule_;
  std::function<bool(OpRef)> pinned_;
  std::vector<std::vector<double>> duration_s_;  // per rank, per op: as simulated
  std::unique_ptr<ExecutorCore> core_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t sequence_ = 0;
  double now_s_ = 0.0;
  std::unordered_map<std::uint64_t, double> known_end_s_;     // pinned ops that ended, by key
  std::unordered_map<std::uint64_t, ActivityId> waiting_on_;  // a pinned op whose activity has started
  std::unordered_map<ActivityId, Pending> pending_;
  std::unordered_map<std::uint64_t, double> timed_end_s_;  // unpinned ops of started activities
};

}  // namespace eppsim::runtime
