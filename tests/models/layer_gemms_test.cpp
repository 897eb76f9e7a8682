#include "models/layer_gemms.h"

#include <array>
#include <vector>

#include <gtest/gtest.h>

#include "models/compute_cost.h"

namespace eppsim {
namespace {

const TransformerSpec& llama7b() { return *find_model_preset("llama2-7b"); }

std::vector<GemmShape> pass_gemms(const TransformerSpec& model, std::uint32_t tp, bool lm_head, std::uint64_t m,
                                  Pass pass, std::uint32_t layers) {
  std::vector<GemmShape> out;
  for (const WeightGemm& w : layer_gemms(model, tp, lm_head)) append_pass_gemms(out, w, m, pass, w.once_per_chunk ? 1 : layers);
  return out;
}

double flops(const std::vector<GemmShape>& gemms) {
  double total = 0.0;
  for (const GemmShape& g : gemms) total += g.flops();
  return total;
}

TEST(LayerGemms, ListsTheWeightsOfALlamaLayerInForwardOrder) {
  const auto gemms = layer_gemms(llama7b(), 1, true);
  ASSERT_EQ(gemms.size(), 5u);
  // h 4096, 32 heads and 32 K/V heads of 128, SwiGLU f 11008, vocab 32000.
  EXPECT_EQ(gemms[0].forward, "qkv");
  EXPECT_EQ(gemms[0].part, LayerPart::PreAttention);
  EXPECT_EQ(gemms[0].out, 3u * 4096);
  EXPECT_EQ(gemms[2].forward, "ffn_up");
  EXPECT_EQ(gemms[2].out, 2u * 11008);
  EXPECT_EQ(gemms[3].in, 11008u);
  EXPECT_EQ(gemms[4].forward, "lm_head");
  EXPECT_TRUE(gemms[4].once_per_chunk);
  EXPECT_EQ(gemms[4].out, 32000u);
  EXPECT_EQ(layer_gemms(llama7b(), 1, false).size(), 4u);
}

// Tensor parallelism splits the heads and the FFN's and vocabulary's columns.
TEST(LayerGemms, TensorParallelismNarrowsTheWeights) {
  const auto whole = layer_gemms(llama7b(), 1, true);
  const auto split = layer_gemms(llama7b(), 4, true);
  EXPECT_EQ(split[0].out * 4, whole[0].out);
  EXPECT_EQ(split[1].in * 4, whole[1].in);
  EXPECT_EQ(split[1].out, whole[1].out);
  EXPECT_EQ(split[3].in * 4, whole[3].in);
  EXPECT_EQ(split[4].out * 4, whole[4].out);
}

// Backward: the input gradient (m x in, reduction over out) and the weight
// gradient (in x out, reduction over the m tokens), twice the forward FLOPs.
TEST(LayerGemms, BackwardRunsTheInputAndWeightGradients) {
  const WeightGemm qkv = layer_gemms(llama7b(), 1, false)[0];
  std::vector<GemmShape> backward;
  append_pass_gemms(backward, qkv, 100, Pass::Backward, 2);
  ASSERT_EQ(backward.size(), 2u);
  EXPECT_EQ(backward[0], (GemmShape{.m = 100, .n = 4096, .k = 3 * 4096, .count = 2, .name = "qkv_dgrad"}));
  EXPECT_EQ(backward[1], (GemmShape{.m = 4096, .n = 3 * 4096, .k = 100, .count = 2, .name = "qkv_wgrad"}));
  std::vector<GemmShape> recompute;
  append_pass_gemms(recompute, qkv, 100, Pass::Recompute, 2);
  EXPECT_EQ(recompute, (std::vector<GemmShape>{{.m = 100, .n = 3 * 4096, .k = 4096, .count = 2, .name = "qkv"}}));
  std::vector<GemmShape> none;
  append_pass_gemms(none, qkv, 0, Pass::Forward, 2);
  EXPECT_TRUE(none.empty());
}

// The listed GEMMs are the model's GEMM FLOPs (compute_cost.h counts every
// parameter, norms included: within 0.1% for Llama's RMSNorm scales).
TEST(LayerGemms, AddUpToTheComputeModelsGemmFlops) {
  const std::array<Segment, 1> chunk{Segment{4096, 0}};
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    const double model = chunk_flops(llama7b(), pass, ChunkWork{chunk, 3, false, true}).gemm;
    EXPECT_NEAR(flops(pass_gemms(llama7b(), 1, true, 4096, pass, 3)) / model, 1.0, 1e-3);
  }
}

}  // namespace
}  // namespace eppsim
