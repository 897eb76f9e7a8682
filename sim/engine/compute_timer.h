#pragma once
// How an engine times a COMPUTE op: from the cost model (the default), or from
// the planner's estimate carried in the op.
#include <functional>

#include "models/compute_cost.h"
#include "models/gpu_spec.h"
#include "models/units.h"
#include "traces/schedule.pb.h"

namespace eppsim {

using ComputeTimer = std::function<Seconds(const proto::ComputeOp&)>;

// Forward, backward and recompute ops are priced by `cost` from their segments
// and layers (this rank's share of the op's shards, its layer part); optimizer ops by their memory traffic
// over the GPU's HBM bandwidth.
// `cost` must outlive the timer.
ComputeTimer cost_model_timer(const ComputeCostModel& cost, const GpuSpec& gpu);
// The op's estimated_duration_ns, as the planner wrote it.
ComputeTimer planner_estimate_timer();

}  // namespace eppsim
