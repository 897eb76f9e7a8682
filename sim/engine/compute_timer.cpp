#include "sim/engine/compute_timer.h"

#include <vector>

#include "traces/op_cost.h"

namespace eppsim {

ComputeTimer cost_model_timer(const CostModel& cost) {
  return [&cost, segments = std::vector<Segment>()](const proto::ComputeOp& op) mutable {
    return compute_duration(cost, op, segments);
  };
}

ComputeTimer planner_estimate_timer() {
  return [](const proto::ComputeOp& op) { return Seconds(static_cast<double>(op.estimated_duration_ns()) * 1e-9); };
}

}  // namespace eppsim
