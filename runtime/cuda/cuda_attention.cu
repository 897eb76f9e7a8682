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
// (masked columns 0).
__global__ void causal_softmax(const float* scores, bf16* probabilities, int keys, int rows_per_head,
                               std::uint64_t first_visible) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float shared;
  const std::uint64_t row = blockIdx.x;
  const float* s = scores + row * keys;
  bf16* p = probabilities + row * keys;
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

// dS = P * (dP - rowsum(P * dP)) * scale, written over P.
__global__ void softmax_backward(bf16* probabilities, const float* prob_grads, int keys, float scale) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float shared;
  const std::uint64_t row = blockIdx.x;
  bf16* p = probabilities + row * keys;
  const float* dp = prob_grads + row * keys;
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

}  // namespace

std::uint64_t cuda_attention_score_elements(const AttentionShape& a, std::uint64_t rows) {
  const std::uint64_t group = a.kv_heads > 0 ? a.heads / a.kv_heads : 0;
  return group * std::min(rows, a.tokens) * (a.context_tokens + a.tokens);
}

void cuda_attention(cublasHandle_t blas, cudaStream_t stream, const AttentionShape& a, Pass pass,
                    std::uint64_t rows_max, const CudaAttentionTensors& t) {
  if (a.tokens == 0) return;
  if (a.heads == 0 || a.kv_heads == 0 || a.head_dim == 0 || a.heads % a.kv_heads != 0)
    throw std::invalid_argument("attention: the K/V heads must divide the heads, and none may be 0");
  if (rows_max == 0) throw std::invalid_argument("attention: query blocks must have rows");
  const std::uint32_t group = a.heads / a.kv_heads;
  const std::uint64_t key_elements = (a.context_tokens + a.tokens) * a.kv_heads * std::uint64_t{a.head_dim};
  const int d = blas_int(a.head_dim, "attention");
  const int ld_q = blas_int(std::uint64_t{a.heads} * a.head_dim, "attention");
  const int ld_k = blas_int(std::uint64_t{a.kv_heads} * a.head_dim, "attention");
  blas_int(a.context_tokens + a.tokens, "attention");
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.head_dim));
  const bool backward = pass == Pass::Backward;
  const bf16 *q = t.q, *k = t.k, *v = t.v, *d_o = t.d_o;
  bf16 *o = t.o, *dq = t.dq, *dk = t.dk, *dv = t.dv, *p = t.probabilities;
  float *scores = t.scores, *prob_grads = t.prob_grads;
  if (backward) {
    check(cudaMemsetAsync(dk, 0, key_elements * sizeof(bf16), stream), "cudaMemsetAsync");
    check(cudaMemsetAsync(dv, 0, key_elements * sizeof(bf16), stream), "cudaMemsetAsync");
  }
  for (std::uint32_t kv = 0; kv < a.kv_heads; ++kv) {
    const std::uint64_t head0 = std::uint64_t{kv} * group;  // first query head of this K/V head
    const bf16* k_head = k + std::uint64_t{kv} * a.head_dim;
    const bf16* v_head = v + std::uint64_t{kv} * a.head_dim;
    for (std::uint64_t row0 = 0; row0 < a.tokens; row0 += rows_max) {
      const int rows = static_cast<int>(std::min(rows_max, a.tokens - row0));
      const int keys = static_cast<int>(attention_block_keys(a, row0, rows));
      const long long score_stride = static_cast<long long>(rows) * keys;
      const std::uint64_t q_offset = row0 * ld_q + head0 * a.head_dim;
      // S[h] = Q_b[h] K^T * scale, for the group's heads; then P = causal softmax.
      gemm_rm_batched(blas, false, true, rows, keys, d, scale, q + q_offset, ld_q, d, k_head, ld_k, 0, 0.0f,
                      scores, CUDA_R_32F, keys, score_stride, static_cast<int>(group));
      causal_softmax<<<group * rows, kThreads, 0, stream>>>(scores, p, keys, rows, a.context_tokens + row0 + 1);
      check(cudaGetLastError(), "causal_softmax");
      if (!backward) {
        // O_b[h] = P[h] V
        gemm_rm_batched(blas, false, false, rows, d, keys, 1.0f, p, keys, score_stride, v_head, ld_k, 0, 0.0f,
                        o + q_offset, CUDA_R_16BF, ld_q, d, static_cast<int>(group));
        continue;
      }
      // dV += P[h]^T dO_b[h] (one GEMM per head: they share dV)
      for (std::uint32_t h = 0; h < group; ++h) {
        gemm_rm(blas, true, false, keys, d, rows, 1.0f, p + h * score_stride, keys, d_o + q_offset + h * d, ld_q,
                1.0f, dv + std::uint64_t{kv} * a.head_dim, CUDA_R_16BF, ld_k);
      }
      // dP[h] = dO_b[h] V^T ; dS = softmax backward, over P
      gemm_rm_batched(blas, false, true, rows, keys, d, 1.0f, d_o + q_offset, ld_q, d, v_head, ld_k, 0, 0.0f,
                      prob_grads, CUDA_R_32F, keys, score_stride, static_cast<int>(group));
      softmax_backward<<<group * rows, kThreads, 0, stream>>>(p, prob_grads, keys, scale);
      check(cudaGetLastError(), "softmax_backward");
      // dQ_b[h] = dS[h] K ; dK += dS[h]^T Q_b[h]
      gemm_rm_batched(blas, false, false, rows, d, keys, 1.0f, p, keys, score_stride, k_head, ld_k, 0, 0.0f,
                      dq + q_offset, CUDA_R_16BF, ld_q, d, static_cast<int>(group));
      for (std::uint32_t h = 0; h < group; ++h) {
        gemm_rm(blas, true, false, keys, d, rows, 1.0f, p + h * score_stride, keys, q + q_offset + h * d, ld_q,
                1.0f, dk + std::uint64_t{kv} * a.head_dim, CUDA_R_16BF, ld_k);
      }
    }
  }
}

}  // namespace eppsim::runtime
