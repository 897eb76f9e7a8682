#pragma once
// Simulated faults (scenario.proto's `faults`, scenario/scenario_faults.h) as the
// engines apply them to one Schedule on one placement. README.md, "Simulated
// faults", has the user's view; the model, per fault kind:
//   straggler      the rank's COMPUTE ops run `slowdown` times slower from `at`
//                  on (an op spanning `at` is prorated: the work left at `at`
//                  runs slower). A later straggler on the same rank sets a new
//                  factor from its own `at` on. Communication is unaffected.
//   link_degraded  the link carries `bandwidth_factor` of its bandwidth, both
//                  directions, from `at` on. The flow engine sets the SimGrid
//                  link's bandwidth at `at` (transfers in flight slow down).
//                  The analytic engine models endpoints only (analytic_engine.h):
//                  a link at a chip scales that chip's NIC (a link leaving the
//                  node) or NVLink (a link inside it) port to the chip's
//                  remaining share of that class's bandwidth, and the rates of
//                  the flows in flight are recomputed at `at`; a link between
//                  switches changes nothing there.
//   link_failure   as link_degraded with factor 0, with one more rule: when the
//                  failure leaves the chips of some ranks unreachable from rank
//                  0's chip over the live links, the step cannot complete and
//                  is fatal at `at`. Otherwise the transfers routed over the
//                  link stall (the flow engine keeps the routes it built; the
//                  analytic engine leaves a chip the share of its other links
//                  of the class, none when it had one), and a step that then
//                  runs out of work ends incomplete when its last op ended.
//   node_failure   the node's ranks stop: fatal at `at`.
// An engine stops at the first fatal fault that strikes before the step ends,
// keeps the ops that ended by then, and marks its trace incomplete
// (trace.proto's StepIncomplete: when, why, what was unfinished).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/topology/topology.h"
#include "schedule/executor/executor_core.h"
#include "schedule/executor/step_incomplete.h"  // mark_incomplete
#include "scenario/field_locator.h"
#include "scenario/scenario_faults.h"
#include "proto/trace.pb.h"

namespace eppsim {

struct EnginePlacement;  // engine_registry.h

struct EngineFault {
  FaultSpec spec;
  double at_s = 0.0;
  LinkId link = 0;     // link faults: the topology's link
  bool fatal = false;  // the step cannot complete once it strikes
  std::vector<std::uint32_t> ranks;  // the ranks it touches directly
  std::string reason;  // fatal: why the step cannot complete, for StepIncomplete
};

// From `at_s` on, `rank`'s NIC or NVLink port (both directions) has
// `capacity` (in [0, 1]) of its bandwidth: the analytic engine's view of link faults.
struct EndpointCapacity {
  double at_s = 0.0;
  std::uint32_t rank = 0;
  bool nic = false;
  double capacity = 1.0;
};

class FaultPlan {
 public:
  FaultPlan() = default;
  FaultPlan(std::vector<EngineFault> faults, std::vector<EndpointCapacity> endpoints, std::uint32_t ranks);

  bool empty() const { return faults_.empty(); }
  // In time order (scenario order among equal times).
  std::span<const EngineFault> faults() const { return faults_; }
  std::span<const EndpointCapacity> endpoint_changes() const { return endpoints_; }
  // The earliest fatal fault, or null.
  const EngineFault* first_fatal() const;
  // How long a COMPUTE op of `duration_s` at full speed that starts at
  // `start_s` on `rank` takes under the rank's stragglers (exactly
  // `duration_s` on a rank without any).
  double compute_time_s(std::uint32_t rank, double start_s, double duration_s) const;
  // The full-speed work (seconds) a COMPUTE op on `rank` does from `from_s` to
  // `to_s` under the rank's stragglers (exactly to_s - from_s on a rank
  // without any): the inverse of compute_time_s, for ops whose rate also
  // changes for other reasons (interference, analytic_engine.h).
  double compute_work_s(std::uint32_t rank, double from_s, double to_s) const;

 private:
  std::vector<EngineFault> faults_;
  std::vector<EndpointCapacity> endpoints_;
  // Per rank: (from time, slowdown) in time order; empty: never slowed.
  std::vector<std::vector<std::pair<double, double>>> slowdown_;
};

// The faults of a run of a `ranks`-rank Schedule on `placement`. Checks what
// the scenario alone could not (InputError through `where`, naming the
// fault's field): the straggler's rank exists, the link exists. Builds the
// topology only when some fault names a link.
FaultPlan make_fault_plan(std::span<const FaultSpec> faults, std::uint32_t ranks, const EnginePlacement& placement,
                          const FieldLocator& where);

// The reason a step that ran out of work with ops unfinished gives, when link
// faults struck before `stopped_s` (they stalled its transfers); empty when
// none did (then it is a deadlock of the schedule itself).
std::string stall_reason(const FaultPlan& plan, double stopped_s);

}  // namespace eppsim
