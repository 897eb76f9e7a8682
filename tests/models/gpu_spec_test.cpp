#include "models/gpu_spec.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

namespace eppsim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(GpuPresets, ListsTheDocumentedParts) {
  for (const char* name : {"A100-40GB", "A100-80GB", "A800-80GB", "H100-SXM", "H800-SXM", "H200", "B200"}) {
    const GpuSpec* gpu = find_gpu_preset(name);
    ASSERT_NE(gpu, nullptr) << name;
    EXPECT_EQ(gpu->name, name);
  }
}

TEST(GpuPresets, EveryEntryIsCompleteAndUnique) {
  std::set<std::string> names;
  for (const GpuSpec& gpu : gpu_presets()) {
    EXPECT_TRUE(names.insert(gpu.name).second) << "duplicate " << gpu.name;
    EXPECT_GT(gpu.peak_bf16.value, 100e12) << gpu.name;
    EXPECT_GE(gpu.memory.count, static_cast<std::uint64_t>(40 * kGiB)) << gpu.name;
    EXPECT_GT(gpu.memory_bandwidth.value, 1e12) << gpu.name;
    EXPECT_GT(gpu.nvlink_bandwidth.value, 100e9) << gpu.name;
    EXPECT_EQ(find_gpu_preset(gpu.name), &gpu);
  }
}

TEST(GpuPresets, DatasheetFigures) {
  const GpuSpec* a100 = find_gpu_preset("A100-80GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->peak_bf16.value, 312e12);
  EXPECT_EQ(a100->memory, Bytes(80ULL << 30));
  EXPECT_DOUBLE_EQ(a100->memory_bandwidth.value, 2039e9);
  EXPECT_DOUBLE_EQ(a100->nvlink_bandwidth.value, 300e9);  // 600 GB/s both directions

  const GpuSpec* a100_40 = find_gpu_preset("A100-40GB");
  ASSERT_NE(a100_40, nullptr);
  EXPECT_EQ(a100_40->memory, Bytes(40ULL << 30));
  EXPECT_DOUBLE_EQ(a100_40->memory_bandwidth.value, 1555e9);

  const GpuSpec* a800 = find_gpu_preset("A800-80GB");
  ASSERT_NE(a800, nullptr);
  EXPECT_DOUBLE_EQ(a800->peak_bf16.value, 312e12);
  EXPECT_DOUBLE_EQ(a800->nvlink_bandwidth.value, 200e9);

  const GpuSpec* h100 = find_gpu_preset("H100-SXM");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->peak_bf16.value, 989e12);
  EXPECT_EQ(h100->memory, Bytes(80ULL << 30));
  EXPECT_DOUBLE_EQ(h100->memory_bandwidth.value, 3.35e12);
  EXPECT_DOUBLE_EQ(h100->nvlink_bandwidth.value, 450e9);

  const GpuSpec* h800 = find_gpu_preset("H800-SXM");
  ASSERT_NE(h800, nullptr);
  EXPECT_DOUBLE_EQ(h800->peak_bf16.value, 989e12);
  EXPECT_DOUBLE_EQ(h800->nvlink_bandwidth.value, 200e9);

  const GpuSpec* h200 = find_gpu_preset("H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(h200->peak_bf16.value, 989e12);
  EXPECT_EQ(h200->memory, Bytes(141ULL << 30));
  EXPECT_DOUBLE_EQ(h200->memory_bandwidth.value, 4.8e12);
  EXPECT_DOUBLE_EQ(h200->nvlink_bandwidth.value, 450e9);

  const GpuSpec* b200 = find_gpu_preset("B200");
  ASSERT_NE(b200, nullptr);
  EXPECT_DOUBLE_EQ(b200->peak_bf16.value, 2.25e15);
  EXPECT_EQ(b200->memory, Bytes(180ULL << 30));
  EXPECT_DOUBLE_EQ(b200->memory_bandwidth.value, 8e12);
  EXPECT_DOUBLE_EQ(b200->nvlink_bandwidth.value, 900e9);
}

TEST(GpuPresets, LookupIgnoresCaseAndUnderscores) {
  const GpuSpec* h100 = find_gpu_preset("H100-SXM");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(find_gpu_preset("h100-sxm"), h100);
  EXPECT_EQ(find_gpu_preset("H100_SXM"), h100);
  EXPECT_EQ(find_gpu_preset("h100_Sxm"), h100);
  EXPECT_EQ(find_gpu_preset("a100_80gb"), find_gpu_preset("A100-80GB"));
}

TEST(GpuPresets, UnknownNameIsNull) {
  EXPECT_EQ(find_gpu_preset("TPUv4"), nullptr);
  EXPECT_EQ(find_gpu_preset(""), nullptr);
  EXPECT_EQ(find_gpu_preset("H100"), nullptr);  // SXM and PCIe differ: no guessing
}

TEST(GpuPresets, SmCountsAndShapedDefaults) {
  const std::pair<const char*, std::uint32_t> sms[] = {{"A100-40GB", 108}, {"A100-80GB", 108}, {"A800-80GB", 108},
                                                       {"H100-SXM", 132},  {"H800-SXM", 132},  {"H200", 132},
                                                       {"B200", 148}};
  for (const auto& [name, count] : sms) {
    const GpuSpec* gpu = find_gpu_preset(name);
    ASSERT_NE(gpu, nullptr) << name;
    EXPECT_EQ(gpu->sm_count, count) << name;
    EXPECT_GT(gpu->shaped.kernel_launch.value, 0.0) << name;
    EXPECT_GT(gpu->shaped.gemm_tile_efficiency, 0.0) << name;
    EXPECT_LE(gpu->shaped.gemm_tile_efficiency, 1.0) << name;
    EXPECT_GT(gpu->shaped.gemm_k_prologue, 0.0) << name;
    EXPECT_GT(gpu->shaped.attention_efficiency, 0.0) << name;
    EXPECT_LE(gpu->shaped.attention_efficiency, 1.0) << name;
    EXPECT_GT(gpu->shaped.attention_half_length_tokens, 0.0) << name;
  }
}

TEST(GpuPresets, NearestByPeak) {
  EXPECT_EQ(nearest_gpu_preset(FlopsPerSecond(312e12)).name, "A100-40GB");  // the first of equals
  EXPECT_EQ(nearest_gpu_preset(FlopsPerSecond(500e12)).name, "A100-40GB");
  EXPECT_EQ(nearest_gpu_preset(FlopsPerSecond(600e12)).name, "H100-SXM");
  EXPECT_EQ(nearest_gpu_preset(FlopsPerSecond(5e15)).name, "B200");
  EXPECT_EQ(nearest_gpu_preset(FlopsPerSecond(1.0)).name, "A100-40GB");
}

}  // namespace
}  // namespace eppsim
