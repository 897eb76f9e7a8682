// Planning time of every strategy on one 512-sequence global batch: the
// quickstart and the shipped reproduction scenarios (FlexSP's 64-GPU Wikipedia setting, and the
// InfiniPipe settings with the most checkpoint ILPs). The target is under 2 s per plan on one core.
//   build/tests/bench/eppsim_planner_bench --benchmark_format=json
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "base/errors.h"
#include "sim/plan/planner.h"
#include "sim/run.h"
#include "schedule/program_ops.h"
#include "scenario/scenario.h"

namespace {

void plan_once(benchmark::State& state, const std::string& scenario_path, const std::string& strategy) {
  const auto sc = eppsim::load_scenario(std::filesystem::path(EPPSIM_SOURCE_DIR) / scenario_path,
                                        {"plan.strategy=" + strategy});
  const auto lengths = eppsim::sample_batch(sc);
  const auto planner = eppsim::make_planner(strategy, sc);
  const eppsim::PlanContext context(sc, eppsim::simulated_step_seconds);
  std::size_t ops = 0;
  for (auto _ : state) {
    try {
      const auto schedule = planner->plan(context, lengths);
      ops = static_cast<std::size_t>(eppsim::op_count(schedule));
      benchmark::DoNotOptimize(ops);
    } catch (const eppsim::InputError& e) {
      state.SkipWithError(e.what());
      return;
    }
  }
  state.counters["sequences"] = static_cast<double>(lengths.size());
  state.counters["schedule_ops"] = static_cast<double>(ops);
}

const int registered = [] {
  const std::vector<std::string> scenarios = {"scenarios/quickstart.textproto", "scenarios/flexsp/gpt67b_192k.textproto",
                                              "scenarios/infinipipe/llama13b_96k.textproto",
                                              "scenarios/infinipipe/llama30b_48k.textproto"};
  for (const auto& scenario : scenarios) {
    if (!std::filesystem::exists(std::filesystem::path(EPPSIM_SOURCE_DIR) / scenario)) continue;
    for (const auto& strategy : eppsim::planner_names()) {
      const std::string name = "Plan/" + std::filesystem::path(scenario).stem().string() + "/" + strategy;
      benchmark::RegisterBenchmark(name.c_str(), plan_once, scenario, strategy)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(2);
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
