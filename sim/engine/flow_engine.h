#pragma once
// The flow engine: a Schedule run on SimGrid (3.32, S4U API) through the
// executor core (schedule/executor/executor_core.h, Matching::Global), so that
// concurrent traffic shares links max-min fairly. The analytic engine
// (analytic_engine.h) is its uncontended counterpart; where nothing contends
// the two agree (tests/sim/flow_agreement_test.cpp).
//
// Platform: the cluster's topology graph as SimGrid hosts, links and routes
// (simgrid_platform.h: settings, layout, route-table bound). Ranks run on their
// placement's chips.
//
// Timing:
//   COMPUTE       the cost model's duration (schedule/op_cost.h), slept.
//   SEND/RECV     once both sides have posted (the core's rendezvous), the
//                 sender's stream puts `size_bytes` on a mailbox the receiver's
//                 stream gets from: one SimGrid communication over the route
//                 from the sender's chip to the receiver's (0 s on one chip).
//   COLLECTIVE    once every member has arrived, each member runs its program
//                 of the algorithm the cost model prices the collective with
//                 (CostModel::collective_route: the hint, Auto's pick or the
//                 fallback, its channel count and ring order), spelled out by
//                 models/collective_steps.h: per round, a put of the round's
//                 bytes to each destination and a get from each source, then a
//                 wait; C > 1 channels run their programs at once from the
//                 members' channel hosts. A phase of 16 rounds or more (a ring
//                 over 17+ members; flow_collective_plan.h's PhasePass, decided
//                 when the plan is made) runs as one pass when its plan has one
//                 channel or every flow of the phase has the same route
//                 latency: every member first sleeps (rounds - 1) x the
//                 largest route latency of the phase's flows, then puts all
//                 the rounds' bytes at once. Uncontended, that is the same
//                 time; under contention each flow keeps its own share for the
//                 whole phase instead of the ring waiting for its slowest flow
//                 round by round, and the events drop by the number of rounds
//                 (Ulysses on step_16k at 1,024 GPUs: a data-parallel ring of
//                 1,023 rounds per layer, 165 s -> 9 s of simulation, step
//                 time unchanged; allreduce_ring_4096 230 s -> 0.4 s). That
//                 is exact when the flow of largest latency is also the one
//                 of least bandwidth, as the node-crossing hops of a ring on
//                 fat-tree, rail and simple clusters are, or when all
//                 latencies are equal; otherwise rounds take max(latency +
//                 bytes / rate) each while the pass adds the largest latency
//                 to the slowest transfer, and comes out longer: on a 4x4
//                 torus of 8 channels over paths of different latencies a
//                 1 MiB all-reduce's merged passes took 7-14% longer than its
//                 rounds (tests/sim/flow_agreement_test.cpp
//                 holds it to 1%). The collective ends
//                 when the last member's last channel ends. Bytes per flow
//                 are rounded to whole bytes (SimGrid sizes are integers).
//   DURATION_FIXED ops (compute, transfer or collective) take their fixed
//                 duration and put nothing on the network.
//   Calibrated    a transfer or collective that a calibration's fit covers
//                 (models/network/calibrated_network.h: same kind, group size and
//                 node-crossing) takes the fitted time, slept, and puts nothing
//                 on the network: the fit measured the real library, as the
//                 analytic engine prices it.
//
// Interference (EngineContext::interference; the model is the analytic
// engine's, analytic_engine.h). A compute op that takes part (not
// DURATION_FIXED, not of zero time) is a re-timed sleep: its actor sleeps the
// time its work left takes at the rank's current compute slowdown (stragglers
// composed) and is woken whenever that slowdown changes (a communication
// involving its rank started or ended), to count the work done and sleep
// again at the new rate. A calibrated (slept) transfer or collective is
// re-timed the same way when its ranks start or stop computing changes its
// rate. The bookkeeping is interference_tracker.h's, shared with the analytic
// engine. A communication on the network cannot change
// its rate while SimGrid carries it (the S4U API sets a comm's rate before it
// starts only), so each message takes the slowdown in force when it starts:
// its bytes are multiplied by comm_slowdown when any rank of its transfer or
// collective computes at that moment. A transfer is one message, so it is
// slowed for its whole time or not at all; a collective decides round by round.
// Unlike the analytic engine, the message's latency is not slowed, and a
// message that started slowed stays slowed after the compute beside it ends
// (and the other way round).
//
// One SimGrid actor per (rank, stream) with ops runs what the core hands that
// stream, one activity at a time; a controller actor starts the core and waits
// until every op is done. If the simulation runs out of events first, the
// schedule deadlocked: ScheduleDeadlock with the core's report. Mismatches
// throw ScheduleMismatch, malformed schedules InputError, as the analytic
// engine does.
//
// Simulated faults (EngineContext::faults, fault_plan.h): a straggler's
// compute sleeps its stretched time; a fault actor wakes at each link fault's
// time and sets the SimGrid link's bandwidth (link_degraded: both directions
// times the factor) or turns it off (link_failure: the transfers over it fail
// and their actors stall, as routes are built once and do not change); at a
// fatal fault it ends the run, the trace marked incomplete. A run that then
// runs out of events with ops unfinished after a link failure is incomplete
// (stalled), not a deadlock.
//
// Each run forks a child process (forked_run.h: SimGrid allows one engine per
// process); the trace comes back over a pipe, errors as the same exception
// types. The placement is required: without it run_flow throws
// std::invalid_argument.
#include <cstddef>

#include "models/cost_model.h"
#include "sim/engine/engine_registry.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim {

struct FlowEngineOptions {
  std::size_t max_blocked_ops_reported = 20;
};

proto::Trace run_flow(const proto::Schedule& schedule, const EngineContext& context,
                      const FlowEngineOptions& options = {});

}  // namespace eppsim
