#pragma once
// The analytic engine: an event-driven executor of a Schedule on the executor
// core (traces/executor/executor_core.h), which holds the Schedule's semantics:
// readiness, stream order, matching, memory, deadlock and mismatch diagnosis,
// the trace. The engine supplies time: a COMPUTE op takes the cost model's
// duration, a matched transfer the model's uncontended point-to-point time, a
// collective the model's time over its group's placement (traces/op_cost.h;
// DURATION_FIXED ops take their fixed duration). Completions are kept in one
// event heap, in time order, ties in the order they were scheduled.
//
// A malformed schedule is an InputError (schedule_validation.h); a deadlock
// throws ScheduleDeadlock, mismatched transfers or collectives ScheduleMismatch.
#include <cstddef>

#include "models/cost_model.h"
#include "traces/executor/executor_core.h"
#include "traces/executor/schedule_validation.h"
#include "traces/schedule.pb.h"
#include "traces/trace.pb.h"

namespace eppsim {

struct AnalyticEngineOptions {
  std::size_t max_blocked_ops_reported = 20;
};

proto::Trace run_analytic(const proto::Schedule& schedule, const CostModel& cost,
                          const AnalyticEngineOptions& options = {});

}  // namespace eppsim
