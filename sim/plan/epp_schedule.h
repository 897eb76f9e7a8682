#pragma once
// The Schedule of an EPP plan (epp.h): its replicas' pipelines back to back on
// every stage, each lane's chunks in sequence-level 1F1B order with the
// checkpoint ILP's recomputation and the matching memory, layers run as Ulysses
// pieces (layer_pieces.h), then the gradient step. Shared by the planner and by
// epp-flex's engine check of one pipeline.
#include <cstdint>
#include <span>
#include <string>

#include "sim/plan/epp.h"
#include "sim/plan/packed_1f1b.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/plan_context.h"

namespace eppsim {

// The Schedule of `decisions` (its replicas on ranks 0 .. stages*replicas*sp-1;
// replica 0's programs alone, marked identical_replicas, when the decisions'
// replicas are identical), with the model FLOPs and the most chunks of a
// replica; finish_plan is the caller's.
struct EmittedEpp {
  ScheduleBuilder builder;
  double model_flops = 0.0;
  std::uint32_t most_chunks = 0;
};
EmittedEpp emit_epp(const PlanContext& scenario, std::span<const StageShape> shapes, std::uint32_t zero_stage,
                    const EppPlan& decisions, const std::string& strategy);

}  // namespace eppsim
