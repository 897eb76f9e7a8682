// Speed of the flow engine (issue 10, item 5: a 1,024-rank ring all-reduce in
// under 10 s): one 1 MiB ring all-reduce over N ranks on a ring of 50 GB/s,
// 500 ns links, run by the flow engine (a forked SimGrid simulation per
// iteration). Counters: the simulated time and its ratio to the closed form
// 2(N-1) a + 2(N-1)/N S/B. Run with --benchmark_format=json for JSON.
#include <cmath>
#include <cstdint>
#include <numeric>

#include <benchmark/benchmark.h>

#include "sim/engine/flow_engine.h"
#include "tests/sim/flow_fixture.h"
#include "tests/schedule/schedule_fixture.h"

namespace eppsim {
namespace {

void BM_FlowRingAllReduce(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const double bandwidth = 50e9, latency = 500e-9, size = 1 << 20;
  const testing::FlowCluster cluster(testing::ring_topology(n, testing::link(bandwidth, latency)));
  testing::HandSchedule h(n);
  auto* g = h.schedule().add_groups();
  g->set_id(0);
  for (std::uint32_t r = 0; r < n; ++r) g->add_ranks(r);
  for (std::uint32_t r = 0; r < n; ++r) {
    h.collective(r, 1, 0, static_cast<std::uint64_t>(size), proto::ALL_REDUCE, {}, proto::RING);
  }
  double simulated = 0.0;
  for (auto _ : state) simulated = static_cast<double>(run_flow(h.schedule(), cluster.context()).step_time_ns()) * 1e-9;
  const double closed = 2.0 * (n - 1) * latency + 2.0 * (n - 1) / n * size / bandwidth;
  state.counters["ranks"] = n;
  state.counters["simulated_s"] = simulated;
  state.counters["vs_closed_form"] = simulated / closed;
}

BENCHMARK(BM_FlowRingAllReduce)->Arg(64)->Arg(1024)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace eppsim

BENCHMARK_MAIN();
