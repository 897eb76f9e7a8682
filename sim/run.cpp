#include "sim/run.h"

#include <chrono>

#include <fmt/format.h>

#include "models/errors.h"
#include "sim/engine/analytic_engine.h"
#include "sim/engine/compute_timer.h"
#include "sim/engine/network_model.h"
#include "sim/plan/planner.h"
#include "traces/chrome_trace.h"
#include "traces/cost_model_factory.h"
#include "traces/csv_export.h"
#include "traces/proto_io.h"
#include "traces/trace_report.h"

namespace eppsim {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The cost model for the schedule's placement: the scenario's own when the
// schedule keeps the default one (rank r on the r-th usable GPU), else one
// built for it (traces/cost_model_factory.h checks the placement).
std::shared_ptr<const CostModel> cost_for(const proto::Schedule& schedule, const ResolvedScenario& scenario) {
  if (schedule.placement_size() == 0) return scenario.cost;
  std::vector<RankPlacement> placement(schedule.num_ranks());
  bool is_default = true;
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    const auto& p = schedule.placement(static_cast<int>(r));
    placement[r] = RankPlacement{p.node(), p.local_gpu()};
    is_default = is_default && p.node() == scenario.node_of_rank(r) && p.local_gpu() == scenario.local_gpu_of_rank(r);
  }
  return is_default ? scenario.cost : make_cost_model(scenario, placement);
}

proto::Trace run_engine(const proto::Schedule& schedule, const ResolvedScenario& scenario) {
  if (schedule.num_ranks() > scenario.usable_gpus()) {
    throw InputError(fmt::format("schedule has {} ranks but {} has only {} usable GPUs", schedule.num_ranks(),
                                 scenario.source, scenario.usable_gpus()));
  }
  const auto cost = cost_for(schedule, scenario);
  return run_analytic(schedule, CostModelNetwork(*cost), cost_model_timer(*cost));
}

}  // namespace

double simulated_step_seconds(const proto::Schedule& schedule, const ResolvedScenario& scenario) {
  return static_cast<double>(run_engine(schedule, scenario).step_time_ns()) * 1e-9;
}

PlannedBatch plan_scenario(const ResolvedScenario& scenario) {
  const auto start = std::chrono::steady_clock::now();
  const auto planner = make_planner(scenario.strategy, simulated_step_seconds);
  const auto lengths = sample_batch(scenario);
  PlannedBatch planned;
  planned.schedule = planner->plan(scenario, lengths);
  planned.plan_time_s = seconds_since(start);
  return planned;
}

RunResult simulate_schedule(proto::Schedule schedule, const ResolvedScenario& cluster, double plan_time_s) {
  if (cluster.engine != "analytic") {
    throw InputError(fmt::format("{}: simulation.engine: unknown engine '{}' (available: analytic)", cluster.source,
                                 cluster.engine));
  }
  const auto start = std::chrono::steady_clock::now();
  RunResult result;
  result.trace = run_engine(schedule, cluster);
  RunContext context;
  context.scenario = cluster.proto.name();
  context.peak_flops_per_gpu = cluster.cluster.gpu.peak_bf16.value;
  context.seed = cluster.seed;
  result.report = build_report(result.trace, schedule, context);
  result.plan_time_s = plan_time_s;
  result.simulation_time_s = seconds_since(start);
  result.schedule = std::move(schedule);
  return result;
}

RunResult run_scenario(const ResolvedScenario& scenario) {
  auto planned = plan_scenario(scenario);
  return simulate_schedule(std::move(planned.schedule), scenario, planned.plan_time_s);
}

void write_run_directory(const RunResult& result, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  write_message(result.report, dir / "report.json");
  write_message(result.trace, dir / "trace.pb");
  write_message(result.schedule, dir / "schedule.pb");
  write_chrome_trace(result.trace, dir / "trace.json");
  write_ops_csv(result.trace, dir / "ops.csv");
  write_memory_csv(result.trace, dir / "memory.csv");
  write_ranks_csv(result.report, dir / "ranks.csv");
}

std::string human_summary(const RunResult& result) {
  const proto::Report& r = result.report;
  const double step = r.step_time_s();
  auto share = [&](double part) { return step > 0 ? 100.0 * part / step : 0.0; };
  const auto& b = r.breakdown_s();
  double peak = 0;
  std::uint32_t peak_rank = 0;
  for (int i = 0; i < r.peak_memory_bytes_size(); ++i) {
    if (r.peak_memory_bytes(i) > peak) {
      peak = r.peak_memory_bytes(i);
      peak_rank = static_cast<std::uint32_t>(i);
    }
  }
  std::string out;
  out += fmt::format("eppsim {}: {} ({}, {} engine)\n", r.eppsim_version(), r.scenario(), r.strategy(), r.engine());
  out += fmt::format("  ranks        {} ({} pipeline stages x {} data-parallel), {} micro-batches\n", r.ranks(),
                     r.pipeline_stages(), r.data_parallel(), r.micro_batches());
  out += fmt::format("  step time    {:.4f} s for {} sequences, {:.0f} tokens\n", step, r.sequences(), r.tokens());
  out += fmt::format("  throughput   {:.0f} tokens/s, MFU {:.1f}%\n", r.tokens_per_s(), 100.0 * r.mfu());
  out += fmt::format("  breakdown    compute {:.1f}%, recompute {:.1f}%, exposed communication {:.1f}%, bubble {:.1f}%\n",
                     share(b.compute()), share(b.recompute()), share(b.communication()), share(b.bubble()));
  out += fmt::format("  peak memory  {} on rank {} (limit {})\n", format_bytes(Bytes(static_cast<std::uint64_t>(peak))),
                     peak_rank, format_bytes(Bytes(static_cast<std::uint64_t>(r.memory_limit_bytes()))));
  out += fmt::format("  took         planning {:.3f} s, simulation {:.3f} s\n", result.plan_time_s, result.simulation_time_s);
  return out;
}

}  // namespace eppsim
