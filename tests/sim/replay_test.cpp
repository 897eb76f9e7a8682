#include "sim/replay.h"

#include <cmath>
#include <map>
#include <utility>

#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/traces/chakra_fixture.h"
#include "traces/chakra/chakra_export.h"
#include "base/proto_io.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const fs::path kRing8 = fs::path(EPPSIM_SOURCE_DIR) / "scenarios" / "bench" / "ring8.textproto";

// Durations in ns per (rank, op) of the events of one kind class.
std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> durations(const proto::Trace& trace, bool compute) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> out;
  for (const OpEventRef e : events_of(trace)) {
    const bool is_compute = e.kind() == proto::COMPUTE;
    const bool is_comm = e.kind() == proto::SEND || e.kind() == proto::RECV || e.kind() == proto::COLLECTIVE;
    if (compute ? is_compute : is_comm) out[{e.rank(), e.op()}] = e.end_ns() - e.start_ns();
  }
  return out;
}

std::int64_t total(const std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t>& d) {
  std::int64_t sum = 0;
  for (const auto& [k, v] : d) sum += v;
  return sum;
}

// ring8 run once and written as a run directory (trace.pb, schedule.pb, scenario.textproto).
class ReplayRing8 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One folder per process: ctest runs each TEST of this suite as its own process, in parallel.
    dir_ = new fs::path(fs::temp_directory_path() / fmt::format("eppsim_replay_test-{}", ::getpid()));
    fs::remove_all(*dir_);
    recorded_ = new RunResult(run_scenario(load_scenario(kRing8)));
    write_run_directory(*recorded_, *dir_ / "run");
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete recorded_;
    delete dir_;
  }
  static ReplayRequest request() {
    ReplayRequest r;
    r.input = *dir_ / "run" / "trace.pb";
    return r;
  }
  static inline fs::path* dir_ = nullptr;
  static inline RunResult* recorded_ = nullptr;
};

TEST_F(ReplayRing8, OnItsOwnClusterWithRecordedComputeGivesTheSameStepTime) {
  const auto same = replay(request(), parse_scenario_file(kRing8));
  // Recorded durations are whole nanoseconds: rounding moves the step by a few ns at most.
  EXPECT_NEAR(static_cast<double>(same.trace.step_time_ns()), static_cast<double>(recorded_->trace.step_time_ns()), 100.0);
  EXPECT_EQ(durations(same.trace, true), durations(recorded_->trace, true));
}

TEST_F(ReplayRing8, CostModelComputeOnItsOwnClusterGivesTheSameStepTime) {
  auto r = request();
  r.compute = ReplayCompute::CostModel;
  const auto same = replay(r, parse_scenario_file(kRing8));
  EXPECT_EQ(same.trace.step_time_ns(), recorded_->trace.step_time_ns());
}

TEST_F(ReplayRing8, ATwiceFasterNetworkChangesOnlyTheCommunication) {
  const auto same = replay(request(), parse_scenario_file(kRing8));
  const auto fast = replay(request(), parse_scenario_file(kRing8, {"cluster.topology.torus.link.bandwidth=100GB/s"}));
  EXPECT_EQ(durations(fast.trace, true), durations(same.trace, true));
  const auto comm_same = total(durations(same.trace, false));
  const auto comm_fast = total(durations(fast.trace, false));
  EXPECT_LT(comm_fast, comm_same);
  EXPECT_LT(fast.trace.step_time_ns(), same.trace.step_time_ns());
}

TEST_F(ReplayRing8, ComputeScalesByThePeakFlopsRatio) {
  const auto slower = replay(request(), parse_scenario_file(kRing8, {"cluster.gpu.preset=A100-80GB"}));
  const auto before = durations(recorded_->trace, true);
  const auto after = durations(slower.trace, true);
  ASSERT_EQ(before.size(), after.size());
  const auto& [key, ns] = *before.begin();
  // H100-SXM over A100-80GB peak BF16 (models/gpu_spec.cpp): 989 / 312 TFLOP/s.
  EXPECT_NEAR(static_cast<double>(after.at(key)) / static_cast<double>(ns), 989.0 / 312.0, 1e-3);
}

TEST_F(ReplayRing8, NamesWhatIsMissing) {
  fs::create_directories(*dir_ / "bare");
  fs::copy_file(*dir_ / "run" / "trace.pb", *dir_ / "bare" / "trace.pb");
  ReplayRequest r;
  r.input = *dir_ / "bare" / "trace.pb";
  try {
    replay(r, parse_scenario_file(kRing8));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no schedule.pb beside it"));
  }
  r.schedule = *dir_ / "run" / "schedule.pb";
  try {
    replay(r, parse_scenario_file(kRing8));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--recorded-cluster"));
  }
  r.recorded_cluster = kRing8;
  EXPECT_EQ(replay(r, parse_scenario_file(kRing8)).trace.step_time_ns(),
            replay(request(), parse_scenario_file(kRing8)).trace.step_time_ns());
  EXPECT_THROW(parse_replay_compute("measured"), InputError);
}

TEST_F(ReplayRing8, AChakraExportReplaysLikeTheSchedule) {
  const fs::path prefix = *dir_ / "chakra" / "ring8";
  write_chakra_trace(export_chakra(recorded_->schedule), prefix);
  ReplayRequest r;
  r.input = prefix;
  r.compute = ReplayCompute::CostModel;  // the export keeps the compute ops' work
  const auto chakra = replay(r, parse_scenario_file(kRing8));
  EXPECT_EQ(chakra.trace.step_time_ns(), recorded_->trace.step_time_ns());
  // `eppsim sim PREFIX` reads the same schedule back.
  const auto loaded = load_schedule_on_cluster(prefix, parse_scenario_file(kRing8));
  EXPECT_EQ(loaded.schedule.programs_size(), recorded_->schedule.programs_size());
}

// Nodes of 8 GPUs on 25 GB/s, 1 us links: in one node the ring beats the tree for 1 MiB.
ParsedScenario one_node_cluster(const fs::path& dir, const std::string& engine, std::uint32_t nodes = 1) {
  const auto path = dir / "one_node.textproto";
  write_file_atomically(path, R"(name: "one_node"
model { preset: "llama2-7b" }
cluster {
  nodes: 1 gpus_per_node: 8
  gpu { preset: "H100-SXM" }
  intra_node { bandwidth: "25GB/s" latency: "1us" }
  inter_node { bandwidth: "200Gbps" latency: "5us" }
}
)");
  return parse_scenario_file(path, {"simulation.engine=" + engine, fmt::format("cluster.nodes={}", nodes)});
}

TEST(ReplayChakra, AstraSimAllReduceTakesTheRingClosedForm) {
  const auto data = testing::shared_chakra_dir();
  if (!fs::exists(data)) GTEST_SKIP() << data << " is absent (../shared/data beside the checkout)";
  const auto dir = fs::temp_directory_path() / "eppsim_replay_chakra_test";
  fs::create_directories(dir);
  ReplayRequest r;
  r.input = data / "all_reduce_8npus_1MB" / "all_reduce";
  const auto analytic = replay(r, one_node_cluster(dir, "analytic"));
  // 2(n-1) alpha + 2(n-1)/n S/B, n = 8, S = 1 MiB, B = 25e9 B/s, alpha = 1 us.
  const double ring_s = 14 * 1e-6 + 14.0 / 8.0 * 1048576.0 / 25e9;
  EXPECT_NEAR(static_cast<double>(analytic.trace.step_time_ns()) * 1e-9, ring_s, 2e-9);
  const auto flow = replay(r, one_node_cluster(dir, "flow"));
  EXPECT_GT(flow.trace.step_time_ns(), 0);
  EXPECT_EQ(flow.trace.engine(), "flow");
  // The hand-written ring (sends, receives and their dependencies) and the all-gather run too.
  r.input = data / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce";
  EXPECT_GT(replay(r, one_node_cluster(dir, "analytic")).trace.step_time_ns(), 0);
  EXPECT_GT(replay(r, one_node_cluster(dir, "flow")).trace.step_time_ns(), 0);
  // The 16-rank all-gather on two such nodes, both engines.
  r.input = data / "all_gather_16npus_1MB" / "all_gather";
  EXPECT_GT(replay(r, one_node_cluster(dir, "analytic", 2)).trace.step_time_ns(), 0);
  EXPECT_GT(replay(r, one_node_cluster(dir, "flow", 2)).trace.step_time_ns(), 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace eppsim
