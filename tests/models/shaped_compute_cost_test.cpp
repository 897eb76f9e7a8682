#include "models/shaped_compute_cost.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/errors.h"

namespace eppsim {
namespace {

const TransformerSpec& llama7b() { return *find_model_preset("llama2-7b"); }
const GpuSpec& h100() { return *find_gpu_preset("H100-SXM"); }
const GpuSpec& a800() { return *find_gpu_preset("A800-80GB"); }

ShapedComputeParams without_fixed_costs(const GpuSpec& gpu) {
  ShapedComputeParams p = default_shaped_params(gpu);
  p.fixed_costs = false;
  return p;
}

ComputeWork work_of(const std::vector<Segment>& segments, std::uint32_t layers, Pass pass = Pass::Forward,
                    LayerPart part = LayerPart::Whole, std::uint32_t shards = 1) {
  ComputeWork w;
  w.pass = pass;
  w.chunk.segments = segments;
  w.chunk.layer_count = layers;
  w.part = part;
  w.shards = shards;
  return w;
}

// Output m x n, reduction over k, once.
GemmShape gemm(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  return GemmShape{.m = m, .n = n, .k = k, .count = 1, .name = "test"};
}

// Fraction of peak a GEMM reaches.
double gemm_efficiency(const GemmShape& g, const ShapedComputeParams& p, const GpuSpec& gpu) {
  return g.flops() / shaped_gemm_time(g, p, gpu.peak_bf16).value / gpu.peak_bf16.value;
}

TEST(ShapedGemm, OneTileMoreThanTheSmsCostsAboutTwice) {
  const ShapedComputeParams p = without_fixed_costs(h100());
  ASSERT_EQ(p.sm_count, 132u);
  // 64-row tiles of a 64-wide output: exactly one tile per SM, then one more.
  const GemmShape full = gemm(64 * 132, 64, 4096);
  const GemmShape one_more = gemm(64 * 132 + 1, 64, 4096);
  const double ratio = shaped_gemm_time(one_more, p, h100().peak_bf16).value /
                       shaped_gemm_time(full, p, h100().peak_bf16).value;
  EXPECT_NEAR(ratio, 2.0, 1e-9);
}

TEST(ShapedGemm, EfficiencyRisesWithM) {
  const ShapedComputeParams p = default_shaped_params(h100());
  double previous = 0.0;
  for (std::uint64_t m : {64u, 256u, 1024u, 4096u, 16384u}) {
    const double e = gemm_efficiency(gemm(m, 4096, 4096), p, h100());
    EXPECT_GT(e, previous) << "M = " << m;
    EXPECT_LT(e, p.gemm_tile_efficiency) << "M = " << m;
    previous = e;
  }
}

// XLA's measured H100 bf16 GEMM throughput (tensorflow/tensorflow,
// third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h, sm_90, as
// quoted in docs/cost-model.md): N = K = 4096, M = 512 at 644 TFLOP/s, M = 4096
// at 783; a batch of two 4096-cubed GEMMs at 808 (priced as one of M = 8192: the
// same tiles). The defaults were chosen from other sources (docs/cost-model.md),
// not fitted to these. Tolerance 10%: the reference says tile-and-wave models of
// this form follow such tables to within roughly 10%, and the XLA figures are
// single measurements (its 4096-cubed GEMM reads 783 at batch 1 and 808 at
// batch 2: 3% apart for the same per-GEMM work).
TEST(ShapedGemm, FollowsXlaH100MeasurementsWithinTenPercent) {
  const ShapedComputeParams p = default_shaped_params(h100());
  const double peak = h100().peak_bf16.value;
  const struct {
    GemmShape gemm;
    double measured_flops;
  } cases[] = {
      {gemm(512, 4096, 4096), 644e12},
      {gemm(4096, 4096, 4096), 783e12},
      {gemm(8192, 4096, 4096), 808e12},
  };
  for (const auto& c : cases) {
    const double model = gemm_efficiency(c.gemm, p, h100());
    const double measured = c.measured_flops / peak;
    EXPECT_NEAR(model / measured, 1.0, 0.10) << "M = " << c.gemm.m << ": model " << model << ", XLA " << measured;
  }
}

// M = 256 (XLA: 412 TFLOP/s, 42% of peak) is where the model is too fast: its
// best tiling is one wave of 128x64 tiles, priced at the full per-SM rate,
// while narrow tiles really reach less of an SM (on Hopper a 64-wide tile needs
// about all of the SM's shared-memory bandwidth to feed its MMAs); the model
// has one e_max for every tile. The test pins the size of the known error so
// that a change to it is seen: the model gives about 56%, 1.3x the measurement.
TEST(ShapedGemm, IsTooFastForNarrowM) {
  const ShapedComputeParams p = default_shaped_params(h100());
  const double model = gemm_efficiency(gemm(256, 4096, 4096), p, h100());
  const double measured = 412e12 / h100().peak_bf16.value;
  EXPECT_GT(model / measured, 1.0);
  EXPECT_LT(model / measured, 1.4);
}

TEST(ShapedGemm, LaunchOnlyWithFixedCosts) {
  ShapedComputeParams p = default_shaped_params(h100());
  const GemmShape g = gemm(4096, 4096, 4096);
  const double on = shaped_gemm_time(g, p, h100().peak_bf16).value;
  p.fixed_costs = false;
  const double off = shaped_gemm_time(g, p, h100().peak_bf16).value;
  EXPECT_NEAR(on - off, p.kernel_launch.value, 1e-12);
  EXPECT_DOUBLE_EQ(shaped_gemm_time(gemm(0, 4096, 4096), p, h100().peak_bf16).value, 0.0);
}

TEST(ShapedAttention, PadsTheHeadDimension) {
  EXPECT_EQ(padded_head_dim(64), 64u);
  EXPECT_EQ(padded_head_dim(80), 96u);
  EXPECT_EQ(padded_head_dim(96), 96u);
  EXPECT_EQ(padded_head_dim(104), 128u);
  EXPECT_EQ(padded_head_dim(128), 128u);
  EXPECT_EQ(padded_head_dim(160), 256u);
  EXPECT_EQ(padded_head_dim(320), 320u);  // no kernel: taken as it is
}

TEST(ShapedAttention, HeadDimension80CostsAs96) {
  TransformerSpec dim80 = llama7b();
  dim80.hidden_size = 5120;
  dim80.attention_heads = 64;
  dim80.kv_heads = 64;
  TransformerSpec dim96 = dim80;
  dim96.hidden_size = 6144;
  ASSERT_EQ(dim80.head_dim(), 80u);
  ASSERT_EQ(dim96.head_dim(), 96u);
  const std::vector<Segment> segs = {{8192, 0}};
  const ComputeWork w = work_of(segs, 4, Pass::Forward, LayerPart::Attention);
  const double t80 = ShapedComputeCost(dim80, a800(), without_fixed_costs(a800())).cost(w).time.value;
  const double t96 = ShapedComputeCost(dim96, a800(), without_fixed_costs(a800())).cost(w).time.value;
  EXPECT_NEAR(t80 / t96, 1.0, 1e-12);
}

TEST(ShapedAttention, EfficiencyRisesWithLength) {
  const ShapedComputeCost model(llama7b(), a800(), without_fixed_costs(a800()));
  double previous_s_per_flop = 1.0;
  for (std::uint64_t length : {512u, 2048u, 8192u, 32768u}) {
    const std::vector<Segment> segs = {{length, 0}};
    const ComputeCost c = model.cost(work_of(segs, 1, Pass::Forward, LayerPart::Attention));
    const double s_per_flop = c.time.value / c.flops.attention;
    EXPECT_LT(s_per_flop, previous_s_per_flop) << length;
    previous_s_per_flop = s_per_flop;
  }
  const ShapedComputeParams p = default_shaped_params(a800());
  EXPECT_DOUBLE_EQ(shaped_attention_efficiency(p, p.attention_half_length_tokens, Pass::Forward),
                   p.attention_efficiency / 2.0);
  EXPECT_DOUBLE_EQ(shaped_attention_efficiency(p, 4096, Pass::Backward),
                   shaped_attention_efficiency(p, 4096, Pass::Forward) * kBackwardAttentionEfficiencyRatio);
}

TEST(ShapedAttention, ContextRaisesTheAttendedLength) {
  const ShapedComputeCost model(llama7b(), a800(), without_fixed_costs(a800()));
  const std::vector<Segment> alone = {{1024, 0}};
  const std::vector<Segment> late = {{1024, 15360}};  // the last slice of a 16K sequence
  const ComputeCost a = model.cost(work_of(alone, 1, Pass::Forward, LayerPart::Attention));
  const ComputeCost b = model.cost(work_of(late, 1, Pass::Forward, LayerPart::Attention));
  EXPECT_LT(b.time.value / b.flops.attention, a.time.value / a.flops.attention);
}

TEST(ShapedComputeCost, ManyShortSegmentsAreSlowerPerFlopThanOneLong) {
  const ShapedComputeCost model(llama7b(), a800(), default_shaped_params(a800()));
  const std::vector<Segment> one_long = {{16384, 0}};
  const std::vector<Segment> many_short(16, Segment{1024, 0});
  // The same tokens: the same GEMMs, and attention in short segments at a lower
  // efficiency. (Per FLOP of the whole layer the long segment is not faster: it
  // has 16x the attention FLOPs, which run below the GEMMs' efficiency.)
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    EXPECT_DOUBLE_EQ(model.cost(work_of(one_long, 4, pass, LayerPart::PostAttention)).time.value,
                     model.cost(work_of(many_short, 4, pass, LayerPart::PostAttention)).time.value);
    const ComputeCost la = model.cost(work_of(one_long, 4, pass, LayerPart::Attention));
    const ComputeCost sa = model.cost(work_of(many_short, 4, pass, LayerPart::Attention));
    EXPECT_GT(sa.time.value / sa.flops.attention, 2.0 * la.time.value / la.flops.attention);
  }
}

// A compute-bound chunk: fixed costs add exactly their count, on top of the same kernels.
TEST(ShapedComputeCost, FixedCostsAreCountedKernelsLayersAndChunks) {
  const ShapedComputeParams on = default_shaped_params(a800());
  const ShapedComputeCost with(llama7b(), a800(), on);
  const ShapedComputeCost without(llama7b(), a800(), without_fixed_costs(a800()));
  const std::vector<Segment> segs = {{8192, 0}};
  const std::uint32_t layers = 8;
  const double model_layers = llama7b().layers;
  const double framework_s = layers * on.layer_overhead.value + on.chunk_overhead.value * layers / model_layers;
  // Forward, Llama: per layer 4 GEMMs, 1 attention, 6 other kernels (norm, rotary, residual add, norm,
  // activation, residual add); backward: 8 GEMMs, 1 attention, 6 others.
  const double launch_s = on.kernel_launch.value;
  const struct {
    Pass pass;
    double kernels_per_layer;
  } cases[] = {{Pass::Forward, 11}, {Pass::Recompute, 11}, {Pass::Backward, 15}};
  for (const auto& c : cases) {
    const double t_on = with.cost(work_of(segs, layers, c.pass)).time.value;
    const double t_off = without.cost(work_of(segs, layers, c.pass)).time.value;
    EXPECT_NEAR(t_on - t_off, layers * c.kernels_per_layer * launch_s + framework_s, 1e-12);
  }
  // The LM head adds its GEMM and two kernels, the embedding one kernel.
  ComputeWork head = work_of(segs, layers);
  head.chunk.includes_lm_head = true;
  head.chunk.includes_embedding = true;
  EXPECT_NEAR(with.cost(head).time.value - without.cost(head).time.value,
              layers * 11 * launch_s + framework_s + 3 * launch_s + launch_s, 1e-12);
  // Off: nothing fixed at all; a chunk without tokens costs its weights' traffic.
  const std::vector<Segment> empty = {{0, 0}};
  const ComputeCost nothing = without.cost(work_of(empty, layers));
  EXPECT_NEAR(nothing.time.value,
              static_cast<double>(chunk_memory_traffic(llama7b(), Pass::Forward, work_of(empty, layers).chunk).count) /
                  a800().memory_bandwidth.value,
              1e-15);
}

TEST(ShapedComputeCost, PartsSumToTheWholeExactly) {
  const ShapedComputeCost model(llama7b(), h100(), default_shaped_params(h100()));
  const std::vector<Segment> big = {{6000, 2000}, {700, 0}, {3, 0}};
  const std::vector<Segment> tiny = {{16, 0}};  // memory-bound
  for (const auto* segs : {&big, &tiny}) {
    for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Recompute}) {
      for (std::uint32_t shards : {1u, 4u}) {
        ComputeWork w = work_of(*segs, 3, pass, LayerPart::Whole, shards);
        w.chunk.includes_lm_head = true;
        w.chunk.includes_embedding = true;
        const ComputeCost whole = model.cost(w);
        double time_s = 0.0, flops = 0.0, bytes = 0.0;
        for (LayerPart part : {LayerPart::PreAttention, LayerPart::Attention, LayerPart::PostAttention}) {
          w.part = part;
          const ComputeCost c = model.cost(w);
          time_s += c.time.value;
          flops += c.flops.total();
          bytes += static_cast<double>(c.memory_traffic.count);
          EXPECT_GT(c.time.value, 0.0);
        }
        EXPECT_DOUBLE_EQ(time_s, whole.time.value);
        EXPECT_NEAR(flops / whole.flops.total(), 1.0, 1e-12);
        EXPECT_NEAR(bytes, static_cast<double>(whole.memory_traffic.count), 3.0);
      }
    }
  }
}

TEST(ShapedComputeCost, ATinyChunkIsMemoryBound) {
  const ShapedComputeCost model(llama7b(), a800(), without_fixed_costs(a800()));
  const std::vector<Segment> segs = {{8, 0}};
  const ComputeWork w = work_of(segs, 4);
  const double memory_s =
      static_cast<double>(chunk_memory_traffic(llama7b(), Pass::Forward, w.chunk).count) / a800().memory_bandwidth.value;
  EXPECT_NEAR(model.cost(w).time.value, memory_s, memory_s * 1e-12);
}

TEST(ShapedComputeCost, ShardsDivideTokenWorkButNotFixedCosts) {
  const ShapedComputeCost with(llama7b(), a800(), default_shaped_params(a800()));
  const ShapedComputeCost without(llama7b(), a800(), without_fixed_costs(a800()));
  const std::vector<Segment> segs = {{65536, 0}};
  const double fixed1 = with.cost(work_of(segs, 4)).time.value - without.cost(work_of(segs, 4)).time.value;
  const double fixed8 = with.cost(work_of(segs, 4, Pass::Forward, LayerPart::Whole, 8)).time.value -
                        without.cost(work_of(segs, 4, Pass::Forward, LayerPart::Whole, 8)).time.value;
  EXPECT_NEAR(fixed8, fixed1, 1e-12);
  EXPECT_GT(fixed1, 0.0);
  // Token work: an eighth, up to wave quantisation of the narrower GEMMs.
  const double t1 = without.cost(work_of(segs, 4)).time.value;
  const double t8 = without.cost(work_of(segs, 4, Pass::Forward, LayerPart::Whole, 8)).time.value;
  EXPECT_NEAR(t8 * 8.0 / t1, 1.0, 0.1);
  EXPECT_GE(t8 * 8.0, t1 * (1.0 - 1e-12));
  // FLOPs are this rank's share exactly.
  EXPECT_DOUBLE_EQ(with.cost(work_of(segs, 4, Pass::Forward, LayerPart::Whole, 8)).flops.total() * 8.0,
                   with.cost(work_of(segs, 4)).flops.total());
}

TEST(ShapedComputeCost, RejectsBadParameters) {
  const ShapedComputeParams good = default_shaped_params(a800());
  EXPECT_NO_THROW(ShapedComputeCost(llama7b(), a800(), good));
  ShapedComputeParams p = good;
  p.gemm_tile_efficiency = 0.0;
  EXPECT_THROW(ShapedComputeCost(llama7b(), a800(), p), InputError);
  p = good;
  p.attention_efficiency = 1.5;
  EXPECT_THROW(ShapedComputeCost(llama7b(), a800(), p), InputError);
  p = good;
  p.attention_half_length_tokens = 0.0;
  EXPECT_THROW(ShapedComputeCost(llama7b(), a800(), p), InputError);
  p = good;
  p.kernel_launch = Seconds(-1e-6);
  EXPECT_THROW(ShapedComputeCost(llama7b(), a800(), p), InputError);
  p = good;
  p.sm_count = 0;
  EXPECT_THROW(ShapedComputeCost(llama7b(), a800(), p), InputError);
}

TEST(ShapedComputeParams, DefaultsFollowTheGpu) {
  EXPECT_EQ(default_shaped_params(a800()).sm_count, 108u);
  EXPECT_EQ(default_shaped_params(h100()).sm_count, 132u);
  EXPECT_EQ(default_shaped_params(*find_gpu_preset("B200")).sm_count, 148u);
  const ShapedComputeParams p = default_shaped_params(h100());
  EXPECT_TRUE(p.fixed_costs);
  EXPECT_GT(p.kernel_launch.value, 0.0);
  EXPECT_GT(p.layer_overhead.value, 0.0);
  EXPECT_GT(p.chunk_overhead.value, 0.0);
  // A custom GPU (no SM count) takes the preset nearest its peak.
  GpuSpec custom;
  custom.name = "custom";
  custom.peak_bf16 = FlopsPerSecond(400e12);
  custom.memory_bandwidth = BytesPerSecond(2e12);
  EXPECT_EQ(default_shaped_params(custom).sm_count, 108u);
  custom.peak_bf16 = FlopsPerSecond(1000e12);
  EXPECT_EQ(default_shaped_params(custom).sm_count, 132u);
}

}  // namespace
}  // namespace eppsim
