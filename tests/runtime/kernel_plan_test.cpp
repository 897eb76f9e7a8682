#include "runtime/kernel_plan.h"

#include <gtest/gtest.h>

#include <vector>

#include "models/compute_cost.h"
#include "base/errors.h"
#include "schedule/compute_segments.h"
#include "schedule/model_shape.h"
#include "schedule/op_cost.h"

namespace eppsim::runtime {
namespace {

// A small Llama-like model: h 256, 8 heads of 32 over 2 K/V heads, SwiGLU 512.
proto::ModelShape llama_like() {
  proto::ModelShape m;
  m.set_name("tiny-llama");
  m.set_layers(4);
  m.set_hidden_size(256);
  m.set_attention_heads(8);
  m.set_kv_heads(2);
  m.set_ffn_hidden_size(512);
  m.set_vocab_size(1000);
  m.set_gated_ffn(true);
  m.set_bytes_per_element(2);
  return m;
}

proto::ComputeOp op_of(proto::Phase phase, std::vector<std::pair<std::uint64_t, std::uint64_t>> segments,
                       std::uint32_t first_layer = 1, std::uint32_t layer_count = 2) {
  proto::ComputeOp op;
  op.set_phase(phase);
  op.set_first_layer(first_layer);
  op.set_layer_count(layer_count);
  for (auto [s, c] : segments) add_segment(op, Segment{s, c});
  return op;
}

// The model's FLOPs of the op's chunk (all of it, no shards).
FlopCount model_flops(const proto::ModelShape& shape, const proto::ComputeOp& op, LayerPart part = LayerPart::Whole) {
  const std::vector<Segment> segments = segments_of(op);
  const ChunkWork work{segments, op.layer_count(), op.first_layer() == 0, op.includes_lm_head()};
  return part_flops(from_model_shape(shape, "test"), pass_of(op.phase()), work, part);
}

double gemm_flops(const KernelPlan& plan) {
  double f = 0.0;
  for (const GemmShape& g : plan.gemms) f += g.flops();
  return f;
}

double attention_flops_of(const KernelPlan& plan) { return plan_flops(plan) - gemm_flops(plan); }

TEST(KernelPlan, ForwardLayerShapesByHand) {
  const proto::ModelShape model = llama_like();
  const KernelPlan plan = plan_kernels(model, op_of(proto::FORWARD, {{100, 28}}), {});
  EXPECT_EQ(plan.pass, Pass::Forward);
  // qkv: 256 -> 8*32 + 2*2*32 = 384; output 256 -> 256; up 256 -> 2*512; down 512 -> 256; 2 layers.
  const std::vector<GemmShape> expected = {
      {.m = 100, .n = 384, .k = 256, .count = 2, .name = "qkv"},
      {.m = 100, .n = 256, .k = 256, .count = 2, .name = "attention_output"},
      {.m = 100, .n = 1024, .k = 256, .count = 2, .name = "ffn_up"},
      {.m = 100, .n = 256, .k = 512, .count = 2, .name = "ffn_down"},
  };
  EXPECT_EQ(plan.gemms, expected);
  ASSERT_EQ(plan.attention.size(), 1u);
  EXPECT_EQ(plan.attention[0],
            (AttentionShape{.tokens = 100, .context_tokens = 28, .heads = 8, .kv_heads = 2, .head_dim = 32, .count = 2}));
  // Element-wise per token and layer (e = 2): norm 2h, residuals 6h, norm 2h, SwiGLU 3f.
  EXPECT_EQ(plan.elementwise_bytes, 2u * 100 * 2 * (2 * 256 + 6 * 256 + 2 * 256 + 3 * 512));
}

TEST(KernelPlan, WholeLayerFlopsMatchTheModel) {
  const proto::ModelShape model = llama_like();
  for (proto::Phase phase : {proto::FORWARD, proto::BACKWARD, proto::RECOMPUTE}) {
    SCOPED_TRACE(phase);
    const proto::ComputeOp op = op_of(phase, {{100, 28}, {37, 0}, {64, 512}});
    const KernelPlan plan = plan_kernels(model, op, {});
    const FlopCount expected = model_flops(model, op);
    EXPECT_DOUBLE_EQ(attention_flops_of(plan), expected.attention);
    // The model counts the norms' scales as weights (2h per layer); the plan has no GEMM for them.
    const double norms = (phase == proto::BACKWARD ? 2.0 : 1.0) * 2.0 * (2.0 * 256) * 201 * 2;
    EXPECT_DOUBLE_EQ(gemm_flops(plan) + norms, expected.gemm);
  }
}

TEST(KernelPlan, BackwardRunsInputAndWeightGradients) {
  const KernelPlan plan = plan_kernels(llama_like(), op_of(proto::BACKWARD, {{100, 0}}), {});
  EXPECT_EQ(plan.pass, Pass::Backward);
  ASSERT_EQ(plan.gemms.size(), 8u);
  // qkv forward [100 x 256] x [256 x 384]: dX [100 x 384] x [384 x 256], dW [256 x 100] x [100 x 384].
  EXPECT_EQ(plan.gemms[0], (GemmShape{.m = 100, .n = 256, .k = 384, .count = 2, .name = "qkv_dgrad"}));
  EXPECT_EQ(plan.gemms[1], (GemmShape{.m = 256, .n = 384, .k = 100, .count = 2, .name = "qkv_wgrad"}));
  const KernelPlan forward = plan_kernels(llama_like(), op_of(proto::FORWARD, {{100, 0}}), {});
  EXPECT_DOUBLE_EQ(gemm_flops(plan), 2.0 * gemm_flops(forward));
  EXPECT_DOUBLE_EQ(attention_flops_of(plan), 2.5 * attention_flops_of(forward));
  EXPECT_EQ(plan.elementwise_bytes, 2 * forward.elementwise_bytes);
}

TEST(KernelPlan, RecomputeRunsTheForwardKernels) {
  const KernelPlan forward = plan_kernels(llama_like(), op_of(proto::FORWARD, {{100, 0}}), {});
  const KernelPlan recompute = plan_kernels(llama_like(), op_of(proto::RECOMPUTE, {{100, 0}}), {});
  EXPECT_EQ(recompute.pass, Pass::Recompute);
  EXPECT_EQ(recompute.gemms, forward.gemms);
  EXPECT_EQ(recompute.attention, forward.attention);
}

TEST(KernelPlan, PartsSumToTheWholeLayer) {
  const proto::ModelShape model = llama_like();
  for (proto::Phase phase : {proto::FORWARD, proto::BACKWARD}) {
    proto::ComputeOp op = op_of(phase, {{100, 28}});
    op.set_includes_lm_head(true);
    op.set_first_layer(2);
    const KernelPlan whole = plan_kernels(model, op, {});
    double flops = 0.0;
    std::uint64_t bytes = 0;
    for (proto::LayerPart part : {proto::PRE_ATTENTION, proto::ATTENTION, proto::POST_ATTENTION}) {
      op.set_layer_part(part);
      const KernelPlan plan = plan_kernels(model, op, {});
      flops += plan_flops(plan);
      bytes += plan.elementwise_bytes;
      if (part == proto::ATTENTION) {
        EXPECT_TRUE(plan.gemms.empty());
        EXPECT_EQ(plan.elementwise_bytes, 0u);
      } else {
        EXPECT_TRUE(plan.attention.empty());
      }
      if (part == proto::PRE_ATTENTION) {
        // The model's PRE_ATTENTION GEMMs are Q, K, V plus the first norm's scale.
        EXPECT_DOUBLE_EQ(gemm_flops(plan) + (phase == proto::BACKWARD ? 2.0 : 1.0) * 2.0 * 256 * 100 * 2,
                         model_flops(model, op, LayerPart::PreAttention).gemm);
      }
    }
    EXPECT_DOUBLE_EQ(flops, plan_flops(whole));
    EXPECT_EQ(bytes, whole.elementwise_bytes);
  }
}

TEST(KernelPlan, LmHeadIsTheVocabularyGemm) {
  proto::ComputeOp op = op_of(proto::FORWARD, {{100, 0}}, 2, 2);
  op.set_includes_lm_head(true);
  const KernelPlan plan = plan_kernels(llama_like(), op, {});
  ASSERT_FALSE(plan.gemms.empty());
  EXPECT_EQ(plan.gemms.back(), (GemmShape{.m = 100, .n = 1000, .k = 256, .count = 1, .name = "lm_head"}));
  const FlopCount expected = model_flops(llama_like(), op);
  EXPECT_DOUBLE_EQ(gemm_flops(plan) + 2.0 * 512 * 100 * 2, expected.gemm);
  op.set_layer_part(proto::PRE_ATTENTION);
  for (const GemmShape& g : plan_kernels(llama_like(), op, {}).gemms) EXPECT_NE(g.name, "lm_head");
}

TEST(KernelPlan, EmbeddingMovesBytesOnTheFirstLayer) {
  const KernelPlan first = plan_kernels(llama_like(), op_of(proto::FORWARD, {{100, 0}}, 0, 2), {});
  const KernelPlan later = plan_kernels(llama_like(), op_of(proto::FORWARD, {{100, 0}}, 1, 2), {});
  EXPECT_EQ(first.gemms, later.gemms);
  EXPECT_EQ(first.elementwise_bytes - later.elementwise_bytes, 2u * 2 * 256 * 100);
}

TEST(KernelPlan, IdenticalSegmentsShareOneAttentionShape) {
  const KernelPlan plan = plan_kernels(llama_like(), op_of(proto::FORWARD, {{64, 0}, {32, 0}, {64, 0}}), {});
  ASSERT_EQ(plan.attention.size(), 2u);
  EXPECT_EQ(plan.attention[0].tokens, 64u);
  EXPECT_EQ(plan.attention[0].count, 4u);  // two segments x two layers
  EXPECT_EQ(plan.attention[1].tokens, 32u);
  EXPECT_EQ(plan.attention[1].count, 2u);
  EXPECT_EQ(plan.gemms[0].m, 160u);
}

proto::ComputeOp split(proto::ComputeOp op, proto::SplitKind kind, std::uint32_t group) {
  proto::ComputeSplit& s = *op.add_splits();
  s.set_kind(kind);
  s.set_group(group);
  return op;
}

TEST(KernelPlan, SequenceParallelSplitsTokensForGemmsAndHeadsForAttention) {
  const proto::ComputeOp op = split(op_of(proto::FORWARD, {{100, 28}}), proto::SEQUENCE_PARALLEL, 1);
  const KernelPlan plan = plan_kernels(llama_like(), op, {4, 2});
  // Ulysses projects its half of the tokens with every head's weights.
  EXPECT_EQ(plan.gemms[0], (GemmShape{.m = 50, .n = 384, .k = 256, .count = 2, .name = "qkv"}));
  ASSERT_EQ(plan.attention.size(), 1u);
  EXPECT_EQ(plan.attention[0],
            (AttentionShape{.tokens = 100, .context_tokens = 28, .heads = 4, .kv_heads = 1, .head_dim = 32, .count = 2}));
  const FlopCount whole = model_flops(llama_like(), op);
  EXPECT_DOUBLE_EQ(attention_flops_of(plan), whole.attention / 2);
  EXPECT_DOUBLE_EQ(gemm_flops(plan) + 2.0 * 512 * 100 * 2 / 2, whole.gemm / 2);  // less the norms' scales
}

TEST(KernelPlan, GroupedKvHeadsAreReplicatedPastTheirCount) {
  // 4-way SP over 2 K/V heads: 2 query heads per rank, each rank keeps one K/V head.
  const proto::ComputeOp op = split(op_of(proto::FORWARD, {{100, 0}}), proto::SEQUENCE_PARALLEL, 0);
  const KernelPlan plan = plan_kernels(llama_like(), op, {4});
  EXPECT_EQ(plan.attention[0].heads, 2u);
  EXPECT_EQ(plan.attention[0].kv_heads, 1u);
  EXPECT_EQ(plan.gemms[0].n, 384u);
}

TEST(KernelPlan, TensorParallelSplitsWeights) {
  const proto::ComputeOp op = split(op_of(proto::FORWARD, {{100, 0}}), proto::TENSOR_PARALLEL, 0);
  const KernelPlan plan = plan_kernels(llama_like(), op, {2});
  const std::vector<GemmShape> expected = {
      {.m = 100, .n = 4 * 32 + 2 * 32, .k = 256, .count = 2, .name = "qkv"},
      {.m = 100, .n = 256, .k = 128, .count = 2, .name = "attention_output"},
      {.m = 100, .n = 512, .k = 256, .count = 2, .name = "ffn_up"},
      {.m = 100, .n = 256, .k = 256, .count = 2, .name = "ffn_down"},
  };
  EXPECT_EQ(plan.gemms, expected);
  EXPECT_EQ(plan.attention[0].tokens, 100u);
  EXPECT_EQ(plan.attention[0].heads, 4u);
  EXPECT_EQ(plan.attention[0].kv_heads, 1u);
  const FlopCount whole = model_flops(llama_like(), op);
  EXPECT_DOUBLE_EQ(attention_flops_of(plan), whole.attention / 2);
}

TEST(KernelPlan, ContextParallelTakesTheAverageRanksQueries) {
  const proto::ComputeOp op = split(op_of(proto::FORWARD, {{128, 64}}), proto::CONTEXT_PARALLEL, 0);
  const KernelPlan plan = plan_kernels(llama_like(), op, {4});
  EXPECT_EQ(plan.gemms[0].m, 32u);
  ASSERT_EQ(plan.attention.size(), 1u);
  EXPECT_EQ(plan.attention[0].tokens, 32u);
  EXPECT_EQ(plan.attention[0].context_tokens, 64u + 48);
  EXPECT_EQ(plan.attention[0].heads, 8u);
  // s/cp queries at the average position have the segment's causal pairs over cp.
  EXPECT_DOUBLE_EQ(attention_flops_of(plan), model_flops(llama_like(), op).attention / 4);
}

TEST(KernelPlan, OptimizerStreamsItsMemoryTraffic) {
  proto::ComputeOp op;
  op.set_phase(proto::OPTIMIZER);
  op.set_memory_traffic_bytes(123456);
  const KernelPlan plan = plan_kernels(llama_like(), op, {});
  EXPECT_TRUE(plan.gemms.empty());
  EXPECT_TRUE(plan.attention.empty());
  EXPECT_EQ(plan.elementwise_bytes, 123456u);
  EXPECT_DOUBLE_EQ(plan_flops(plan), 0.0);
}

TEST(KernelPlan, GptHasTwoFfnMatrices) {
  proto::ModelShape gpt = llama_like();
  gpt.set_gated_ffn(false);
  gpt.set_kv_heads(8);
  const KernelPlan plan = plan_kernels(gpt, op_of(proto::FORWARD, {{10, 0}}), {});
  EXPECT_EQ(plan.gemms[0].n, 3u * 256);
  EXPECT_EQ(plan.gemms[2], (GemmShape{.m = 10, .n = 512, .k = 256, .count = 2, .name = "ffn_up"}));
}

TEST(KernelPlan, EmptyChunkPlansNothing) {
  EXPECT_TRUE(plan_kernels(llama_like(), op_of(proto::FORWARD, {}), {}).empty());
  EXPECT_TRUE(plan_kernels(llama_like(), op_of(proto::FORWARD, {{100, 0}}, 1, 0), {}).empty());
}

void expect_error(const proto::ComputeOp& op, const std::vector<std::uint32_t>& groups, const std::string& field) {
  try {
    plan_kernels(llama_like(), op, groups);
    ADD_FAILURE() << "no error for " << field;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(KernelPlan, BadShapesNameTheField) {
  expect_error(op_of(proto::FORWARD, {{10, 0}}, 3, 2), {}, "compute.first_layer");
  expect_error(split(op_of(proto::FORWARD, {{10, 0}}), proto::SEQUENCE_PARALLEL, 2), {2, 2}, "compute.splits[0].group");
  expect_error(split(op_of(proto::FORWARD, {{10, 0}}), proto::SEQUENCE_PARALLEL, 0), {3}, "attention heads");
  expect_error(split(op_of(proto::FORWARD, {{10, 0}}), proto::SPLIT_KIND_UNSPECIFIED, 0), {2}, "compute.splits[0].kind");
  proto::ModelShape bad = llama_like();
  bad.set_hidden_size(0);
  EXPECT_THROW(plan_kernels(bad, op_of(proto::FORWARD, {{10, 0}}), {}), InputError);
}

TEST(KernelBuffers, GrowToTheLargestOperandOfEveryPlan) {
  KernelPlan forward;
  forward.gemms = {GemmShape{.m = 100, .n = 30, .k = 20, .count = 1, .name = "qkv"},
                   GemmShape{.m = 10, .n = 50, .k = 40, .count = 1, .name = "ffn_up"}};
  forward.attention = {AttentionShape{.tokens = 100, .context_tokens = 28, .heads = 4, .kv_heads = 2, .head_dim = 8}};
  forward.elementwise_bytes = 1200;
  KernelBuffers buffers;
  buffers.grow(forward);
  EXPECT_EQ(buffers.gemm_a, 2000u);   // 100 x 20
  EXPECT_EQ(buffers.gemm_b, 2000u);   // 40 x 50
  EXPECT_EQ(buffers.gemm_c, 3000u);   // 100 x 30
  EXPECT_EQ(buffers.queries, 3200u);  // 100 tokens x 4 heads x 8
  EXPECT_EQ(buffers.keys, 2048u);     // 128 keys x 2 K/V heads x 8
  EXPECT_EQ(buffers.scores, 64u * 128);
  EXPECT_EQ(buffers.stream, 100u);    // 1,200 bytes / 12 a step
  EXPECT_EQ(buffers.elements(1000), 2000u + 2000 + 3000 + 4 * 3200 + 4 * 2048 + 2 * 8192 + 2 * 100);
  EXPECT_EQ(buffers.largest(1000), 8192u);
  // A smaller plan changes nothing; a longer stream is capped by the backend's buffer size.
  KernelPlan small;
  small.gemms = {GemmShape{.m = 5, .n = 5, .k = 5, .count = 1, .name = "qkv"}};
  small.elementwise_bytes = 1 << 20;
  buffers.grow(small);
  EXPECT_EQ(buffers.gemm_c, 3000u);
  EXPECT_EQ(buffers.stream, (1u << 20) / 12);
  EXPECT_EQ(buffers.elements(1000) - buffers.elements(0), 2000u);
}

}  // namespace
}  // namespace eppsim::runtime
