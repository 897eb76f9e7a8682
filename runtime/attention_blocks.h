#pragma once
// How causal attention is cut into query blocks: each block of rows
// multiplies only with the keys its last row can see, so the work grows as
// s*c + s^2/2 and the score block stays bounded. The CUDA queue's choice of
// block (as large as a memory budget allows) lives here so that it is
// unit-tested without a GPU; the CPU kernels use fixed blocks of
// kAttentionBlockRows (runtime/cpu/cpu_attention.h), which the memory guard's
// estimate counts too (KernelBuffers, runtime/kernel_plan.h).
#include <cstdint>

#include "runtime/kernel_plan.h"

namespace eppsim::runtime {

// The query rows of the CPU kernels' blocks.
inline constexpr std::uint64_t kAttentionBlockRows = 64;

// Query rows per block when the scores of one block, for `heads_per_block`
// query heads at once, may take `budget_bytes` at `bytes_per_score` (every
// buffer of one score together): a multiple of 64, at least 64 (the budget may
// be exceeded for very long keys), at most the shape's tokens.
std::uint64_t attention_block_rows(const AttentionShape& shape, std::uint64_t heads_per_block,
                                   std::uint64_t budget_bytes, std::uint64_t bytes_per_score);

// The query block of the CUDA kernels: `heads` query heads at once (one
// batched GEMM per step) over `rows` query rows.
struct AttentionBlock {
  std::uint64_t rows = 0;
  std::uint64_t heads = 0;
};

// Every query head at once when a block of at least `min_rows` rows (or the
// whole sequence) then fits `budget_bytes`: short sequences take few launches.
// Otherwise as many heads as fit blocks of `min_rows` rows (at least one), so
// that long sequences keep tall GEMMs. Rows as attention_block_rows.
AttentionBlock attention_block(const AttentionShape& shape, std::uint64_t budget_bytes, std::uint64_t bytes_per_score,
                               std::uint64_t min_rows = 512);

// Keys the block of query rows [row0, row0 + rows) multiplies with: the
// context and the queries up to the block's last.
inline std::uint64_t attention_block_keys(const AttentionShape& shape, std::uint64_t row0, std::uint64_t rows) {
  return shape.context_tokens + row0 + rows;
}

}  // namespace eppsim::runtime
