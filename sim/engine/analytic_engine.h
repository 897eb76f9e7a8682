#pragma once
// The analytic engine: an event-driven executor of a Schedule.
//
// Semantics (DESIGN.md, "The Schedule"): an op starts when the previous op on
// its stream and all its dependencies are done. COMPUTE takes the timer's
// duration; MEMORY is instantaneous and updates the rank's bytes in use. SEND
// and RECV are matched in order per (sender, receiver, tag); the transfer starts
// when both are posted (rendezvous) and both complete when the data has
// arrived. The k-th COLLECTIVE a rank issues on a group meets the k-th of every
// other member; it starts when all have arrived and ends for all at once.
// In the trace, a send/recv/collective spans the transfer, not the wait for the
// peers, so the wait shows as idle time.
//
// When no event is left but ops are unfinished, the engine throws
// ScheduleDeadlock naming the blocked ops and why (no matching receive, a
// different tag or size posted instead, collective members missing). A
// malformed schedule (dependency on a later op, unknown peer or group) is an
// InputError; mismatched sizes of matched transfers or collectives throw
// ScheduleMismatch.
#include <cstddef>
#include <stdexcept>
#include <string>

#include "sim/engine/compute_timer.h"
#include "sim/engine/network_model.h"
#include "traces/schedule.pb.h"
#include "traces/trace.pb.h"

namespace eppsim {

class ScheduleDeadlock : public std::runtime_error {
 public:
  explicit ScheduleDeadlock(const std::string& message) : std::runtime_error(message) {}
};

class ScheduleMismatch : public std::runtime_error {
 public:
  explicit ScheduleMismatch(const std::string& message) : std::runtime_error(message) {}
};

struct AnalyticEngineOptions {
  std::size_t max_blocked_ops_reported = 20;
};

// Checks the structure every executor relies on; throws InputError naming the
// rank, op and rule.
void validate_schedule(const proto::Schedule& schedule);

proto::Trace run_analytic(const proto::Schedule& schedule, const NetworkModel& network, const ComputeTimer& timer,
                          const AnalyticEngineOptions& options = {});

}  // namespace eppsim
