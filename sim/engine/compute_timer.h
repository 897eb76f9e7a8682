#pragma once
// How an engine times a COMPUTE op: from the cost model (the default), or from
// the planner's estimate carried in the op.
#include <functional>

#include "models/cost_model.h"
#include "models/units.h"
#include "traces/schedule.pb.h"

namespace eppsim {

using ComputeTimer = std::function<Seconds(const proto::ComputeOp&)>;

// The op priced by `cost` (traces/op_cost.h's compute_duration: forward,
// backward and recompute by their work, optimizer steps by their memory
// traffic). `cost` must outlive the timer.
ComputeTimer cost_model_timer(const CostModel& cost);
// The op's estimated_duration_ns, as the planner wrote it.
ComputeTimer planner_estimate_timer();

}  // namespace eppsim
