#include "runtime/cpu/cpu_attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace eppsim::runtime {
namespace {

// BLAS takes int dimensions.
int blas_int(std::uint64_t value) {
  if (value > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw std::length_error(fmt::format("attention: dimension {} is too large for BLAS", value));
  return static_cast<int>(value);
}

struct Dims {
  std::uint64_t tokens, context, keys;
  std::uint32_t heads, kv_heads, head_dim, group;
  int ld_q, ld_k;  // row strides of the query and key layouts
  float scale;
};

Dims dims_of(const AttentionShape& a) {
  if (a.heads == 0 || a.kv_heads == 0 || a.head_dim == 0 || a.heads % a.kv_heads != 0) {
    throw std::invalid_argument(fmt::format("attention: {} heads over {} K/V heads of dimension {} is no shape", a.heads,
                                            a.kv_heads, a.head_dim));
  }
  Dims d{};
  d.tokens = a.tokens;
  d.context = a.context_tokens;
  d.keys = a.context_tokens + a.tokens;
  d.heads = a.heads;
  d.kv_heads = a.kv_heads;
  d.head_dim = a.head_dim;
  d.group = a.heads / a.kv_heads;
  d.ld_q = blas_int(std::uint64_t{a.heads} * a.head_dim);
  d.ld_k = blas_int(std::uint64_t{a.kv_heads} * a.head_dim);
  blas_int(d.keys);
  d.scale = 1.0f / std::sqrt(static_cast<float>(a.head_dim));
  return d;
}

void reserve(std::vector<float>& buffer, std::uint64_t elements) {
  if (buffer.size() < elements) buffer.resize(elements);
}

// Scores of query rows [row0, row0 + rows) of head `head` against the keys
// they may see, masked and turned into probabilities in place; returns the
// number of key columns (the row stride of `p`).
int probabilities(const Dims& d, std::uint32_t head, std::uint64_t row0, int rows, const float* q, const float* k,
                  float* p) {
  const std::uint32_t kv = head / d.group;
  const int keys = static_cast<int>(d.context + row0 + rows);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, static_cast<int>(d.head_dim), d.scale,
              q + row0 * d.ld_q + std::uint64_t{head} * d.head_dim, d.ld_q, k + std::uint64_t{kv} * d.head_dim, d.ld_k,
              0.0f, p, keys);
  for (int i = 0; i < rows; ++i) {
    float* row = p + static_cast<std::uint64_t>(i) * keys;
    const int visible = static_cast<int>(d.context + row0) + i + 1;
    const float max = *std::max_element(row, row + visible);
    float sum = 0.0f;
    for (int j = 0; j < visible; ++j) {
      row[j] = std::exp(row[j] - max);
      sum += row[j];
    }
    const float inverse = 1.0f / sum;
    for (int j = 0; j < visible; ++j) row[j] *= inverse;
    std::fill(row + visible, row + keys, 0.0f);
  }
  return keys;
}

}  // namespace

std::uint64_t attention_query_elements(const AttentionShape& a) {
  return a.tokens * a.heads * std::uint64_t{a.head_dim};
}

std::uint64_t attention_key_elements(const AttentionShape& a) {
  return (a.context_tokens + a.tokens) * a.kv_heads * std::uint64_t{a.head_dim};
}

void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v, float* o,
                       AttentionScratch& scratch) {
  const Dims d = dims_of(shape);
  reserve(scratch.scores, std::min<std::uint64_t>(kAttentionBlockRows, d.tokens) * d.keys);
  const int dim = static_cast<int>(d.head_dim);
  for (std::uint32_t h = 0; h < d.heads; ++h) {
    const std::uint64_t head_offset = std::uint64_t{h} * d.head_dim;
    const std::uint64_t kv_offset = std::uint64_t{h / d.group} * d.head_dim;
    for (std::uint64_t row0 = 0; row0 < d.tokens; row0 += kAttentionBlockRows) {
      const int rows = static_cast<int>(std::min(kAttentionBlockRows, d.tokens - row0));
      float* p = scratch.scores.data();
      const int keys = probabilities(d, h, row0, rows, q, k, p);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, dim, keys, 1.0f, p, keys, v + kv_offset, d.ld_k,
                  0.0f, o + row0 * d.ld_q + head_offset, d.ld_q);
    }
  }
}

void attention_backward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                        const float* d_o, float* dq, float* dk, float* dv, AttentionScratch& scratch) {
  const Dims d = dims_of(shape);
  const std::uint64_t block = std::min<std::uint64_t>(kAttentionBlockRows, d.tokens) * d.keys;
  reserve(scratch.scores, block);
  reserve(scratch.score_grads, block);
  std::fill(dk, dk + attention_key_elements(shape), 0.0f);
  std::fill(dv, dv + attention_key_elements(shape), 0.0f);
  const int dim = static_cast<int>(d.head_dim);
  for (std::uint32_t h = 0; h < d.heads; ++h) {
    const std::uint64_t head_offset = std::uint64_t{h} * d.head_dim;
    const std::uint64_t kv_offset = std::uint64_t{h / d.group} * d.head_dim;
    for (std::uint64_t row0 = 0; row0 < d.tokens; row0 += kAttentionBlockRows) {
      const int rows = static_cast<int>(std::min(kAttentionBlockRows, d.tokens - row0));
      float* p = scratch.scores.data();
      float* dp = scratch.score_grads.data();
      const int keys = probabilities(d, h, row0, rows, q, k, p);
      const float* q_block = q + row0 * d.ld_q + head_offset;
      const float* do_block = d_o + row0 * d.ld_q + head_offset;
      // dV[keys x d] += P^T dO_b
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, keys, dim, rows, 1.0f, p, keys, do_block, d.ld_q, 1.0f,
                  dv + kv_offset, d.ld_k);
      // dP[rows x keys] = dO_b V^T
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, dim, 1.0f, do_block, d.ld_q, v + kv_offset,
                  d.ld_k, 0.0f, dp, keys);
      // dS = P * (dP - rowsum(P * dP)) * scale, in place of dP (masked entries: P = 0).
      for (int i = 0; i < rows; ++i) {
        const float* p_row = p + static_cast<std::uint64_t>(i) * keys;
        float* dp_row = dp + static_cast<std::uint64_t>(i) * keys;
        float dot = 0.0f;
        for (int j = 0; j < keys; ++j) dot += p_row[j] * dp_row[j];
        for (int j = 0; j < keys; ++j) dp_row[j] = p_row[j] * (dp_row[j] - dot) * d.scale;
      }
      // dQ_b = dS K ; dK += dS^T Q_b
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, dim, keys, 1.0f, dp, keys, k + kv_offset, d.ld_k,
                  0.0f, dq + row0 * d.ld_q + head_offset, d.ld_q);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, keys, dim, rows, 1.0f, dp, keys, q_block, d.ld_q, 1.0f,
                  dk + kv_offset, d.ld_k);
    }
  }
}

}  // namespace eppsim::runtime
