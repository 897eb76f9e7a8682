// Collective micro-benchmarks (workload.collective): the Schedule's shape, the
// simulated times against the closed forms of models/network/closed_form_network.h on
// a ring of chips one link apart, chunking, groups, and nccl-tests' algbw and
// busbw.
#include "sim/plan/collective_benchmark.h"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/run.h"
#include "schedule/program_ops.h"

namespace eppsim {
namespace {

constexpr double kAlpha = 500e-9;      // s, one ring link
constexpr double kBandwidth = 50e9;    // B/s, one ring link per direction
constexpr double kMiB = 1024.0 * 1024.0;

// A ring of `n` chips (one per node) joined by 50 GB/s, 500 ns links, running
// `collective` (the body of workload.collective).
ResolvedScenario ring(std::uint32_t n, const std::string& collective) {
  const std::string text = fmt::format(R"(
name: "ring"
cluster {{
  nodes: {0} gpus_per_node: 1
  gpu {{ preset: "H100-SXM" }}
  topology {{ torus {{ dims: [{0}] link {{ bandwidth: "50GB/s" latency: "500ns" }} }} }}
}}
workload {{ collective {{ {1} }} }}
)",
                                       n, collective);
  return resolve_full(parse_scenario(text, "ring.textproto", "."));
}

double simulated_seconds(const ResolvedScenario& scenario) { return run_scenario(scenario).report.step_time_s(); }

// The engine times ops in whole nanoseconds: each collective op may lose up to 1 ns.
void expect_seconds(double actual, double expected, int ops) {
  EXPECT_NEAR(actual, expected, 1e-9 * ops + 1e-12) << "expected " << expected << " s";
}

// 2(N-1)a + 2(N-1)/N S/B: a ring all-reduce sent as one chunk.
double ring_all_reduce(double n, double bytes) { return 2 * (n - 1) * kAlpha + 2 * (n - 1) / n * bytes / kBandwidth; }

TEST(CollectiveBenchmark, ScheduleHasOneOpPerRankPerChunkOnACommStream) {
  const auto scenario = ring(8, R"(kind: ALL_REDUCE bytes: "1001" algorithm: RING chunks: 4 iterations: 2)");
  const auto schedule = plan_collective_benchmark(scenario);
  EXPECT_EQ(schedule.strategy(), "collective");
  EXPECT_EQ(schedule.header().producer().find("planner collective") != std::string::npos, true);
  EXPECT_FALSE(schedule.header().has_model());  // the scenario names none
  ASSERT_EQ(schedule.num_ranks(), 8u);
  ASSERT_EQ(schedule.groups_size(), 1);
  EXPECT_EQ(schedule.groups(0).ranks_size(), 8);
  ASSERT_EQ(schedule.stream_names_size(), 1);
  EXPECT_EQ(schedule.stream_names(0), "comm");
  for (std::uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(schedule.placement(static_cast<int>(r)).node(), r);
    const auto ops = ops_of(schedule, r);
    ASSERT_EQ(ops.size(), 8u);  // 2 iterations x 4 chunks
    std::uint64_t per_iteration = 0;
    for (std::uint32_t i = 0; i < 4; ++i) {
      const OpView c = ops[i];
      EXPECT_TRUE(c.is_collective());
      EXPECT_EQ(c.collective_kind(), proto::ALL_REDUCE);
      EXPECT_EQ(c.algorithm(), proto::RING);
      EXPECT_EQ(c.group(), 0u);
      EXPECT_EQ(c.size_bytes(), i == 0 ? 251u : 250u);  // 1001 = 251 + 3 x 250
      per_iteration += c.size_bytes();
    }
    EXPECT_EQ(per_iteration, 1001u);
  }
}

TEST(CollectiveBenchmark, RingAllReduceMatchesTheClosedFormAt8And1024Ranks) {
  for (const std::uint32_t n : {8u, 1024u}) {
    const auto result = run_scenario(ring(n, R"(kind: ALL_REDUCE bytes: "1MiB" algorithm: RING)"));
    const double expected = ring_all_reduce(n, kMiB);
    expect_seconds(result.report.step_time_s(), expected, 1);
    const auto& c = result.report.collective();
    expect_seconds(c.time_s(), expected, 1);
    EXPECT_EQ(c.ranks(), n);
    EXPECT_EQ(c.kind(), "ALL_REDUCE");
    EXPECT_EQ(c.algorithm(), "RING");
    // nccl-tests: algbw = S / t, busbw = algbw x 2(n-1)/n.
    EXPECT_DOUBLE_EQ(c.algbw_bps(), kMiB / c.time_s());
    EXPECT_DOUBLE_EQ(c.busbw_bps(), c.algbw_bps() * 2.0 * (n - 1) / n);
  }
}

// Chunks go back to back: c chunks pay the latency term c times and the
// bandwidth term once.
TEST(CollectiveBenchmark, ChunksMultiplyTheLatencyTermOnly) {
  const double n = 8;
  for (const std::uint32_t chunks : {1u, 4u, 16u}) {
    const auto scenario = ring(8, fmt::format(R"(kind: ALL_REDUCE bytes: "1MiB" algorithm: RING chunks: {})", chunks));
    const double expected = chunks * 2 * (n - 1) * kAlpha + 2 * (n - 1) / n * kMiB / kBandwidth;
    expect_seconds(simulated_seconds(scenario), expected, static_cast<int>(chunks));
  }
}

TEST(CollectiveBenchmark, IterationsRepeatTheCollective) {
  const auto once = run_scenario(ring(8, R"(kind: ALL_REDUCE bytes: "1MiB" algorithm: RING)"));
  const auto thrice = run_scenario(ring(8, R"(kind: ALL_REDUCE bytes: "1MiB" algorithm: RING iterations: 3)"));
  EXPECT_NEAR(thrice.report.step_time_s(), 3 * once.report.step_time_s(), 1e-12);
  EXPECT_NEAR(thrice.report.collective().time_s(), once.report.collective().time_s(), 1e-12);
  EXPECT_EQ(thrice.report.collective().iterations(), 3u);
}

// Members every other chip: ring neighbours two links apart, so twice the latency.
TEST(CollectiveBenchmark, StrideSpreadsTheGroup) {
  const auto scenario = ring(8, R"(kind: ALL_REDUCE bytes: "1MiB" algorithm: RING stride: 2)");
  ASSERT_EQ(scenario.workload.collective->group_size, 4u);
  const auto result = run_scenario(scenario);
  for (std::uint32_t r = 0; r < 4; ++r) EXPECT_EQ(result.schedule.placement(static_cast<int>(r)).node(), 2 * r);
  const double n = 4;
  expect_seconds(result.report.step_time_s(), 2 * (n - 1) * 2 * kAlpha + 2 * (n - 1) / n * kMiB / kBandwidth, 1);
  const auto small = run_scenario(ring(8, R"(kind: ALL_REDUCE bytes: "1MiB" algorithm: RING group_size: 3)"));
  EXPECT_EQ(small.schedule.num_ranks(), 3u);
}

TEST(CollectiveBenchmark, OtherKindsMatchTheirClosedForms) {
  const double n = 8;
  expect_seconds(simulated_seconds(ring(8, R"(kind: ALL_GATHER bytes: "1MiB" algorithm: RING)")),
                 (n - 1) * kAlpha + (n - 1) * kMiB / kBandwidth, 1);
  expect_seconds(simulated_seconds(ring(8, R"(kind: REDUCE_SCATTER bytes: "1MiB" algorithm: RING)")),
                 (n - 1) * kAlpha + (n - 1) / n * kMiB / kBandwidth, 1);
}

// nccl-tests' definitions (PERFORMANCE.md): the data is the per-rank buffer but
// for all-gather (the gathered output); the busbw factors per kind.
TEST(CollectiveBenchmark, AlgbwAndBusbwAsNcclTestsDefineThem) {
  CollectiveBenchmarkSpec spec;
  spec.size = Bytes(1000);
  spec.group_size = 4;
  spec.iterations = 2;
  const struct {
    proto::CollectiveKind kind;
    double data, factor;
  } cases[] = {{proto::ALL_REDUCE, 1000, 1.5},   {proto::ALL_GATHER, 4000, 0.75}, {proto::REDUCE_SCATTER, 1000, 0.75},
               {proto::ALL_TO_ALL, 1000, 0.75},  {proto::BROADCAST, 1000, 1.0}};
  for (const auto& c : cases) {
    spec.kind = c.kind;
    const auto report = collective_report(spec, 2e-6);  // two iterations of 1 us
    EXPECT_DOUBLE_EQ(report.time_s(), 1e-6) << report.kind();
    EXPECT_DOUBLE_EQ(report.algbw_bps(), c.data / 1e-6) << report.kind();
    EXPECT_DOUBLE_EQ(report.busbw_bps(), c.data / 1e-6 * c.factor) << report.kind();
  }
}

TEST(CollectiveBenchmark, HumanSummaryGivesTimeAndBandwidths) {
  const auto summary = human_summary(run_scenario(ring(8, R"(kind: ALL_REDUCE bytes: "1MiB" algorithm: RING)")));
  EXPECT_NE(summary.find("ALL_REDUCE of 1 MiB per rank over 8 ranks"), std::string::npos) << summary;
  EXPECT_NE(summary.find("busbw"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("tokens/s"), std::string::npos) << summary;
}

}  // namespace
}  // namespace eppsim
