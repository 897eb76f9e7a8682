#include "runtime/bench/compute_bench.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "base/errors.h"
#include "runtime/cpu/cpu_compute_queue.h"
#include "runtime/kernel_plan.h"
#include "base/proto_io.h"

namespace eppsim::runtime {
namespace {

namespace fs = std::filesystem;

// A scaled-down Llama (2 layers, h 64, 4 heads over 2 K/V heads) with 128-token sequences.
constexpr const char* kScenario = R"(
name: "bench-tiny"
model { layers: 2 hidden_size: 64 attention_heads: 4 kv_heads: 2 ffn_hidden_size: 128 vocab_size: 512 ffn_kind: SWIGLU }
cluster {
  nodes: 1
  gpus_per_node: 1
  gpu { preset: "A100-80GB" }
  intra_node { bandwidth: "300GB/s" latency: "2us" }
  inter_node { bandwidth: "200Gbps" latency: "5us" }
}
workload { lengths { distribution: "wikipedia" } global_batch: 4 max_length: 128 over_max_length: TRUNCATE }
plan { strategy: "packed-1f1b" packed_1f1b { pipeline_stages: 1 micro_batch_tokens: 128 } }
)";

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("eppsim_compute_bench_" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

int run(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return run_compute_bench(static_cast<int>(argv.size()), argv.data());
}

ComputeBenchOptions parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_compute_bench_args(static_cast<int>(argv.size()), argv.data());
}

TEST(ComputeBench, DefaultGridIsPowersOfTwoWithThreeContextsAndPackedRowsOnCuda) {
  ComputeBenchOptions options;
  options.backend = "cpu";
  EXPECT_EQ(compute_bench_grid(options, 300).size(), 12u);  // 64, 128, 256, 300 x {0, s, 2s}
  options.backend = "cuda";
  const std::vector<GridPoint> grid = compute_bench_grid(options, 300);
  ASSERT_EQ(grid.size(), 14u);  // 64, 128, 256, 300 x {0, s, 2s}; 2 and 4 sequences of 64
  EXPECT_EQ(grid[0].tokens, 64u);
  EXPECT_EQ(grid[0].segments, 1u);
  EXPECT_EQ(grid[2].context_tokens, 128u);
  EXPECT_EQ(grid[9].tokens, 300u);
  EXPECT_EQ(grid[11].context_tokens, 600u);
  EXPECT_EQ(grid[12].tokens, 64u);
  EXPECT_EQ(grid[12].segments, 2u);
  EXPECT_EQ(grid[13].segments, 4u);  // 8 x 64 would pass 300 tokens
  EXPECT_EQ(grid[13].context_tokens, 0u);
  options.tokens = {100};
  options.contexts = {0, 7};
  const std::vector<GridPoint> given = compute_bench_grid(options, 300);  // no packed rows unless asked
  ASSERT_EQ(given.size(), 2u);
  EXPECT_EQ(given[1].tokens, 100u);
  EXPECT_EQ(given[1].context_tokens, 7u);
  options.packed = {5};
  const std::vector<GridPoint> packed = compute_bench_grid(options, 300);
  ASSERT_EQ(packed.size(), 7u);  // and 2, 4, ... 32 sequences of 5 (at most 32)
  EXPECT_EQ(packed[6].tokens, 5u);
  EXPECT_EQ(packed[6].segments, 32u);
}

TEST(ComputeBench, ArgumentsAreChecked) {
  const ComputeBenchOptions o =
      parse({"--scenario", "s.textproto", "--backend", "cpu", "--out", "b.json", "--tokens", "64,256", "--repeats", "3"});
  EXPECT_EQ(o.tokens, (std::vector<std::uint64_t>{64, 256}));
  EXPECT_EQ(o.repeats, 3u);
  EXPECT_EQ(parse({"--scenario", "s", "--backend", "cpu", "--out", "b", "--packed", "16,32"}).packed,
            (std::vector<std::uint64_t>{16, 32}));
  EXPECT_THROW(parse({"--scenario", "s", "--backend", "cpu", "--out", "b", "--packed", "0"}), InputError);
  EXPECT_THROW(parse({"--scenario", "s", "--backend", "tpu", "--out", "b.json"}), InputError);
  EXPECT_THROW(parse({"--scenario", "s", "--backend", "cpu"}), InputError);
  EXPECT_THROW(parse({"--scenario", "s", "--backend", "cpu", "--out", "b", "--tokens", "64,x"}), InputError);
  EXPECT_THROW(parse({"--scenario", "s", "--backend", "cpu", "--out", "b", "--repeats", "0"}), InputError);
  EXPECT_THROW(parse({"--scenario", "s", "--backend", "cpu", "--out", "b", "--bogus"}), InputError);
}

TEST(ComputeBench, TimesBackToBackRuns) {
  StepClock clock;
  const auto queue = make_cpu_compute_queue(clock);
  KernelPlan plan;
  plan.gemms.push_back(GemmShape{.m = 64, .n = 64, .k = 64, .count = 4, .name = "qkv"});
  const std::vector<double> times = time_plan(*queue, plan, 2, 3);
  ASSERT_EQ(times.size(), 3u);
  for (double t : times) EXPECT_GT(t, 0.0);
  EXPECT_EQ(queue->in_flight(), 0u);
}

TEST(ComputeBench, TimesPlansInRoundsEachByItsOwnRuns) {
  StepClock clock;
  const auto queue = make_cpu_compute_queue(clock);
  std::vector<KernelPlan> plans(2);
  plans[0].gemms.push_back(GemmShape{.m = 32, .n = 32, .k = 32, .count = 1, .name = "small"});
  plans[1].gemms.push_back(GemmShape{.m = 512, .n = 512, .k = 512, .count = 4, .name = "large"});  // 16,384x the FLOPs
  const auto times = time_plans(*queue, plans, 1, 3);
  ASSERT_EQ(times.size(), 2u);
  ASSERT_EQ(times[0].size(), 3u);
  ASSERT_EQ(times[1].size(), 3u);
  // Each run is timed from the end of the run before it, the other plan's:
  // the large plan's runs are the long ones (medians: one run may lose its core).
  const auto median = [](std::vector<double> t) {
    std::ranges::sort(t);
    return t[1];
  };
  EXPECT_LT(median(times[0]), median(times[1]));
  EXPECT_EQ(queue->in_flight(), 0u);
}

TEST(ComputeBench, WritesBenchJson) {
  TempDir dir;
  const fs::path scenario = dir.path() / "tiny.textproto";
  std::ofstream(scenario) << kScenario;
  const fs::path out = dir.path() / "BENCH.json";
  ASSERT_EQ(run({"--scenario", scenario.string(), "--backend", "cpu", "--out", out.string(), "--tokens", "32,64",
                 "--packed", "32", "--repeats", "2"}),
            0);
  google::protobuf::Struct doc;
  from_json(read_file(out), &doc, out.string());
  const auto& top = doc.fields();
  EXPECT_EQ(top.at("eppsim_bench").number_value(), 1.0);
  EXPECT_EQ(top.at("kind").string_value(), "compute");
  EXPECT_EQ(top.at("backend").string_value(), "cpu");
  EXPECT_NE(top.at("device").string_value().find("(1 thread)"), std::string::npos);
  EXPECT_EQ(top.at("ranks").number_value(), 1.0);
  EXPECT_EQ(top.at("model").struct_value().fields().at("hidden_size").number_value(), 64.0);
  int layers = 0, packed = 0, gemms = 0, attention = 0;
  std::set<double> lm_head_m;
  for (const auto& value : top.at("results").list_value().values()) {
    const auto& row = value.struct_value().fields();
    const std::string kernel = row.at("kernel").string_value();
    const std::string pass = row.at("pass").string_value();
    EXPECT_TRUE(pass == "forward" || pass == "backward");
    EXPECT_GT(row.at("time_s").number_value(), 0.0);
    EXPECT_LE(row.at("min_s").number_value(), row.at("time_s").number_value());
    EXPECT_GE(row.at("max_s").number_value(), row.at("time_s").number_value());
    EXPECT_EQ(row.at("repeats").number_value(), 2.0);
    EXPECT_GT(row.at("flops").number_value(), 0.0);
    if (kernel == "layer") {
      ++layers;
      EXPECT_TRUE(row.contains("tokens"));
      EXPECT_TRUE(row.contains("context_tokens"));
      if (row.at("segments").number_value() > 1) {
        ++packed;
        EXPECT_EQ(row.at("tokens").number_value(), 32.0);
        EXPECT_EQ(row.at("context_tokens").number_value(), 0.0);
      }
    } else if (kernel == "gemm") {
      ++gemms;
      EXPECT_FALSE(row.at("name").string_value().empty());
      if (row.at("name").string_value() == "lm_head") {
        EXPECT_EQ(row.at("n").number_value(), 512.0);
        lm_head_m.insert(row.at("m").number_value());
      }
      EXPECT_EQ(row.at("flops").number_value(),
                2.0 * row.at("m").number_value() * row.at("n").number_value() * row.at("k").number_value());
    } else {
      EXPECT_EQ(kernel, "attention");
      ++attention;
      EXPECT_EQ(row.at("heads").number_value(), 4.0);
      EXPECT_EQ(row.at("kv_heads").number_value(), 2.0);
      EXPECT_EQ(row.at("head_dim").number_value(), 16.0);
    }
  }
  EXPECT_EQ(layers, 2 * 8);     // 2 passes x (2 token counts x 3 contexts + 2 and 4 sequences of 32)
  EXPECT_EQ(packed, 2 * 2);
  EXPECT_EQ(attention, 2 * 6);  // one sequence per layer; packed layers time no kernels of their own
  // Per token count: 4 forward GEMMs and the LM head's, 8 + 2 backward (input and weight gradients).
  EXPECT_EQ(gemms, 2 * 5 + 2 * 10);
  EXPECT_EQ(lm_head_m, (std::set<double>{32, 64}));
}

TEST(ComputeBench, CudaWithoutTheBackendOrAGpuFails) {
  TempDir dir;
  const fs::path scenario = dir.path() / "tiny.textproto";
  std::ofstream(scenario) << kScenario;
  EXPECT_ANY_THROW(run({"--scenario", scenario.string(), "--backend", "cuda", "--out",
                        (dir.path() / "b.json").string(), "--tokens", "32", "--repeats", "1"}));
}

}  // namespace
}  // namespace eppsim::runtime
