#include "runtime/attention_batch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace eppsim::runtime {
namespace {

std::int64_t graph_extent(std::int32_t tokens) {
  std::int64_t extent = 64;
  while (extent < tokens) extent *= 2;
  return extent;
}

bool same_heads(const AttentionBatch& batch, const AttentionShape& shape) {
  return batch.heads == shape.heads && batch.kv_heads == shape.kv_heads && batch.head_dim == shape.head_dim;
}

}  // namespace

std::int32_t AttentionBatch::max_query_tokens() const {
  return query_tokens.empty() ? 0 : *std::max_element(query_tokens.begin(), query_tokens.end());
}

std::int32_t AttentionBatch::max_key_tokens() const {
  return key_tokens.empty() ? 0 : *std::max_element(key_tokens.begin(), key_tokens.end());
}

AttentionGraphKey attention_graph_key(const AttentionBatch& batch, Pass pass) {
  return AttentionGraphKey{.pass = pass == Pass::Backward ? Pass::Backward : Pass::Forward,
                           .heads = batch.heads,
                           .kv_heads = batch.kv_heads,
                           .head_dim = batch.head_dim,
                           .sequences = batch.sequences(),
                           .max_query_tokens = graph_extent(batch.max_query_tokens()),
                           .max_key_tokens = graph_extent(batch.max_key_tokens())};
}

std::vector<AttentionBatch> attention_batches(const std::vector<AttentionShape>& shapes, std::uint64_t max_elements) {
  std::vector<AttentionBatch> batches;
  for (const AttentionShape& shape : shapes) {
    if (shape.tokens == 0 || shape.count == 0) continue;
    if (shape.heads == 0 || shape.kv_heads == 0 || shape.head_dim == 0 || shape.heads % shape.kv_heads != 0) {
      throw std::invalid_argument("attention: " + std::to_string(shape.kv_heads) + " K/V heads do not divide " +
                                  std::to_string(shape.heads) + " query heads");
    }
    const std::uint64_t keys = shape.context_tokens + shape.tokens;
    const std::uint64_t query_elements = shape.tokens * shape.heads * std::uint64_t{shape.head_dim};
    const std::uint64_t key_elements = keys * shape.kv_heads * std::uint64_t{shape.head_dim};
    if (query_elements > max_elements || key_elements > max_elements) {
      throw std::invalid_argument("attention: a sequence of " + std::to_string(keys) + " keys has more than " +
                                  std::to_string(max_elements) + " elements a tensor");
    }
    for (std::uint32_t i = 0; i < shape.count; ++i) {
      if (batches.empty() || !same_heads(batches.back(), shape) ||
          batches.back().query_elements() + query_elements > max_elements ||
          batches.back().key_elements() + key_elements > max_elements) {
        batches.push_back(AttentionBatch{.heads = shape.heads,
                                         .kv_heads = shape.kv_heads,
                                         .head_dim = shape.head_dim,
                                         .query_tokens = {},
                                         .key_tokens = {},
                                         .query_offsets = {0},
                                         .key_offsets = {0}});
      }
      AttentionBatch& batch = batches.back();
      batch.query_tokens.push_back(static_cast<std::int32_t>(shape.tokens));
      batch.key_tokens.push_back(static_cast<std::int32_t>(keys));
      batch.query_offsets.push_back(static_cast<std::int32_t>(batch.query_elements() + query_elements));
      batch.key_offsets.push_back(static_cast<std::int32_t>(batch.key_elements() + key_elements));
    }
  }
  return batches;
}

}  // namespace eppsim::runtime
