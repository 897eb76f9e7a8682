#pragma once
// The analytic engine: an event-driven executor of a Schedule on the executor
// core (schedule/executor/executor_core.h), which holds the Schedule's semantics:
// readiness, stream order, matching, memory, deadlock and mismatch diagnosis,
// the trace. The engine supplies time: a COMPUTE op takes the cost model's
// duration; a matched transfer or a collective takes the cost model's
// uncontended time (schedule/op_cost.h) when it runs alone, and longer when it
// shares an endpoint with other communication (below). DURATION_FIXED ops take
// their fixed duration and share nothing: they are measured times. Completions
// are kept in one event heap, in time order, ties in the order they were
// scheduled.
//
// Shared endpoints (options.share_endpoints, on by default). Every rank has an
// NVLink port and a NIC port, each with an egress and an ingress direction.
//   - A transfer uses the sender's egress and the receiver's ingress: of the
//     NIC when the two ranks are on different nodes, of NVLink otherwise (a
//     rank sending to itself uses neither).
//   - A collective inside one node uses NVLink egress and ingress on every
//     member. One spanning nodes uses NIC egress and ingress on every member;
//     a HIERARCHICAL one also NVLink egress and ingress on each member that
//     shares its node with another member (its intra-node phases). Other
//     algorithms spanning nodes, AUTO included, are taken as bound by their NIC
//     hops: since a flow holds every port at its whole rate, counting NVLink
//     too would let a NIC-bound collective take half of an intra-node
//     all-to-all's NVLink. A collective of one rank uses nothing.
// Concurrent transfers and collectives share these ports max-min fairly, the
// rates recomputed whenever one starts or ends (sim/engine/endpoint_sharing.h:
// the model, its limits, and why the latency part is shared too). Without
// node_of_rank, every rank is taken as its own node.
//
// Interference (options.interference, models/interference.h; when it is off,
// compute is never slowed and nothing below happens). On each rank, the
// communication in flight is the set of transfers it sends or receives and the
// collectives it is a member of, each of one class of traffic: a transfer is
// point-to-point; a collective is intra-node (all members on one node) or
// inter-node. While a COMPUTE op runs on a rank with communication of class c
// in flight there, it progresses at 1 / compute_slowdown(c) (several classes
// at once: the largest factor); while a transfer or collective has any of its
// ranks computing, it progresses at 1 / comm_slowdown(its class) times the
// rate endpoint sharing gives it (it still holds its ports at that rate).
// Rates change only at events (an activity starting or ending), batched per
// instant as endpoint sharing's are: a compute op (and a communication that
// shares no ports) keeps the work it has left at full speed and its
// completion is re-timed when its rate changes (the event heap's version
// check drops the outdated one). A straggler's factor (fault_plan.h) composes:
// the op runs at 1 / (interference * straggler). DURATION_FIXED ops (measured
// times) and ops of zero duration take no part: they are never slowed and slow
// nothing. The bookkeeping (who computes, what is in flight, what changed)
// is interference_tracker.h's, shared with the flow engine; an update is
// proportional to what changed.
//
// A malformed schedule is an InputError (schedule_validation.h); a deadlock
// throws ScheduleDeadlock (unless failed links stalled it: then the trace is
// marked incomplete, fault_plan.h), mismatched transfers or collectives ScheduleMismatch.
#include <cstddef>
#include <cstdint>
#include <span>

#include "models/cost_model.h"
#include "models/interference.h"
#include "sim/engine/engine_core.h"
#include "sim/engine/fault_plan.h"
#include "schedule/executor/executor_core.h"
#include "schedule/schedule_validation.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim {

struct AnalyticEngineOptions {
  std::size_t max_blocked_ops_reported = 20;
  // Node of each rank of the Schedule (at least num_ranks entries, else
  // std::invalid_argument); empty: each rank on its own node. Must outlive the run.
  std::span<const std::uint32_t> node_of_rank;
  // false: every transfer and collective takes its uncontended time, as if it
  // had its endpoints to itself.
  bool share_endpoints = true;
  // Simulated faults (fault_plan.h); null: none. Stragglers stretch compute;
  // link faults lower the capacity of the ports at their chips (which takes
  // share_endpoints: without it, link faults change nothing); a fatal fault
  // ends the run at its time with the trace marked incomplete. Must outlive the run.
  const FaultPlan* faults = nullptr;
  // Compute and communication slowing each other while they overlap on a rank
  // (above); disabled: neither is slowed.
  Interference interference = {};
  // What the trace keeps (engine_core.h's TraceSelection).
  TraceSelection trace = {};
};

proto::Trace run_analytic(const proto::Schedule& schedule, const CostModel& cost,
                          const AnalyticEngineOptions& options = {});

}  // namespace eppsim
