// Speed of the main flow: planning and simulating one packed-1f1b training step
// of the quickstart model on growing clusters (Google Benchmark; run with
// --benchmark_format=json --benchmark_out=FILE for JSON).
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "sim/engine/analytic_engine.h"
#include "sim/run.h"
#include "schedule/program_ops.h"

namespace eppsim {
namespace {

// The quickstart on `nodes` nodes of 8 GPUs, 128 sequences per data-parallel replica.
ResolvedScenario scaled_quickstart(std::uint32_t nodes) {
  const std::uint32_t replicas = nodes * 8 / 4;
  return load_scenario(EPPSIM_SOURCE_DIR "/scenarios/quickstart.textproto",
                       {"cluster.nodes=" + std::to_string(nodes),
                        "workload.global_batch=" + std::to_string(128 * replicas)});
}

void BM_PlanPacked1F1B(benchmark::State& state) {
  const auto scenario = scaled_quickstart(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(plan_scenario(scenario).schedule.num_ranks());
  state.counters["gpus"] = static_cast<double>(scenario.cluster.total_gpus());
}

void BM_SimulateAnalytic(benchmark::State& state) {
  const auto scenario = scaled_quickstart(static_cast<std::uint32_t>(state.range(0)));
  const auto planned = plan_scenario(scenario);
  const auto ops = static_cast<std::size_t>(op_count(planned.schedule));
  for (auto _ : state) benchmark::DoNotOptimize(simulate_schedule(planned.schedule, scenario, 0.0).report.step_time_s());
  state.counters["gpus"] = static_cast<double>(scenario.cluster.total_gpus());
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate);
}

// The engine alone: validation, execution and the trace, without copying the
// schedule or building the report (simple-cluster network, roofline compute,
// endpoints shared on the scenario's nodes; BM_ExecuteAnalyticUnshared: each
// transfer and collective with its uncontended time, the cost of sharing;
// BM_ExecuteAnalyticInterference: with interference on, at its default factors).
void execute_analytic(benchmark::State& state, bool share_endpoints, bool interference = false) {
  const auto scenario = scaled_quickstart(static_cast<std::uint32_t>(state.range(0)));
  const auto planned = plan_scenario(scenario);
  const auto ops = static_cast<std::size_t>(op_count(planned.schedule));
  std::vector<std::uint32_t> node_of_rank;
  for (std::uint32_t r = 0; r < planned.schedule.num_ranks(); ++r) node_of_rank.push_back(scenario.node_of_rank(r));
  AnalyticEngineOptions options;
  options.node_of_rank = node_of_rank;
  options.share_endpoints = share_endpoints;
  options.interference.enabled = interference;
  for (auto _ : state) benchmark::DoNotOptimize(run_analytic(planned.schedule, *scenario.cost.model, options).step_time_ns());
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ExecuteAnalytic(benchmark::State& state) { execute_analytic(state, true); }
void BM_ExecuteAnalyticUnshared(benchmark::State& state) { execute_analytic(state, false); }
void BM_ExecuteAnalyticInterference(benchmark::State& state) { execute_analytic(state, true, true); }

BENCHMARK(BM_PlanPacked1F1B)->Arg(2)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulateAnalytic)->Arg(2)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExecuteAnalytic)->Arg(2)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExecuteAnalyticUnshared)->Arg(2)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExecuteAnalyticInterference)->Arg(2)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace eppsim

BENCHMARK_MAIN();
