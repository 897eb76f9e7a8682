#include "models/sequence_parallel_cost.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "models/network/closed_form_network.h"
#include "models/cluster_cost_model.h"
#include "base/errors.h"
#include "models/flexsp_preset.h"
#include "models/gpu_spec.h"

namespace eppsim {
namespace {

const TransformerSpec& preset(const char* name) { return *find_model_preset(name); }

const LinkParams kNvlink{BytesPerSecond(100e9), Seconds(1e-6)};
const LinkParams kNic{BytesPerSecond(25e9), Seconds(5e-6)};

// Nodes of 8 GPUs joined by kNvlink, kNic between nodes, closed-form pricing.
ClusterCostModel cluster_cost(std::uint32_t ranks, LinkParams nvlink = kNvlink) {
  std::vector<std::uint32_t> nodes(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) nodes[r] = r / 8;
  const GpuSpec& gpu = *find_gpu_preset("A100-80GB");
  return ClusterCostModel(std::make_shared<AnalyticComputeCost>(preset("llama2-7b"), gpu, AnalyticEfficiency{}),
                          std::make_shared<ClosedFormNetwork>(nvlink, kNic, nodes), gpu.memory_bandwidth);
}

std::vector<std::uint32_t> first_ranks(std::uint32_t n) {
  std::vector<std::uint32_t> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0u);
  return ranks;
}

TEST(Ulysses, FourAllToAllsOfTheShardPerLayerAndPass) {
  // llama2-7b: h = kv = 4096, bf16. T = 8192 at d = 4: a 2048-token shard.
  const auto fwd = ulysses_layer_all_to_alls(preset("llama2-7b"), 8192, 4, Pass::Forward);
  const char* names[] = {"q", "k", "v", "out"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(fwd[i].tensor, names[i]);
    EXPECT_EQ(fwd[i].buffer, Bytes(2048ull * 4096 * 2));
    EXPECT_EQ(fwd[i].sent, Bytes(2048ull * 4096 * 2 * 3 / 4));
  }
  const auto bwd = ulysses_layer_all_to_alls(preset("llama2-7b"), 8192, 4, Pass::Backward);
  EXPECT_EQ(bwd[0].tensor, "dout");
  EXPECT_EQ(bwd[3].tensor, "dv");
  const auto rec = ulysses_layer_all_to_alls(preset("llama2-7b"), 8192, 4, Pass::Recompute);
  EXPECT_EQ(rec[0].tensor, "q");
}

TEST(Ulysses, LayerTotalsAndTime) {
  const UlyssesLayerCost c = ulysses_layer_cost(preset("llama2-7b"), 8192, 4, Pass::Forward);
  // 2 * T/d * (h + kv) * e
  EXPECT_EQ(c.buffer, Bytes(2ull * 2048 * (4096 + 4096) * 2));
  EXPECT_EQ(c.sent, Bytes(2ull * 2048 * (4096 + 4096) * 2 * 3 / 4));
  // Two all-to-alls as the Schedule runs them: Q+K+V, then the output.
  const auto fwd = ulysses_layer_exchanges(preset("llama2-7b"), 8192, 4, Pass::Forward);
  EXPECT_EQ(fwd[0], Bytes(2048ull * 3 * 4096 * 2));
  EXPECT_EQ(fwd[1], Bytes(2048ull * 4096 * 2));
  const auto bwd = ulysses_layer_exchanges(preset("llama2-7b"), 8192, 4, Pass::Backward);
  EXPECT_EQ(bwd[0], fwd[1]);
  EXPECT_EQ(bwd[1], fwd[0]);
  const UlyssesLayerCost b = ulysses_layer_cost(preset("llama2-7b"), 8192, 4, Pass::Backward);
  EXPECT_EQ(b.buffer, c.buffer);
  // Two all-to-alls inside a node: 2 * 3 latencies + 3/4 of the buffers over NVLink.
  const ClusterCostModel cost = cluster_cost(32);
  const auto group = first_ranks(4);
  const double time = ulysses_layer_time(preset("llama2-7b"), 8192, group, Pass::Forward, cost).value;
  EXPECT_NEAR(time, 2 * 3 * 1e-6 + 0.75 * static_cast<double>(c.buffer.count) / 100e9, 1e-12);
  EXPECT_DOUBLE_EQ(ulysses_layer_time(preset("llama2-7b"), 8192, group, Pass::Backward, cost).value, time);
}

TEST(Ulysses, GroupedQueryAttentionShrinksKeysAndValues) {
  // llama3-8b: h = 4096, kv = 1024.
  const auto a = ulysses_layer_all_to_alls(preset("llama3-8b"), 8192, 4, Pass::Forward);
  EXPECT_EQ(a[0].buffer, Bytes(2048ull * 4096 * 2));
  EXPECT_EQ(a[1].buffer, Bytes(2048ull * 1024 * 2));
  EXPECT_EQ(a[2].buffer, Bytes(2048ull * 1024 * 2));
  const UlyssesLayerCost gqa = ulysses_layer_cost(preset("llama3-8b"), 8192, 4, Pass::Forward);
  const UlyssesLayerCost mha = ulysses_layer_cost(preset("llama2-7b"), 8192, 4, Pass::Forward);
  EXPECT_EQ(gqa.buffer, Bytes(2ull * 2048 * (4096 + 1024) * 2));
  EXPECT_LT(gqa.buffer, mha.buffer);
  const ClusterCostModel cost = cluster_cost(8);
  const auto group = first_ranks(4);
  EXPECT_LT(ulysses_layer_time(preset("llama3-8b"), 8192, group, Pass::Forward, cost),
            ulysses_layer_time(preset("llama2-7b"), 8192, group, Pass::Forward, cost));
}

TEST(Ulysses, MoreDegreeSendsLessPerGpu) {
  const TransformerSpec& m = preset("llama2-7b");
  Bytes previous = ulysses_layer_cost(m, 65536, 2, Pass::Forward).sent;
  for (std::uint32_t d : {4u, 8u, 16u}) {
    const Bytes sent = ulysses_layer_cost(m, 65536, d, Pass::Forward).sent;
    EXPECT_LT(sent, previous) << d;
    previous = sent;
  }
}

TEST(Ulysses, CrossingNodesIsSlower) {
  const TransformerSpec& m = preset("llama2-7b");
  const ClusterCostModel cost = cluster_cost(32);
  EXPECT_GT(ulysses_layer_time(m, 65536, first_ranks(16), Pass::Forward, cost),
            ulysses_layer_time(m, 65536, first_ranks(8), Pass::Forward, cost));
}

TEST(Ulysses, DegreeOneMovesNothing) {
  const UlyssesLayerCost c = ulysses_layer_cost(preset("llama2-7b"), 8192, 1, Pass::Forward);
  EXPECT_EQ(c.buffer, Bytes(0));
  EXPECT_EQ(ulysses_layer_time(preset("llama2-7b"), 8192, first_ranks(1), Pass::Forward, cluster_cost(8)), Seconds(0.0));
  EXPECT_THROW(ulysses_layer_cost(preset("llama2-7b"), 8192, 0, Pass::Forward), InputError);
}

TEST(Ulysses, SegmentsMoveOnlyNewTokens) {
  const std::vector<Segment> segs = {{4096, 100000}, {4096, 0}};
  const TransformerSpec& m = preset("llama2-7b");
  EXPECT_EQ(ulysses_layer_cost(m, segs, 4, Pass::Forward).buffer, ulysses_layer_cost(m, 8192, 4, Pass::Forward).buffer);
}

TEST(Ulysses, MatchesFlexSpsAllToAllTermForMultiHeadAttention) {
  // FlexSP: T_a2a = 4 * 2 * L * h * s * 2 / d / BW(d): forward + backward over all layers.
  const FlexSpModel& f = *find_flexsp_model("gpt-7b");
  const TransformerSpec& m = preset("gpt-6.7b");
  const AllToAllBandwidth& bw = flexsp_all_to_all_bandwidth();
  for (std::uint32_t d : {2u, 8u, 16u, 64u}) {
    const double ours = m.layers * (bw.time(d, ulysses_layer_cost(m, 65536, d, Pass::Forward).buffer).value +
                                    bw.time(d, ulysses_layer_cost(m, 65536, d, Pass::Backward).buffer).value);
    const double flexsp = 4.0 * 2.0 * f.layers * f.hidden_size * 65536.0 * 2.0 / d / bw.bandwidth(d).value;
    EXPECT_NEAR(ours, flexsp, 1e-9) << d;
  }
}

TEST(Ulysses, DegreeFitsHeads) {
  EXPECT_TRUE(ulysses_degree_fits(preset("llama3-8b"), 8));
  EXPECT_FALSE(ulysses_degree_fits(preset("llama3-8b"), 16));  // 8 KV heads
  EXPECT_TRUE(ulysses_degree_fits(preset("gpt-6.7b"), 64));
  EXPECT_FALSE(ulysses_degree_fits(preset("llama2-7b"), 3));
  EXPECT_FALSE(ulysses_degree_fits(preset("llama2-7b"), 0));
}

TEST(RingAttention, ForwardSendsKeysAndValuesRoundTheRing) {
  // llama2-7b, T = 8192, d = 4: step = 2 * T/d * kv * e.
  EXPECT_EQ(ring_attention_step_bytes(preset("llama2-7b"), 8192, 4, Pass::Forward), Bytes(2ull * 2048 * 4096 * 2));
}

TEST(RingAttention, BackwardAddsGradientsOfKeysAndValues) {
  const TransformerSpec& m = preset("llama2-7b");
  const Bytes fwd = ring_attention_step_bytes(m, 8192, 4, Pass::Forward);
  EXPECT_EQ(ring_attention_step_bytes(m, 8192, 4, Pass::Backward), fwd * 2);
  EXPECT_EQ(ring_attention_step_bytes(m, 8192, 4, Pass::Backward, RingOptions{.backward_resends_kv = false}), fwd);
  EXPECT_EQ(ring_attention_step_bytes(m, 8192, 4, Pass::Recompute), fwd);
  // Tensor parallelism over 4 splits the heads: each rank circulates a quarter.
  EXPECT_EQ(ring_attention_step_bytes(m, 8192, 4, Pass::Forward, RingOptions{.head_shards = 4}).count * 4, fwd.count);
}

TEST(RingAttention, GqaAndContextAndDegree) {
  const TransformerSpec& m = preset("llama2-7b");
  const Bytes mha = ring_attention_step_bytes(m, 8192, 4, Pass::Forward);
  EXPECT_EQ(ring_attention_step_bytes(preset("llama3-8b"), 8192, 4, Pass::Forward).count * 4, mha.count);  // kv 1024 vs 4096
  // A slice with context circulates the context's K/V too.
  const std::vector<Segment> slice = {{4096, 4096}};
  EXPECT_EQ(ring_attention_step_bytes(m, slice, 4, Pass::Forward), mha);
  EXPECT_LT(ring_attention_step_bytes(m, 8192, 8, Pass::Forward), mha);
  EXPECT_EQ(ring_attention_step_bytes(m, 8192, 1, Pass::Forward), Bytes(0));
  EXPECT_THROW(ring_attention_step_bytes(m, 8192, 0, Pass::Forward), InputError);
}

}  // namespace
}  // namespace eppsim
