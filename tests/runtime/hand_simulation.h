#pragma once
// A simulation of a Schedule small enough to follow by hand, for the tests of
// hybrid emulation (runtime/virtual_peers.h): a COMPUTE op takes `compute_s`,
// a transfer 2 ms and a collective 3 ms once every side has arrived, on the
// executor core as the engines run it. Its trace is marked calibrated, as
// eppsim-run --virtual asks.
#include <functional>
#include <queue>
#include <span>
#include <utility>
#include <vector>

#include "schedule/executor/executor_core.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim::runtime::testing {

inline constexpr double kHandTransferS = 2e-3;
inline constexpr double kHandCollectiveS = 3e-3;

inline proto::Trace simulate(const proto::Schedule& schedule, double compute_s = 1e-3) {
  struct Hooks final : GlobalExecutorHooks {
    using Event = std::pair<double, ActivityId>;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    double compute_s = 1e-3;
    void compute_ready(ActivityId id, OpRef, double now) override { events.push({now + compute_s, id}); }
    void transfer_ready(ActivityId id, OpRef, OpRef, double now) override { events.push({now + kHandTransferS, id}); }
    void collective_ready(ActivityId id, std::span<const OpRef>, double now) override {
      events.push({now + kHandCollectiveS, id});
    }
  } hooks;
  hooks.compute_s = compute_s;
  ExecutorCore core(schedule, hooks);
  core.start(0.0);
  while (!hooks.events.empty()) {
    const auto [at, id] = hooks.events.top();
    hooks.events.pop();
    core.finish(id, at);
  }
  proto::Trace trace = core.trace("analytic");
  trace.set_calibration("calibration.textproto");
  return trace;
}

}  // namespace eppsim::runtime::testing
