#include "runtime/attention_blocks.h"

#include <gtest/gtest.h>

namespace eppsim::runtime {
namespace {

TEST(AttentionBlocks, RowsFitTheBudget) {
  // 8 query heads per K/V head, 4096 keys, 10 bytes per score: 327,680 bytes per row.
  const AttentionShape a{.tokens = 4000, .context_tokens = 96, .heads = 64, .kv_heads = 8, .head_dim = 128};
  const std::uint64_t rows = attention_block_rows(a, 1ull << 30, 10);
  EXPECT_EQ(rows % 64, 0u);
  EXPECT_LE(rows * 8 * 4096 * 10, 1ull << 30);
  EXPECT_GT((rows + 64) * 8 * 4096 * 10, 1ull << 30);
  EXPECT_EQ(rows, 3264u);
}

TEST(AttentionBlocks, AtLeast64RowsAtMostTheTokens) {
  const AttentionShape longest{.tokens = 1000, .context_tokens = 1 << 20, .heads = 8, .kv_heads = 1, .head_dim = 64};
  EXPECT_EQ(attention_block_rows(longest, 1 << 20, 10), 64u);
  const AttentionShape short_one{.tokens = 10, .heads = 8, .kv_heads = 8, .head_dim = 64};
  EXPECT_EQ(attention_block_rows(short_one, 1ull << 30, 10), 10u);
}

TEST(AttentionBlocks, BlockKeysAreTheContextAndTheQueriesUpToTheLastRow) {
  const AttentionShape a{.tokens = 300, .context_tokens = 50, .heads = 2, .kv_heads = 2, .head_dim = 8};
  EXPECT_EQ(attention_block_keys(a, 0, 64), 114u);
  EXPECT_EQ(attention_block_keys(a, 256, 44), 350u);
}

}  // namespace
}  // namespace eppsim::runtime
