#pragma once
// A kernel plan's attention as the ragged batches a fused flash-attention
// kernel takes (cuDNN's SDPA with ragged offsets, runtime/cuda/cudnn_attention.h):
// the sequences of a packed micro-batch one after another in one buffer per
// tensor, token-major as runtime/cpu/cpu_attention.h lays out one sequence,
//   q, o, dq, d_o   [sum of tokens x heads x head_dim]
//   k, v, dk, dv    [sum of (context + tokens) x kv_heads x head_dim]
// with per-sequence lengths and element offsets, and a causal mask aligned to
// the bottom right (query i of a sequence sees its context and queries 0..i).
// Kept apart from CUDA so that the layout is unit-tested without a GPU.
#include <cstdint>
#include <vector>

#include "runtime/kernel_plan.h"

namespace eppsim::runtime {

struct AttentionBatch {
  std::uint32_t heads = 0, kv_heads = 0, head_dim = 0;
  // Per sequence: query tokens and key tokens (context + queries).
  std::vector<std::int32_t> query_tokens, key_tokens;
  // sequences() + 1 entries: where each sequence's queries (keys) start, in
  // elements of the layouts above; the last is the buffer's length.
  std::vector<std::int32_t> query_offsets, key_offsets;

  std::uint32_t sequences() const { return static_cast<std::uint32_t>(query_tokens.size()); }
  std::uint64_t query_elements() const { return query_offsets.empty() ? 0 : static_cast<std::uint64_t>(query_offsets.back()); }
  std::uint64_t key_elements() const { return key_offsets.empty() ? 0 : static_cast<std::uint64_t>(key_offsets.back()); }
  std::int32_t max_query_tokens() const;
  std::int32_t max_key_tokens() const;
};

// The extents a graph is built for: the batch's sequences, and its longest
// query and key lengths rounded up to a power of two (at least 64), so that
// micro-batches of different lengths share a built graph (the kernel skips
// the tiles past each sequence's own length).
struct AttentionGraphKey {
  Pass pass = Pass::Forward;  // Recompute is Forward
  std::uint32_t heads = 0, kv_heads = 0, head_dim = 0;
  std::uint32_t sequences = 0;
  std::int64_t max_query_tokens = 0, max_key_tokens = 0;
  auto operator<=>(const AttentionGraphKey&) const = default;
};

AttentionGraphKey attention_graph_key(const AttentionBatch& batch, Pass pass);

// The plan's attention shapes (each `count` sequences) as batches: shapes of
// the same heads, K/V heads and head dimension go into one batch, in the
// plan's order, and a batch is closed before any of its buffers would pass
// `max_elements` (the 32-bit offsets the kernel takes). Throws
// std::invalid_argument for a single sequence past `max_elements` or a shape
// the K/V heads do not divide.
std::vector<AttentionBatch> attention_batches(const std::vector<AttentionShape>& shapes,
                                              std::uint64_t max_elements = 0x7fffffffu);

}  // namespace eppsim::runtime
