#pragma once
// The `faults` section of a run's report (report.proto's FaultReport) and its
// lines in the console summary: each simulated fault, when it struck, the
// ranks it touched, and the step against the same schedule run without faults
// (a slowdown factor), or, for a step that did not complete, when it stopped,
// why, and how much of it was done.
#include <string>
#include <string_view>

#include "sim/engine/fault_plan.h"
#include "proto/report.pb.h"
#include "proto/trace.pb.h"

namespace eppsim {

// `faulty` is the run with `plan`'s faults, `healthy` the same schedule on the
// same engine without them.
proto::FaultReport fault_report(const FaultPlan& plan, const proto::Trace& faulty, const proto::Trace& healthy);

// Removes what an incomplete step must not claim: step time, throughput, MFU.
void clear_step_figures(proto::Report& report);

// Lines for the console summary, each starting with `indent` after the first.
std::string fault_summary(const proto::FaultReport& report, std::string_view indent);

}  // namespace eppsim
