// Speed of `eppsim topo`: building and measuring the networks of the shipped
// topology studies (Google Benchmark, one core). Targets (issue 3): under 30 s
// and 4 GiB for the 200K-chip RailX and for the 65,536-GPU 3-level fat-tree.
//
//   build/tests/bench/eppsim_topology_bench --benchmark_filter=RailX200K
//
// peak_rss_bytes is the process's peak resident set (getrusage) after the
// benchmark; run one benchmark per process (--benchmark_filter) to read it for
// that benchmark alone. With --benchmark_format=json --benchmark_out=FILE the
// results are JSON.
#include <chrono>
#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "base/peak_rss.h"
#include "models/topology/topology_metrics.h"
#include "sim/topo.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace {

ResolvedScenario shipped(const std::string& name) {
  return load_scenario(std::filesystem::path(EPPSIM_SOURCE_DIR) / "scenarios" / name);
}

// build_topology + measure_topology of the scenario's own network.
void build_and_measure(benchmark::State& state, const std::string& scenario_name) {
  const auto scenario = shipped(scenario_name);
  const TopologyConfig config = network_of(scenario);
  double build_s = 0.0, measure_s = 0.0;
  std::uint64_t chips = 0, links = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const auto topology = build_topology(config);
    const auto built = std::chrono::steady_clock::now();
    const auto metrics = measure_topology(*topology, scenario.cluster.prices);
    benchmark::DoNotOptimize(metrics.cost_usd);
    build_s += std::chrono::duration<double>(built - start).count();
    measure_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - built).count();
    chips = metrics.chips;
    links = metrics.links;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["chips"] = static_cast<double>(chips);
  state.counters["links"] = static_cast<double>(links);
  state.counters["build_s"] = build_s / n;
  state.counters["measure_s"] = measure_s / n;
  state.counters["peak_rss_bytes"] = peak_rss_bytes();
}

void BM_RailX200K(benchmark::State& state) { build_and_measure(state, "railx_200k.textproto"); }
void BM_FatTree65536(benchmark::State& state) { build_and_measure(state, "fat_tree_64k.textproto"); }

// What `eppsim topo scenarios/railx_200k.textproto` computes: RailX, the
// rail-only tree (5M links) and the 3D torus.
void BM_StudyRailX200K(benchmark::State& state) {
  const auto scenario = shipped("railx_200k.textproto");
  for (auto _ : state) benchmark::DoNotOptimize(run_topology_study(scenario).cost_usd());
  state.counters["peak_rss_bytes"] = peak_rss_bytes();
}

BENCHMARK(BM_RailX200K)->Unit(benchmark::kSecond)->Iterations(3);
BENCHMARK(BM_FatTree65536)->Unit(benchmark::kSecond)->Iterations(3);
BENCHMARK(BM_StudyRailX200K)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace eppsim

BENCHMARK_MAIN();
