// Planning time of `flexsp`: one 512-sequence Wikipedia batch on 64 GPUs
// (8 nodes x 8), GPT-7B with FlexSP's constants, 28 GB per GPU, max 192K.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "sim/plan/flexsp.h"
#include "traces/scenario.h"

namespace {

eppsim::ResolvedScenario wikipedia_64(double time_limit_s) {
  const std::string text = fmt::format(R"(
    name: "flexsp-bench"
    seed: 1
    model {{ preset: "gpt-6.7b" }}
    cluster {{
      nodes: 8 gpus_per_node: 8
      gpu {{ preset: "A100-80GB" }}
      intra_node {{ bandwidth: "300GB/s" latency: "2us" }}
      inter_node {{ bandwidth: "200Gbps" latency: "5us" }}
    }}
    workload {{ lengths {{ distribution: "wikipedia" }} global_batch: 512 max_length: 196608 over_max_length: DROP }}
    plan {{ strategy: "flexsp" memory_fraction: 0.35 flexsp {{ solver_time_limit_s: {} }} }}
  )",
                                       time_limit_s);
  return eppsim::resolve_scenario(eppsim::parse_scenario_text(text, "bench.textproto"), "bench.textproto", ".");
}

void BM_FlexSpPlanWikipedia64(benchmark::State& state) {
  const auto sc = wikipedia_64(static_cast<double>(state.range(0)) / 1000.0);
  const auto lengths = eppsim::sample_batch(sc);
  double step = 0.0;
  std::size_t micro_batches = 0, milp = 0;
  for (auto _ : state) {
    const auto plan = eppsim::plan_flexsp(sc, lengths);
    step = plan.step_time_s;
    micro_batches = plan.micro_batches.size();
    milp = 0;
    for (const auto& mb : plan.micro_batches) milp += mb.solved_by_milp ? 1 : 0;
    benchmark::DoNotOptimize(step);
  }
  state.counters["planned_step_s"] = step;
  state.counters["micro_batches"] = static_cast<double>(micro_batches);
  state.counters["milp_improved"] = static_cast<double>(milp);
}
// Argument: the per-MILP time limit in ms (1000 = the default 1 s).
BENCHMARK(BM_FlexSpPlanWikipedia64)->Arg(1000)->Arg(250)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
