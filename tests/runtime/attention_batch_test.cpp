#include "runtime/attention_batch.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace eppsim::runtime {
namespace {

TEST(AttentionBatch, PacksSequencesOneAfterAnother) {
  // Two sequences of 100 tokens, then a slice of 50 after 30 tokens of context.
  const std::vector<AttentionShape> shapes = {
      {.tokens = 100, .context_tokens = 0, .heads = 8, .kv_heads = 2, .head_dim = 64, .count = 2},
      {.tokens = 50, .context_tokens = 30, .heads = 8, .kv_heads = 2, .head_dim = 64},
  };
  const std::vector<AttentionBatch> batches = attention_batches(shapes);
  ASSERT_EQ(batches.size(), 1u);
  const AttentionBatch& b = batches[0];
  EXPECT_EQ(b.sequences(), 3u);
  EXPECT_EQ(b.query_tokens, (std::vector<std::int32_t>{100, 100, 50}));
  EXPECT_EQ(b.key_tokens, (std::vector<std::int32_t>{100, 100, 80}));
  EXPECT_EQ(b.query_offsets, (std::vector<std::int32_t>{0, 100 * 8 * 64, 200 * 8 * 64, 250 * 8 * 64}));
  EXPECT_EQ(b.key_offsets, (std::vector<std::int32_t>{0, 100 * 2 * 64, 200 * 2 * 64, 280 * 2 * 64}));
  EXPECT_EQ(b.query_elements(), 250u * 8 * 64);
  EXPECT_EQ(b.key_elements(), 280u * 2 * 64);
  EXPECT_EQ(b.max_query_tokens(), 100);
  EXPECT_EQ(b.max_key_tokens(), 100);
}

TEST(AttentionBatch, OtherHeadsOrAFullBufferStartANewBatch) {
  const std::vector<AttentionShape> shapes = {
      {.tokens = 10, .heads = 4, .kv_heads = 4, .head_dim = 16, .count = 3},
      {.tokens = 10, .heads = 8, .kv_heads = 4, .head_dim = 16},
  };
  // 640 query elements a sequence: two fit under 1,300, the third does not.
  const std::vector<AttentionBatch> batches = attention_batches(shapes, 1300);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].sequences(), 2u);
  EXPECT_EQ(batches[1].sequences(), 1u);
  EXPECT_EQ(batches[2].heads, 8u);
  EXPECT_EQ(batches[2].query_offsets.back(), 10 * 8 * 16);
}

TEST(AttentionBatch, EmptyShapesAreSkippedAndBadOnesRefused) {
  EXPECT_TRUE(attention_batches({{.tokens = 0, .heads = 4, .kv_heads = 4, .head_dim = 16}}).empty());
  EXPECT_TRUE(attention_batches({{.tokens = 8, .heads = 4, .kv_heads = 4, .head_dim = 16, .count = 0}}).empty());
  EXPECT_THROW(attention_batches({{.tokens = 8, .heads = 6, .kv_heads = 4, .head_dim = 16}}), std::invalid_argument);
  EXPECT_THROW(attention_batches({{.tokens = 100, .heads = 4, .kv_heads = 4, .head_dim = 16}}, 1000), std::invalid_argument);
}

TEST(AttentionBatch, GraphKeysRoundExtentsUpToPowersOfTwo) {
  const AttentionBatch a = attention_batches({{.tokens = 300, .context_tokens = 0, .heads = 32, .kv_heads = 4, .head_dim = 64, .count = 5},
                                              {.tokens = 20, .heads = 32, .kv_heads = 4, .head_dim = 64}})[0];
  const AttentionBatch b = attention_batches({{.tokens = 500, .context_tokens = 0, .heads = 32, .kv_heads = 4, .head_dim = 64, .count = 6}})[0];
  const AttentionGraphKey ka = attention_graph_key(a, Pass::Forward);
  EXPECT_EQ(ka.sequences, 6u);
  EXPECT_EQ(ka.max_query_tokens, 512);
  EXPECT_EQ(ka.max_key_tokens, 512);
  // The same extents and sequence count share a graph; the pass does not,
  // but a recompute is a forward.
  EXPECT_EQ(ka, attention_graph_key(b, Pass::Recompute));
  EXPECT_NE(ka, attention_graph_key(b, Pass::Backward));
  const AttentionBatch tiny = attention_batches({{.tokens = 3, .context_tokens = 70, .heads = 1, .kv_heads = 1, .head_dim = 8}})[0];
  EXPECT_EQ(attention_graph_key(tiny, Pass::Forward).max_query_tokens, 64);
  EXPECT_EQ(attention_graph_key(tiny, Pass::Forward).max_key_tokens, 128);
}

}  // namespace
}  // namespace eppsim::runtime
