#include "models/activation_memory.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/errors.h"
#include "models/memory_model.h"

namespace eppsim {
namespace {

const TransformerSpec& llama7b() { return *find_model_preset("llama2-7b"); }

// llama2-7b: A = 2 * (6*4096 + 2*4096 + 3*11008) + 4*32 = 131,712 bytes per token
// and layer; layer input e*h = 8192; K+V e*2*kv = 16384; logits 4 * 32000.
constexpr std::uint64_t kA = 131'712;
constexpr std::uint64_t kInput = 8192;
constexpr std::uint64_t kKv = 16384;

ActivationChunk chunk_of(const std::vector<Segment>& segments, std::uint32_t layers, std::uint32_t ckpt,
                         std::uint64_t prefix = 0, bool head = false) {
  return ActivationChunk{segments, prefix, layers, ckpt, head};
}

TEST(ActivationMemory, FullSetMatchesTheMemoryModel) {
  const std::vector<Segment> segs = {{600, 0}, {400, 0}};
  const ActivationBreakdown b = chunk_activation_bytes(llama7b(), chunk_of(segs, 8, 0));
  EXPECT_EQ(b.full_layers, Bytes(8 * kA * 1000));
  EXPECT_EQ(b.total(), stage_activation_bytes(llama7b(), 1000, 8, false, false));
  EXPECT_EQ(b.checkpoint_inputs, Bytes(0));
  EXPECT_EQ(b.prefix_kv, Bytes(0));
  EXPECT_EQ(b.dkv_buffer, Bytes(0));
}

TEST(ActivationMemory, SequenceParallelismShardsEveryTerm) {
  const std::vector<Segment> whole = {{4000, 0}};
  const std::vector<Segment> quarter = {{1000, 0}};
  const ActivationBreakdown sharded =
      chunk_activation_bytes(llama7b(), chunk_of(whole, 8, 3, 4000, true), ActivationOptions{.sp_degree = 4});
  const ActivationBreakdown single = chunk_activation_bytes(llama7b(), chunk_of(quarter, 8, 3, 1000, true));
  EXPECT_EQ(sharded.total(), single.total());
  EXPECT_EQ(sharded.logits, Bytes(4ull * 32000 * 1000));
}

TEST(ActivationMemory, CheckpointingSavesLinearlyPerLayer) {
  const std::vector<Segment> segs = {{1000, 0}};
  const TransformerSpec& m = llama7b();
  const Bytes none = chunk_activation_bytes(m, chunk_of(segs, 8, 0)).total();
  for (std::uint32_t c = 0; c <= 8; ++c) {
    const ActivationBreakdown b = chunk_activation_bytes(m, chunk_of(segs, 8, c));
    EXPECT_EQ(b.full_layers, Bytes((8 - c) * kA * 1000));
    EXPECT_EQ(b.checkpoint_inputs, Bytes(c * kInput * 1000));
    EXPECT_EQ(b.total(), none - Bytes(c * (kA - kInput) * 1000)) << c;
  }
  // Every layer checkpointed: the memory model's full recompute.
  EXPECT_EQ(chunk_activation_bytes(m, chunk_of(segs, 8, 8)).total(), stage_activation_bytes(m, 1000, 8, false, true));
}

TEST(ActivationMemory, SplitChunksKeepKeysValuesAndTheirGradients) {
  const std::vector<Segment> slice = {{1000, 3000}};  // a non-final slice: later slices attend to it
  const TransformerSpec& m = llama7b();
  for (std::uint32_t c : {0u, 3u, 8u}) {
    const ActivationBreakdown split = chunk_activation_bytes(m, chunk_of(slice, 8, c, 1000));
    const ActivationBreakdown tail = chunk_activation_bytes(m, chunk_of(slice, 8, c, 0));
    EXPECT_EQ(split.prefix_kv, Bytes(c * kKv * 1000)) << c;      // only checkpointed layers add K/V
    EXPECT_EQ(split.dkv_buffer, Bytes(8 * kKv * 1000)) << c;     // every layer's dK/dV
    EXPECT_EQ(split.total(), tail.total() + Bytes((c + 8) * kKv * 1000)) << c;
  }
  // Checkpointing still saves, less per layer for a split chunk (its K/V stay).
  const Bytes s0 = chunk_activation_bytes(m, chunk_of(slice, 8, 0, 1000)).total();
  const Bytes s1 = chunk_activation_bytes(m, chunk_of(slice, 8, 1, 1000)).total();
  EXPECT_EQ(s0 - s1, Bytes((kA - kInput - kKv) * 1000));
}

TEST(ActivationMemory, GqaShrinksTheSplitChunkTerms) {
  const std::vector<Segment> slice = {{1000, 0}};
  const ActivationBreakdown gqa =
      chunk_activation_bytes(*find_model_preset("llama3-8b"), chunk_of(slice, 8, 4, 1000));
  EXPECT_EQ(gqa.dkv_buffer, Bytes(8ull * 2 * 2 * 1024 * 1000));
  EXPECT_EQ(gqa.prefix_kv, Bytes(4ull * 2 * 2 * 1024 * 1000));
}

TEST(ActivationMemory, LastStageKeepsFp32Logits) {
  const std::vector<Segment> segs = {{1000, 0}};
  const ActivationBreakdown b = chunk_activation_bytes(llama7b(), chunk_of(segs, 8, 0, 0, true));
  EXPECT_EQ(b.logits, Bytes(4ull * 32000 * 1000));
  EXPECT_EQ(b.total(), stage_activation_bytes(llama7b(), 1000, 8, true, false));
}

TEST(ActivationMemory, LinearFormMatchesTheBreakdown) {
  const std::vector<Segment> slice = {{1234, 5000}};
  const TransformerSpec& m = llama7b();
  const ActivationOptions o{.sp_degree = 2};
  const ActivationLinearForm f = chunk_activation_linear_form(m, chunk_of(slice, 10, 0, 1234, true), o);
  for (std::uint32_t c = 0; c <= 10; ++c) {
    const double total = static_cast<double>(chunk_activation_bytes(m, chunk_of(slice, 10, c, 1234, true), o).total().count);
    EXPECT_NEAR(total, f.intercept_bytes - c * f.saving_per_checkpointed_layer_bytes, 3.0) << c;
  }
  EXPECT_DOUBLE_EQ(f.saving_per_checkpointed_layer_bytes, (kA - kInput - kKv) * 617.0);
}

TEST(ActivationMemory, BackwardTransients) {
  const std::vector<Segment> segs = {{1000, 0}};
  const TransformerSpec& m = llama7b();
  EXPECT_EQ(chunk_backward_transient_bytes(m, chunk_of(segs, 8, 0, 0, true)), Bytes(0));
  EXPECT_EQ(chunk_backward_transient_bytes(m, chunk_of(segs, 8, 2)), Bytes(kA * 1000));
  EXPECT_EQ(chunk_backward_transient_bytes(m, chunk_of(segs, 8, 0, 0, true),
                                           ActivationOptions{.logits = LogitsMemory::Unfused}),
            Bytes(4ull * 32000 * 1000));
}

TEST(ActivationMemory, PrefixDkvBuffer) {
  EXPECT_EQ(prefix_dkv_buffer_bytes(llama7b(), 1000, 8, 2), Bytes(kKv * 500 * 8));
  EXPECT_THROW(prefix_dkv_buffer_bytes(llama7b(), 1000, 8, 0), InputError);
}

TEST(ActivationMemory, RejectsBadInput) {
  const std::vector<Segment> segs = {{1000, 0}};
  EXPECT_THROW(chunk_activation_bytes(llama7b(), chunk_of(segs, 8, 9)), InputError);
  EXPECT_THROW(chunk_activation_bytes(llama7b(), chunk_of(segs, 8, 0, 1001)), InputError);
  EXPECT_THROW(chunk_activation_bytes(llama7b(), chunk_of(segs, 8, 0), ActivationOptions{.sp_degree = 0}),
               InputError);
}

}  // namespace
}  // namespace eppsim
