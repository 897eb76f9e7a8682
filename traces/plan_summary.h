#pragma once
// The plan in words: what `eppsim run` prints on its "plan" line and the HTML
// page shows, written once into report.json's plan_summary.
//
// From the schedule summary's PlanDecisions, two lines:
//   layout   "4 stages x 8 SP x 1 DP = 32 ranks (InfiniPipe)"; TP and CP when
//            > 1; SP degrees that vary per micro-batch (FlexSP: "8/4 SP")
//            do not multiply out, so "..., 16 ranks"
//   choices  "K=4, 3 pipelines, 37 chunks; checkpointing 12 of 64
//            layer-chunks; MILPs: 2 optimal, 1 fell back"; FlexSP's first
//            micro-batches' groups as "(SP groups 8+8, 8+4+4, ...)"
// A Schedule that records no decisions (an imported one) gets one line from
// its summary: "16 ranks (2 pipeline stages x 8 data-parallel), 12 micro-batches".
#include <string>
#include <string_view>

#include "proto/schedule.pb.h"

namespace eppsim {

// The lines above, each ended by '\n'.
std::string plan_summary(const proto::Schedule& schedule);
// The decisions' two lines; "" when no decisions are recorded (ranks 0).
std::string plan_decisions_summary(const proto::PlanDecisions& decisions);

std::string_view solve_status_name(proto::SolveStatus status);  // "optimal", "feasible at limit", ...

}  // namespace eppsim
