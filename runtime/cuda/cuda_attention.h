#pragma once
// Causal attention on a CUDA stream in bf16 with fp32 accumulation, the
// algorithm of runtime/cpu/cpu_attention.h (same layouts), in query blocks that
// multiply only with the keys they can see: each step of a block is one cuBLAS
// strided-batched GEMM over every query head (grouped K/V heads are first
// copied once per query head, and their gradients summed back at the end), with
// a masked-softmax kernel (forward) and a softmax-backward kernel between the
// GEMMs. A block (attention_blocks.h: every head of a short sequence at once,
// fewer heads of taller blocks for a long one) costs 3 launches forward and 7
// backward: on an H100 the launches, not the GPU, bounded the short sequences
// of a packed micro-batch when each K/V head had launches of its own
// (runtime/README.md, "On a GPU").
//   forward   S = Q_b K^T / sqrt(d) (fp32) ; P = causal softmax (bf16) ; O_b = P V
//   backward  S, P recomputed ; dV += P^T dO_b ; dP = dO_b V^T (fp32) ;
//             dS = P * (dP - rowsum(P * dP)) / sqrt(d) (over P) ; dQ_b = dS K ;
//             dK += dS^T Q_b
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/attention_blocks.h"
#include "runtime/kernel_plan.h"

namespace eppsim::runtime {

// Device tensors of one sequence (layouts of cpu_attention.h) and the scratch
// of one query block, each cuda_attention_score_elements long.
struct CudaAttentionTensors {
  const __nv_bfloat16* q = nullptr;
  const __nv_bfloat16* k = nullptr;
  const __nv_bfloat16* v = nullptr;
  __nv_bfloat16* o = nullptr;            // forward
  const __nv_bfloat16* d_o = nullptr;    // backward
  __nv_bfloat16* dq = nullptr;
  __nv_bfloat16* dk = nullptr;
  __nv_bfloat16* dv = nullptr;
  float* scores = nullptr;               // scratch
  __nv_bfloat16* probabilities = nullptr;
  float* prob_grads = nullptr;           // backward scratch
  // Per-query-head copies of K and V (both passes) and their gradients
  // (backward), cuda_attention_head_elements long; unused without grouping.
  __nv_bfloat16* k_heads = nullptr;
  __nv_bfloat16* v_heads = nullptr;
  __nv_bfloat16* dk_heads = nullptr;
  __nv_bfloat16* dv_heads = nullptr;
};

// Elements of each scratch buffer for `block`'s scores.
std::uint64_t cuda_attention_score_elements(const AttentionShape& shape, const AttentionBlock& block);

// Elements of each per-query-head K/V buffer: 0 when every query head has its
// own K/V head.
std::uint64_t cuda_attention_head_elements(const AttentionShape& shape);

// One sequence (shape.count is not used) on `stream`, which `blas` must be
// set to, in query blocks of `block` (attention_blocks.h). Forward for
// Forward and Recompute, backward for Backward. Throws for a shape the K/V
// heads do not divide or a CUDA/cuBLAS failure.
void cuda_attention(cublasHandle_t blas, cudaStream_t stream, const AttentionShape& shape, Pass pass,
                    const AttentionBlock& block, const CudaAttentionTensors& tensors);

}  // namespace eppsim::runtime
