#include "runtime/attention_blocks.h"

#include <gtest/gtest.h>

namespace eppsim::runtime {
namespace {

TEST(AttentionBlocks, RowsFitTheBudget) {
  // 8 query heads at once, 4096 keys, 10 bytes per score: 327,680 bytes per row.
  const AttentionShape a{.tokens = 4000, .context_tokens = 96, .heads = 64, .kv_heads = 8, .head_dim = 128};
  const std::uint64_t rows = attention_block_rows(a, 8, 1ull << 30, 10);
  EXPECT_EQ(rows % 64, 0u);
  EXPECT_LE(rows * 8 * 4096 * 10, 1ull << 30);
  EXPECT_GT((rows + 64) * 8 * 4096 * 10, 1ull << 30);
  EXPECT_EQ(rows, 3264u);
}

TEST(AttentionBlocks, AtLeast64RowsAtMostTheTokens) {
  const AttentionShape longest{.tokens = 1000, .context_tokens = 1 << 20, .heads = 8, .kv_heads = 1, .head_dim = 64};
  EXPECT_EQ(attention_block_rows(longest, 8, 1 << 20, 10), 64u);
  const AttentionShape short_one{.tokens = 10, .heads = 8, .kv_heads = 8, .head_dim = 64};
  EXPECT_EQ(attention_block_rows(short_one, 8, 1ull << 30, 10), 10u);
}

TEST(AttentionBlocks, ShortSequencesTakeEveryHeadAtOnce) {
  // 32 heads x 8192 keys x 10 bytes = 2.6 MB a row: 409 rows of 1 GiB, too few;
  // the whole sequence of 300 tokens fits.
  const AttentionShape whole{.tokens = 300, .context_tokens = 7892, .heads = 32, .kv_heads = 4, .head_dim = 64};
  const AttentionBlock w = attention_block(whole, 1ull << 30, 10);
  EXPECT_EQ(w.heads, 32u);
  EXPECT_EQ(w.rows, 300u);
  const AttentionShape medium{.tokens = 2048, .heads = 32, .kv_heads = 4, .head_dim = 64};
  const AttentionBlock m = attention_block(medium, 1ull << 30, 10);
  EXPECT_EQ(m.heads, 32u);
  EXPECT_EQ(m.rows, 1600u);  // 1 GiB / (32 x 2048 x 10) = 1638, to a multiple of 64
}

TEST(AttentionBlocks, LongSequencesTakeFewerHeadsOfTallBlocks) {
  // 32,768 keys: 512 rows of one head take 168 MB, so 6 heads fit 1 GiB.
  const AttentionShape a{.tokens = 32768, .heads = 32, .kv_heads = 32, .head_dim = 128};
  const AttentionBlock b = attention_block(a, 1ull << 30, 10);
  EXPECT_EQ(b.heads, 6u);
  EXPECT_EQ(b.rows, 512u);
  EXPECT_LE(b.heads * b.rows * 32768 * 10, 1ull << 30);
  // Longer than the budget allows even one head of 512 rows: one head, 64-row floor.
  const AttentionShape longest{.tokens = 1000, .context_tokens = 1 << 20, .heads = 8, .kv_heads = 1, .head_dim = 64};
  const AttentionBlock l = attention_block(longest, 1 << 20, 10);
  EXPECT_EQ(l.heads, 1u);
  EXPECT_EQ(l.rows, 64u);
}

TEST(AttentionBlocks, BlockKeysAreTheContextAndTheQueriesUpToTheLastRow) {
  const AttentionShape a{.tokens = 300, .context_tokens = 50, .heads = 2, .kv_heads = 2, .head_dim = 8};
  EXPECT_EQ(attention_block_keys(a, 0, 64), 114u);
  EXPECT_EQ(attention_block_keys(a, 256, 44), 350u);
}

}  // namespace
}  // namespace eppsim::runtime
