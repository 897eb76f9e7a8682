#pragma once
// The main flow as a library: scenario -> planner -> Schedule -> engine -> Trace
// -> Report, and the run directory that holds the results.
#include <filesystem>
#include <string>

#include "traces/report.pb.h"
#include "traces/scenario.h"
#include "traces/schedule.pb.h"
#include "traces/trace.pb.h"

namespace eppsim {

struct PlannedBatch {
  proto::Schedule schedule;
  double plan_time_s = 0.0;
};

struct RunResult {
  proto::Schedule schedule;
  proto::Trace trace;
  proto::Report report;
  // Wall-clock seconds, for the console only (result files hold no timings,
  // so that the same inputs give the same files).
  double plan_time_s = 0.0;
  double simulation_time_s = 0.0;
};

// The step time in seconds of `schedule` run by the scenario's engine and cost
// model: the ScheduleEvaluator (sim/plan/planner.h) that planners score
// candidate plans with.
double simulated_step_seconds(const proto::Schedule& schedule, const ResolvedScenario& scenario);

// Samples the scenario's global batch and plans it with the scenario's strategy.
PlannedBatch plan_scenario(const ResolvedScenario& scenario);

// Runs `schedule` on the scenario's cluster with the scenario's engine and cost
// model; `plan_time_s` is passed through to the result.
RunResult simulate_schedule(proto::Schedule schedule, const ResolvedScenario& cluster, double plan_time_s);

// plan_scenario + simulate_schedule.
RunResult run_scenario(const ResolvedScenario& scenario);

// Writes report.json, trace.pb, trace.json (Chrome trace), ops.csv, memory.csv,
// ranks.csv and schedule.pb into `dir` (created if missing), each atomically.
void write_run_directory(const RunResult& result, const std::filesystem::path& dir);

// A few lines for people: step time, throughput, MFU, breakdown, memory.
std::string human_summary(const RunResult& result);

}  // namespace eppsim
