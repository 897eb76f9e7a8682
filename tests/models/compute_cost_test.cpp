#include "models/compute_cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "models/memory_model.h"

namespace eppsim {
namespace {

const TransformerSpec& llama7b() { return *find_model_preset("llama2-7b"); }
const GpuSpec& a100() { return *find_gpu_preset("A100-80GB"); }

ChunkWork work_of(const std::vector<Segment>& segments, std::uint32_t layers, bool head = false) {
  ChunkWork w;
  w.segments = segments;
  w.layer_count = layers;
  w.includes_lm_head = head;
  return w;
}

TEST(ChunkFlops, GemmFlopsAreSixTimesParamsTimesTokensForForwardPlusBackward) {
  const TransformerSpec& m = llama7b();
  const std::vector<Segment> segs = {{3000, 0}, {1000, 500}};
  const ChunkWork w = work_of(segs, 32);
  const double fwd = chunk_flops(m, Pass::Forward, w).gemm;
  const double bwd = chunk_flops(m, Pass::Backward, w).gemm;
  EXPECT_DOUBLE_EQ(fwd, 2.0 * m.params_per_layer() * 32 * 4000);
  EXPECT_DOUBLE_EQ(fwd + bwd, 6.0 * m.params_per_layer() * 32 * 4000);
}

TEST(ChunkFlops, AttentionOfOneSegmentIsCausal) {
  const TransformerSpec& m = llama7b();
  const std::vector<Segment> segs = {{1024, 0}};
  const double attn = chunk_flops(m, Pass::Forward, work_of(segs, 1)).attention;
  EXPECT_DOUBLE_EQ(attn, 4.0 * 4096 * (1024.0 * 1025.0 / 2.0));
}

TEST(ChunkFlops, AttentionIsQuadraticInSegmentLength) {
  const TransformerSpec& m = llama7b();
  const std::vector<Segment> one = {{8192, 0}};
  const std::vector<Segment> two = {{16384, 0}};
  const double a1 = chunk_flops(m, Pass::Forward, work_of(one, 4)).attention;
  const double a2 = chunk_flops(m, Pass::Forward, work_of(two, 4)).attention;
  EXPECT_NEAR(a2 / a1, 4.0, 0.001);
}

TEST(ChunkFlops, ContextAddsTheCrossTermExactly) {
  const TransformerSpec& m = llama7b();
  const std::uint64_t s = 4096, c = 12288;
  const std::vector<Segment> with_context = {{s, c}};
  const std::vector<Segment> without = {{s, 0}};
  const FlopCount fc = chunk_flops(m, Pass::Forward, work_of(with_context, 1));
  const FlopCount f0 = chunk_flops(m, Pass::Forward, work_of(without, 1));
  EXPECT_DOUBLE_EQ(fc.attention - f0.attention, 4.0 * 4096 * s * c);
  EXPECT_DOUBLE_EQ(fc.gemm, f0.gemm);  // context changes attention only
}

TEST(ChunkFlops, PackingTwoSequencesCostsLessAttentionThanOneOfBothLengths) {
  const TransformerSpec& m = llama7b();
  const std::vector<Segment> packed = {{8192, 0}, {8192, 0}};
  const std::vector<Segment> single = {{16384, 0}};
  const FlopCount p = chunk_flops(m, Pass::Forward, work_of(packed, 32));
  const FlopCount s = chunk_flops(m, Pass::Forward, work_of(single, 32));
  EXPECT_LT(p.attention, s.attention);
  EXPECT_NEAR(p.attention / s.attention, 0.5, 0.001);
  EXPECT_DOUBLE_EQ(p.gemm, s.gemm);
}

TEST(ChunkFlops, BackwardAndRecomputeFactors) {
  const TransformerSpec& m = llama7b();
  const std::vector<Segment> segs = {{2048, 1024}, {512, 0}};
  const ChunkWork w = work_of(segs, 8, /*head=*/true);
  const FlopCount fwd = chunk_flops(m, Pass::Forward, w);
  const FlopCount bwd = chunk_flops(m, Pass::Backward, w);
  const FlopCount rec = chunk_flops(m, Pass::Recompute, w);
  EXPECT_DOUBLE_EQ(bwd.gemm, 2.0 * fwd.gemm);
  EXPECT_DOUBLE_EQ(bwd.attention, 2.5 * fwd.attention);
  EXPECT_DOUBLE_EQ(rec.gemm, fwd.gemm);
  EXPECT_DOUBLE_EQ(rec.attention, fwd.attention);
  EXPECT_DOUBLE_EQ(fwd.total(), fwd.gemm + fwd.attention);
}

TEST(ChunkFlops, LmHeadAddsVocabularyProjection) {
  const TransformerSpec& m = llama7b();
  const std::vector<Segment> segs = {{1000, 0}};
  const double without = chunk_flops(m, Pass::Forward, work_of(segs, 2)).gemm;
  const double with = chunk_flops(m, Pass::Forward, work_of(segs, 2, true)).gemm;
  EXPECT_DOUBLE_EQ(with - without, 2.0 * 4096 * 32000 * 1000);
}

TEST(ChunkFlops, EmptyChunkIsFree) {
  const FlopCount f = chunk_flops(llama7b(), Pass::Forward, ChunkWork{});
  EXPECT_EQ(f.total(), 0.0);
}

TEST(ChunkMemoryTraffic, WeightsAndActivations) {
  const TransformerSpec& m = llama7b();
  const std::vector<Segment> segs = {{100, 0}};
  const ChunkWork w = work_of(segs, 4);
  const double expected = 2.0 * m.params_per_layer() * 4 + activation_bytes_per_token_layer(m) * 4 * 100;
  EXPECT_EQ(chunk_memory_traffic(m, Pass::Forward, w), Bytes(static_cast<std::uint64_t>(expected)));
  EXPECT_EQ(chunk_memory_traffic(m, Pass::Recompute, w), chunk_memory_traffic(m, Pass::Forward, w));
  EXPECT_EQ(chunk_memory_traffic(m, Pass::Backward, w).count, 2 * chunk_memory_traffic(m, Pass::Forward, w).count);
}

TEST(AnalyticComputeCost, LargeChunkIsComputeBound) {
  const AnalyticComputeCost model(llama7b(), a100(), AnalyticEfficiency{0.75, 0.5});
  const std::vector<Segment> segs = {{16384, 0}};
  const ChunkWork w = work_of(segs, 32);
  const ComputeCost c = model.cost({Pass::Forward, w});
  const double compute_s = c.flops.gemm / (312e12 * 0.75) + c.flops.attention / (312e12 * 0.5);
  const double memory_s = static_cast<double>(c.memory_traffic.count) / 2039e9;
  EXPECT_GT(compute_s, memory_s);
  EXPECT_DOUBLE_EQ(c.time.value, compute_s);
}

TEST(AnalyticComputeCost, TinyChunkIsMemoryBound) {
  const AnalyticComputeCost model(llama7b(), a100(), AnalyticEfficiency{});
  const std::vector<Segment> segs = {{1, 0}};
  const ComputeCost c = model.cost({Pass::Backward, work_of(segs, 32)});
  const double compute_s = c.flops.gemm / (312e12 * 0.75) + c.flops.attention / (312e12 * 0.55);
  const double memory_s = static_cast<double>(c.memory_traffic.count) / 2039e9;
  EXPECT_GT(memory_s, compute_s);
  EXPECT_DOUBLE_EQ(c.time.value, memory_s);
}

TEST(AnalyticComputeCost, RejectsBadEfficiencyAndGpu) {
  EXPECT_THROW(AnalyticComputeCost(llama7b(), a100(), AnalyticEfficiency{0.0, 0.5}), InputError);
  EXPECT_THROW(AnalyticComputeCost(llama7b(), a100(), AnalyticEfficiency{0.5, 1.5}), InputError);
  GpuSpec broken = a100();
  broken.memory_bandwidth = BytesPerSecond(0.0);
  EXPECT_THROW(AnalyticComputeCost(llama7b(), broken, AnalyticEfficiency{}), InputError);
}

constexpr CalibratedFit kForward{2e-12, 3e-7, 5e-4};
constexpr CalibratedFit kBackward{5e-12, 6e-7, 9e-4};

TEST(CalibratedFitTerms, AreTheQueryKeyPairsTokensOneAndTheExtraSegments) {
  // 3 sequences of 100 new tokens after 50 of context: (c + s)^2 - c^2 = 20000 each.
  const auto terms = calibrated_fit_terms(100, 50, 3);
  EXPECT_DOUBLE_EQ(terms[0], 3 * ((50.0 + 100) * (50 + 100) - 50 * 50));
  EXPECT_DOUBLE_EQ(terms[1], 300);
  EXPECT_DOUBLE_EQ(terms[2], 1);
  EXPECT_DOUBLE_EQ(terms[3], 2);
  // Without cancellation where the context dwarfs the tokens: (c + s)^2 - c^2 loses s(s + 2c) here.
  EXPECT_DOUBLE_EQ(calibrated_fit_terms(1, 1e17, 1)[0], 1 + 2e17);
}

// The cost of packed segments is the fit weighing the terms `eppsim calibrate`
// regressed on: per segment its alpha terms, per layer beta and gamma.
TEST(CalibratedComputeCost, PricesByTheTermsCalibrationFits) {
  const CalibratedFit fit{2e-12, 3e-7, 5e-4, 2e-5};
  const CalibratedComputeCost model(llama7b(), a100(), fit, kBackward);
  const std::vector<Segment> segs = {{700, 300}, {700, 300}, {700, 300}};
  const auto terms = calibrated_fit_terms(700, 300, 3);
  const double per_layer = fit.alpha1_s_per_token2 * terms[0] + fit.alpha2_s_per_token * terms[1] +
                           fit.beta_s * terms[2] + fit.gamma_s_per_extra_segment * terms[3];
  EXPECT_NEAR(model.cost({Pass::Forward, work_of(segs, 2)}).time.value, 2 * per_layer, 1e-15);
}

TEST(CalibratedComputeCost, SingleSegmentFollowsTheFitExactly) {
  const CalibratedComputeCost model(llama7b(), a100(), kForward, kBackward);
  const double s = 4096, c = 8192;
  const std::vector<Segment> segs = {{4096, 8192}};
  const ChunkWork w = work_of(segs, 8);
  const auto expected = [&](const CalibratedFit& f) {
    return 8 * (f.alpha1_s_per_token2 * ((c + s) * (c + s) - c * c) + f.alpha2_s_per_token * s + f.beta_s);
  };
  EXPECT_DOUBLE_EQ(model.cost({Pass::Forward, w}).time.value, expected(kForward));
  EXPECT_DOUBLE_EQ(model.cost({Pass::Backward, w}).time.value, expected(kBackward));
  EXPECT_DOUBLE_EQ(model.cost({Pass::Recompute, w}).time.value, expected(kForward));
}

TEST(CalibratedComputeCost, PackedSegmentsSumWithBetaOncePerLayer) {
  const CalibratedComputeCost model(llama7b(), a100(), kForward, kBackward);
  const std::vector<Segment> segs = {{1000, 0}, {2000, 500}, {300, 0}};
  const ChunkWork w = work_of(segs, 4);
  double per_layer = kForward.beta_s;
  for (const Segment& seg : segs) {
    const double s = static_cast<double>(seg.tokens), c = static_cast<double>(seg.context_tokens);
    per_layer += kForward.alpha1_s_per_token2 * ((c + s) * (c + s) - c * c) + kForward.alpha2_s_per_token * s;
  }
  EXPECT_NEAR(model.cost({Pass::Forward, w}).time.value, 4 * per_layer, 1e-15);
}

TEST(CalibratedComputeCost, EachSegmentPastTheFirstAddsGammaPerLayer) {
  CalibratedFit with_gamma = kForward;
  with_gamma.gamma_s_per_extra_segment = 2e-5;
  const CalibratedComputeCost plain(llama7b(), a100(), kForward, kBackward);
  const CalibratedComputeCost model(llama7b(), a100(), with_gamma, kBackward);
  // Three sequences with tokens (and an empty one, which costs nothing) over 4 layers: 2 x gamma per layer.
  const std::vector<Segment> segs = {{1000, 0}, {2000, 500}, {0, 0}, {300, 0}};
  const ChunkWork w = work_of(segs, 4);
  EXPECT_NEAR(model.cost({Pass::Forward, w}).time.value - plain.cost({Pass::Forward, w}).time.value, 4 * 2 * 2e-5,
              1e-15);
  // One sequence: no gamma; nor is gamma divided by shards.
  const std::vector<Segment> one = {{1000, 0}};
  EXPECT_DOUBLE_EQ(model.cost({Pass::Forward, work_of(one, 4)}).time.value,
                   plain.cost({Pass::Forward, work_of(one, 4)}).time.value);
  const ComputeWork sharded{Pass::Forward, w, LayerPart::Whole, 4};
  EXPECT_NEAR(model.cost(sharded).time.value - plain.cost(sharded).time.value, 4 * 2 * 2e-5, 1e-15);
}

TEST(CalibratedComputeCost, FlopsAndTrafficStayAnalytic) {
  const CalibratedComputeCost model(llama7b(), a100(), kForward, kBackward);
  const std::vector<Segment> segs = {{4096, 0}};
  const ChunkWork w = work_of(segs, 2, true);
  const ComputeCost c = model.cost({Pass::Backward, w});
  EXPECT_DOUBLE_EQ(c.flops.total(), chunk_flops(llama7b(), Pass::Backward, w).total());
  EXPECT_EQ(c.memory_traffic, chunk_memory_traffic(llama7b(), Pass::Backward, w));
}

TEST(CalibratedComputeCost, LmHeadChargedAtPeakTimesGemmEfficiency) {
  const CalibratedComputeCost model(llama7b(), a100(), kForward, kBackward, AnalyticEfficiency{0.5, 0.5});
  const std::vector<Segment> segs = {{1000, 0}};
  const double head_fwd = 2.0 * 4096 * 32000 * 1000 / (312e12 * 0.5);
  const double base_fwd = model.cost({Pass::Forward, work_of(segs, 3)}).time.value;
  const double base_bwd = model.cost({Pass::Backward, work_of(segs, 3)}).time.value;
  EXPECT_NEAR(model.cost({Pass::Forward, work_of(segs, 3, true)}).time.value - base_fwd, head_fwd, 1e-12);
  EXPECT_NEAR(model.cost({Pass::Backward, work_of(segs, 3, true)}).time.value - base_bwd, 2 * head_fwd, 1e-12);
}

TEST(CalibratedComputeCost, EmptyChunkTakesNoTime) {
  const CalibratedComputeCost model(llama7b(), a100(), kForward, kBackward);
  EXPECT_EQ(model.cost({Pass::Forward, work_of({}, 8)}).time.value, 0.0);
}

TEST(CalibratedComputeCost, RejectsNonFiniteFits) {
  const CalibratedFit bad{std::numeric_limits<double>::quiet_NaN(), 0, 0};
  EXPECT_THROW(CalibratedComputeCost(llama7b(), a100(), bad, kBackward), InputError);
  EXPECT_THROW(CalibratedComputeCost(llama7b(), a100(), kForward, bad), InputError);
}

// ---- parts and shards

ComputeWork part_of(Pass pass, const ChunkWork& w, LayerPart part, std::uint32_t shards = 1) {
  return ComputeWork{pass, w, part, shards};
}

constexpr LayerPart kParts[] = {LayerPart::PreAttention, LayerPart::Attention, LayerPart::PostAttention};

TEST(PartFlops, PartsSumToTheWholeAndSplitByKind) {
  const TransformerSpec& m = llama7b();
  const std::vector<Segment> segs = {{3000, 1000}, {500, 0}};
  for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Recompute}) {
    const ChunkWork w = work_of(segs, 3, true);
    const FlopCount whole = chunk_flops(m, pass, w);
    const FlopCount pre = part_flops(m, pass, w, LayerPart::PreAttention);
    const FlopCount attn = part_flops(m, pass, w, LayerPart::Attention);
    const FlopCount post = part_flops(m, pass, w, LayerPart::PostAttention);
    EXPECT_EQ(pre.attention, 0.0);
    EXPECT_EQ(post.attention, 0.0);
    EXPECT_EQ(attn.gemm, 0.0);
    EXPECT_DOUBLE_EQ(attn.attention, whole.attention);
    EXPECT_DOUBLE_EQ(pre.gemm + post.gemm, whole.gemm);
    // QKV (h*h + 2*h*kv) and one RMSNorm (h) per layer and token, 2 FLOPs each.
    const double h = m.hidden_size;
    const double factor = pass == Pass::Backward ? 2.0 : 1.0;
    EXPECT_DOUBLE_EQ(pre.gemm, factor * 3 * 2.0 * (h * h + 2.0 * h * m.kv_dim() + h) * 3500);
  }
}

TEST(AnalyticComputeCost, PartsSumToTheWholeExactly) {
  const AnalyticComputeCost model(llama7b(), a100(), AnalyticEfficiency{0.75, 0.5});
  const std::vector<Segment> big = {{16384, 4096}};
  const std::vector<Segment> tiny = {{1, 0}};  // memory-bound: parts scale with it
  for (const auto* segs : {&big, &tiny}) {
    for (Pass pass : {Pass::Forward, Pass::Backward}) {
      const ChunkWork w = work_of(*segs, 2, true);
      const ComputeCost whole = model.cost({pass, w});
      double time = 0.0, flops = 0.0;
      for (LayerPart part : kParts) {
        const ComputeCost c = model.cost(part_of(pass, w, part));
        time += c.time.value;
        flops += c.flops.total();
      }
      EXPECT_NEAR(time, whole.time.value, 1e-12 * whole.time.value);
      EXPECT_NEAR(flops, whole.flops.total(), 1e-12 * whole.flops.total());
    }
  }
}

TEST(AnalyticComputeCost, ComputeBoundPartIsItsOwnRoofline) {
  const AnalyticComputeCost model(llama7b(), a100(), AnalyticEfficiency{0.75, 0.5});
  const std::vector<Segment> segs = {{16384, 0}};
  const ChunkWork w = work_of(segs, 1);
  const ComputeCost attn = model.cost(part_of(Pass::Forward, w, LayerPart::Attention));
  EXPECT_DOUBLE_EQ(attn.time.value, chunk_flops(llama7b(), Pass::Forward, w).attention / (312e12 * 0.5));
}

TEST(AnalyticComputeCost, ShardsDivideEverything) {
  const AnalyticComputeCost model(llama7b(), a100(), AnalyticEfficiency{});
  const std::vector<Segment> segs = {{8192, 0}};
  const ChunkWork w = work_of(segs, 4);
  const ComputeCost one = model.cost({Pass::Forward, w});
  const ComputeCost eighth = model.cost(part_of(Pass::Forward, w, LayerPart::Whole, 8));
  EXPECT_DOUBLE_EQ(eighth.time.value, one.time.value / 8);
  EXPECT_DOUBLE_EQ(eighth.flops.total(), one.flops.total() / 8);
}

TEST(CalibratedComputeCost, BetaIsPerGpuNotDividedByShards) {
  const CalibratedComputeCost model(llama7b(), a100(), kForward, kBackward);
  const std::vector<Segment> segs = {{4096, 0}};
  const ChunkWork w = work_of(segs, 8);
  const double alpha = kForward.alpha1_s_per_token2 * 4096.0 * 4096.0 + kForward.alpha2_s_per_token * 4096.0;
  EXPECT_DOUBLE_EQ(model.cost(part_of(Pass::Forward, w, LayerPart::Whole, 4)).time.value,
                   8 * (alpha / 4 + kForward.beta_s));
}

TEST(CalibratedComputeCost, PartsSplitTheTimeByFlopsAndSumToTheWhole) {
  const CalibratedComputeCost model(llama7b(), a100(), kForward, kBackward);
  const std::vector<Segment> segs = {{4096, 2048}};
  const ChunkWork w = work_of(segs, 2, true);
  ChunkWork layers_only = w;
  layers_only.includes_lm_head = false;
  const double layer_flops = chunk_flops(llama7b(), Pass::Backward, layers_only).total();
  const ComputeCost whole = model.cost(part_of(Pass::Backward, w, LayerPart::Whole, 2));
  double sum = 0.0;
  for (LayerPart part : kParts) sum += model.cost(part_of(Pass::Backward, w, part, 2)).time.value;
  EXPECT_NEAR(sum, whole.time.value, 1e-12 * whole.time.value);
  const double attn_share = chunk_flops(llama7b(), Pass::Backward, layers_only).attention / layer_flops;
  const double layers_s = model.cost(part_of(Pass::Backward, layers_only, LayerPart::Whole, 2)).time.value;
  EXPECT_NEAR(model.cost(part_of(Pass::Backward, w, LayerPart::Attention, 2)).time.value, layers_s * attn_share,
              1e-12 * layers_s);
}

constexpr CalibratedFit kForwardHead{0.0, 4e-7, 2e-4};
constexpr CalibratedFit kBackwardHead{0.0, 9e-7, 3e-4};
constexpr CalibratedFit kForwardAttention{1.5e-12, 2e-8, 1e-4};
constexpr CalibratedFit kBackwardAttention{4e-12, 5e-8, 2e-4};

TEST(CalibratedComputeCost, LmHeadFitReplacesThePeakWithAlphaPerTokenOverShardsPlusBeta) {
  const CalibratedComputeCost model(llama7b(), a100(), kForward, kBackward, AnalyticEfficiency{},
                                    CalibratedKernelFits{kForwardHead, kBackwardHead, {}, {}});
  const std::vector<Segment> segs = {{1000, 0}, {500, 200}};
  for (auto [pass, head] : {std::pair{Pass::Forward, kForwardHead}, std::pair{Pass::Backward, kBackwardHead},
                            std::pair{Pass::Recompute, kForwardHead}}) {
    for (std::uint32_t shards : {1u, 4u}) {
      const double layers_s = model.cost(part_of(pass, work_of(segs, 3), LayerPart::Whole, shards)).time.value;
      const double with_head_s = model.cost(part_of(pass, work_of(segs, 3, true), LayerPart::Whole, shards)).time.value;
      EXPECT_NEAR(with_head_s - layers_s, head.alpha2_s_per_token * 1500.0 / shards + head.beta_s, 1e-15);
      // The head is POST_ATTENTION's.
      EXPECT_NEAR(model.cost(part_of(pass, work_of(segs, 3, true), LayerPart::PostAttention, shards)).time.value -
                      model.cost(part_of(pass, work_of(segs, 3), LayerPart::PostAttention, shards)).time.value,
                  head.alpha2_s_per_token * 1500.0 / shards + head.beta_s, 1e-15);
    }
  }
  // No tokens: no head either.
  const std::vector<Segment> empty = {{0, 0}};
  EXPECT_EQ(model.cost({Pass::Forward, work_of(empty, 3, true)}).time.value, 0.0);
}

TEST(CalibratedComputeCost, AttentionFitPricesTheAttentionPartAndTheGemmPartsShareTheRest) {
  const CalibratedComputeCost model(llama7b(), a100(), kForward, kBackward, AnalyticEfficiency{},
                                    CalibratedKernelFits{kForwardHead, kBackwardHead, kForwardAttention,
                                                         kBackwardAttention});
  const std::vector<Segment> segs = {{4096, 2048}, {1024, 0}};
  const ChunkWork w = work_of(segs, 2, true);
  ChunkWork layers_only = w;
  layers_only.includes_lm_head = false;
  for (auto [pass, layer, attention] : {std::tuple{Pass::Backward, kBackward, kBackwardAttention},
                                        std::tuple{Pass::Forward, kForward, kForwardAttention}}) {
    const double shards = 2;
    double attention_alpha = 0.0;
    for (const Segment& seg : segs) {
      const double s = static_cast<double>(seg.tokens), c = static_cast<double>(seg.context_tokens);
      attention_alpha += attention.alpha1_s_per_token2 * ((c + s) * (c + s) - c * c) + attention.alpha2_s_per_token * s;
    }
    const double attention_s = 2 * (attention_alpha / shards + attention.beta_s);
    EXPECT_NEAR(model.cost(part_of(pass, w, LayerPart::Attention, 2)).time.value, attention_s, 1e-12 * attention_s);
    // PRE_ATTENTION and POST_ATTENTION (without the head) split the rest by their GEMM FLOPs.
    const double layers_s = model.cost(part_of(pass, layers_only, LayerPart::Whole, 2)).time.value;
    const double pre_share = part_flops(llama7b(), pass, layers_only, LayerPart::PreAttention).gemm /
                             chunk_flops(llama7b(), pass, layers_only).gemm;
    EXPECT_NEAR(model.cost(part_of(pass, w, LayerPart::PreAttention, 2)).time.value,
                (layers_s - attention_s) * pre_share, 1e-12 * layers_s);
    double sum = 0.0;
    for (LayerPart part : kParts) sum += model.cost(part_of(pass, w, part, 2)).time.value;
    const double whole_s = model.cost(part_of(pass, w, LayerPart::Whole, 2)).time.value;
    EXPECT_NEAR(sum, whole_s, 1e-12 * whole_s);
  }
  // An attention fit slower than the whole layer's fit takes the layers' time, no more; the other parts none.
  const CalibratedComputeCost slow(llama7b(), a100(), kForward, kBackward, AnalyticEfficiency{},
                                   CalibratedKernelFits{{}, {}, CalibratedFit{1.0, 0.0, 0.0}, kBackwardAttention});
  const double layers_s = slow.cost(part_of(Pass::Forward, layers_only, LayerPart::Whole, 1)).time.value;
  EXPECT_DOUBLE_EQ(slow.cost(part_of(Pass::Forward, layers_only, LayerPart::Attention, 1)).time.value, layers_s);
  EXPECT_DOUBLE_EQ(slow.cost(part_of(Pass::Forward, layers_only, LayerPart::PreAttention, 1)).time.value, 0.0);
}

TEST(CalibratedComputeCost, RejectsNonFiniteKernelFits) {
  const CalibratedFit bad{std::numeric_limits<double>::infinity(), 0.0, 0.0};
  EXPECT_THROW(CalibratedComputeCost(llama7b(), a100(), kForward, kBackward, {}, CalibratedKernelFits{bad, {}, {}, {}}),
               InputError);
  EXPECT_THROW(CalibratedComputeCost(llama7b(), a100(), kForward, kBackward, {}, CalibratedKernelFits{{}, {}, {}, bad}),
               InputError);
}

TEST(ComputeCostModel, WorksThroughTheInterface) {
  const std::vector<Segment> segs = {{2048, 0}};
  const ChunkWork w = work_of(segs, 32);
  const AnalyticComputeCost analytic(llama7b(), a100(), AnalyticEfficiency{});
  const ComputeCostModel& model = analytic;
  EXPECT_GT(model.cost({Pass::Backward, w}).time, model.cost({Pass::Forward, w}).time);
}

}  // namespace
}  // namespace eppsim
