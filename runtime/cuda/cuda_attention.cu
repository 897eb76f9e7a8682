#include "runtime/cuda/cuda_attention.h"

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "runtime/attention_blocks.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_gemm.h"

namespace eppsim::runtime {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kThreads = 256;

// Row r of `rows_per_head`-row blocks: query row0 + r % rows_per_head, which
// sees keys 0 .. context + row0 + r % rows_per_head. Scores in, probabilities out
// (masked columns 0); rows `ld` elements apart.
__global__ void causal_softmax(const float* scores, bf16* probabilities, int keys, int ld, int rows_per_head,
                               std::uint64_t first_visible) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float shared;
  const std::uint64_t row = blockIdx.x;
  const float* s = scores + row * ld;
  bf16* p = probabilities + row * ld;
  const int visible = static_cast<int>(first_visible) + static_cast<int>(row % rows_per_head);
  float max = -INFINITY;
  for (int j = threadIdx.x; j < visible; j += blockDim.x) max = fmaxf(max, s[j]);
  max = Reduce(storage).Reduce(max, [](float a, float b) { return fmaxf(a, b); });
  if (threadIdx.x == 0) shared = max;
  __syncthreads();
  max = shared;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < visible; j += blockDim.x) sum += __expf(s[j] - max);
  __syncthreads();
  sum = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0) shared = 1.0f / sum;
  __syncthreads();
  const float inverse = shared;
  for (int j = threadIdx.x; j < keys; j += blockDim.x)
    p[j] = __float2bfloat16(j < visible ? __expf(s[j] - max) * inverse : 0.0f);
}

// dS = P * (dP - rowsum(P * dP)) * scale, written over P; rows `ld` apart.
__global__ void softmax_backward(bf16* probabilities, const float* prob_grads, int keys, int ld, float scale) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float shared;
  const std::uint64_t row = blockIdx.x;
  bf16* p = probabilities + row * ld;
  const float* dp = prob_grads + row * ld;
  float dot = 0.0f;
  for (int j = threadIdx.x; j < keys; j += blockDim.x) dot += __bfloat162float(p[j]) * dp[j];
  dot = Reduce(storage).Sum(dot);
  if (threadIdx.x == 0) shared = dot;
  __syncthreads();
  dot = shared;
  for (int j = threadIdx.x; j < keys; j += blockDim.x) {
    const float pj = __bfloat162float(p[j]);
    p[j] = __float2bfloat16(pj * (dp[j] - dot) * scale);
  }
}

// dst[t][h][:] = src[t][h / group][:] for K and V at once: each query head's
// own copy of its K/V head, so that every GEMM of the block batches over all
// query heads with one stride.
__global__ void expand_heads(const bf16* k, const bf16* v, bf16* k_heads, bf16* v_heads, std::uint64_t keys,
                             std::uint32_t kv_heads, std::uint32_t group, std::uint32_t head_dim) {
  const std::uint64_t heads = std::uint64_t{kv_heads} * group;
  const std::uint64_t count = keys * heads * head_dim;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t x = i % head_dim, h = (i / head_dim) % heads, t = i / (std::uint64_t{head_dim} * heads);
    const std::uint64_t from = (t * kv_heads + h / group) * head_dim + x;
    k_heads[i] = k[from];
    v_heads[i] = v[from];
  }
}

// dk[t][j][:] = sum over the group of dk_heads[t][j * group + g][:] (fp32), and
// the same for dV: the query heads' gradients back onto their K/V head.
__global__ void reduce_heads(const bf16* dk_heads, const bf16* dv_heads, bf16* dk, bf16* dv, std::uint64_t keys,
                             std::uint32_t kv_heads, std::uint32_t group, std::uint32_t head_dim) {
  const std::uint64_t count = keys * kv_heads * head_dim;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t x = i % head_dim, j = (i / head_dim) % kv_heads, t = i / (std::uint64_t{head_dim} * kv_heads);
    const std::uint64_t first = ((t * kv_heads + j) * group) * head_dim + x;
    float sum_k = 0.0f, sum_v = 0.0f;
    for (std::uint32_t g = 0; g < group; ++g) {
      sum_k += __bfloat162float(dk_heads[first + std::uint64_t{g} * head_dim]);
      sum_v += __bfloat162float(dv_heads[first + std::uint64_t{g} * head_dim]);
    }
    dk[i] = __float2bfloat16(sum_k);
    dv[i] = __float2bfloat16(sum_v);
  }
}

unsigned grid_for(std::uint64_t count) {
  return static_cast<unsigned>(std::min<std::uint64_t>((count + kThreads - 1) / kThreads, 65535));
}

}  // namespace

std::uint64_t cuda_attention_score_elements(const AttentionShape& a, const AttentionBlock& block) {
  return std::min<std::uint64_t>(block.heads, a.heads) * std::min(block.rows, a.tokens) *
         aligned_ld(a.context_tokens + a.tokens);
}

std::uint64_t cuda_attention_head_elements(const AttentionShape& a) {
  if (a.kv_heads == 0 || a.heads == a.kv_heads) return 0;
  return (a.context_tokens + a.tokens) * a.heads * std::uint64_t{a.head_dim};
}

void cuda_attention(cublasHandle_t blas, cudaStream_t stream, const AttentionShape& a, Pass pass,
                    const AttentionBlock& block, const CudaAttentionTensors& t) {
  if (a.tokens == 0) return;
  if (a.heads == 0 || a.kv_heads == 0 || a.head_dim == 0 || a.heads % a.kv_heads != 0)
    throw std::invalid_argument("attention: the K/V heads must divide the heads, and none may be 0");
  if (block.rows == 0 || block.heads == 0) throw std::invalid_argument("attention: query blocks must have rows and heads");
  const std::uint32_t group = a.heads / a.kv_heads;
  const std::uint64_t keys_total = a.context_tokens + a.tokens;
  const int d = blas_int(a.head_dim, "attention");
  // Q, O, dQ and the per-query-head K, V, dK, dV all hold a row of every
  // query head per token: one leading dimension, one stride d between heads.
  const int ld = blas_int(std::uint64_t{a.heads} * a.head_dim, "attention");
  blas_int(keys_total, "attention");
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.head_dim));
  const bool backward = pass == Pass::Backward;
  const bool grouped = group > 1;
  const bf16 *q = t.q, *d_o = t.d_o;
  bf16 *o = t.o, *dq = t.dq, *p = t.probabilities;
  float *scores = t.scores, *prob_grads = t.prob_grads;
  const bf16* k = grouped ? t.k_heads : t.k;
  const bf16* v = grouped ? t.v_heads : t.v;
  bf16* dk = grouped ? t.dk_heads : t.dk;
  bf16* dv = grouped ? t.dv_heads : t.dv;
  if (grouped) {
    expand_heads<<<grid_for(keys_total * a.heads * a.head_dim), kThreads, 0, stream>>>(
        t.k, t.v, t.k_heads, t.v_heads, keys_total, a.kv_heads, group, a.head_dim);
    check(cudaGetLastError(), "expand_heads");
  }
  if (backward) {
    const std::uint64_t bytes = keys_total * static_cast<std::uint64_t>(ld) * sizeof(bf16);
    check(cudaMemsetAsync(dk, 0, bytes, stream), "cudaMemsetAsync");
    check(cudaMemsetAsync(dv, 0, bytes, stream), "cudaMemsetAsync");
  }
  for (std::uint64_t head0 = 0; head0 < a.heads; head0 += block.heads) {
    const int heads = static_cast<int>(std::min<std::uint64_t>(block.heads, a.heads - head0));
    const std::uint64_t h0 = head0 * a.head_dim;  // offset of the first head in a row
    for (std::uint64_t row0 = 0; row0 < a.tokens; row0 += block.rows) {
      const int rows = static_cast<int>(std::min(block.rows, a.tokens - row0));
      const int keys = static_cast<int>(attention_block_keys(a, row0, rows));
      const int lds = static_cast<int>(aligned_ld(keys));  // an odd segment's scores, rows aligned
      const long long score_stride = static_cast<long long>(rows) * lds;
      const std::uint64_t q0 = row0 * static_cast<std::uint64_t>(ld) + h0;
      // S[h] = Q_b[h] K[h]^T * scale for the block's query heads; then P = causal softmax.
      gemm_rm_batched(blas, false, true, rows, keys, d, scale, q + q0, ld, d, k + h0, ld, d, 0.0f, scores, CUDA_R_32F,
                      lds, score_stride, heads);
      causal_softmax<<<heads * rows, kThreads, 0, stream>>>(scores, p, keys, lds, rows, a.context_tokens + row0 + 1);
      check(cudaGetLastError(), "causal_softmax");
      if (!backward) {
        // O_b[h] = P[h] V[h]
        gemm_rm_batched(blas, false, false, rows, d, keys, 1.0f, p, lds, score_stride, v + h0, ld, d, 0.0f, o + q0,
                        CUDA_R_16BF, ld, d, heads);
        continue;
      }
      // dV[h] += P[h]^T dO_b[h]
      gemm_rm_batched(blas, true, false, keys, d, rows, 1.0f, p, lds, score_stride, d_o + q0, ld, d, 1.0f, dv + h0,
                      CUDA_R_16BF, ld, d, heads);
      // dP[h] = dO_b[h] V[h]^T ; dS = softmax backward, over P
      gemm_rm_batched(blas, false, true, rows, keys, d, 1.0f, d_o + q0, ld, d, v + h0, ld, d, 0.0f, prob_grads,
                      CUDA_R_32F, lds, score_stride, heads);
      softmax_backward<<<heads * rows, kThreads, 0, stream>>>(p, prob_grads, keys, lds, scale);
      check(cudaGetLastError(), "softmax_backward");
      // dQ_b[h] = dS[h] K[h] ; dK[h] += dS[h]^T Q_b[h]
      gemm_rm_batched(blas, false, false, rows, d, keys, 1.0f, p, lds, score_stride, k + h0, ld, d, 0.0f, dq + q0,
                      CUDA_R_16BF, ld, d, heads);
      gemm_rm_batched(blas, true, false, keys, d, rows, 1.0f, p, lds, score_stride, q + q0, ld, d, 1.0f, dk + h0,
                      CUDA_R_16BF, ld, d, heads);
    }
  }
  if (backward && grouped) {
    reduce_heads<<<grid_for(keys_total * a.kv_heads * a.head_dim), kThreads, 0, stream>>>(
        t.dk_heads, t.dv_heads, t.dk, t.dv, keys_total, a.kv_heads, group, a.head_dim);
    check(cudaGetLastError(), "reduce_heads");
  }
}

}  // namespace eppsim::runtime
