#include "runtime/attention_blocks.h"

#include <algorithm>

namespace eppsim::runtime {

std::uint64_t attention_block_rows(const AttentionShape& shape, std::uint64_t budget_bytes,
                                   std::uint64_t bytes_per_score) {
  const std::uint64_t group = shape.kv_heads > 0 ? std::max<std::uint64_t>(1, shape.heads / shape.kv_heads) : 1;
  const std::uint64_t per_row = std::max<std::uint64_t>(1, group * (shape.context_tokens + shape.tokens) * bytes_per_score);
  const std::uint64_t rows = std::max<std::uint64_t>(64, budget_bytes / per_row / 64 * 64);
  return std::min(rows, shape.tokens);
}

}  // namespace eppsim::runtime
