#include "runtime/attention_blocks.h"

#include <algorithm>

namespace eppsim::runtime {

std::uint64_t attention_block_rows(const AttentionShape& shape, std::uint64_t heads_per_block,
                                   std::uint64_t budget_bytes, std::uint64_t bytes_per_score) {
  const std::uint64_t per_row = std::max<std::uint64_t>(
      1, std::max<std::uint64_t>(1, heads_per_block) * (shape.context_tokens + shape.tokens) * bytes_per_score);
  const std::uint64_t rows = std::max<std::uint64_t>(64, budget_bytes / per_row / 64 * 64);
  return std::min(rows, shape.tokens);
}

AttentionBlock attention_block(const AttentionShape& shape, std::uint64_t budget_bytes, std::uint64_t bytes_per_score,
                               std::uint64_t min_rows) {
  const std::uint64_t all = std::max<std::uint64_t>(1, shape.heads);
  AttentionBlock block{attention_block_rows(shape, all, budget_bytes, bytes_per_score), all};
  if (block.rows >= std::min(min_rows, shape.tokens)) return block;
  const std::uint64_t per_head = std::max<std::uint64_t>(1, min_rows * (shape.context_tokens + shape.tokens) * bytes_per_score);
  block.heads = std::clamp<std::uint64_t>(budget_bytes / per_head, 1, all);
  block.rows = attention_block_rows(shape, block.heads, budget_bytes, bytes_per_score);
  return block;
}

}  // namespace eppsim::runtime
