#pragma once
// Causal attention on the CPU as OpenBLAS GEMMs (fp32), forward and backward,
// for one sequence of `tokens` queries over `context_tokens + tokens` keys.
//
// Layouts, row-major, token-major as a transformer keeps them:
//   q, o, dq, d_o   [tokens x heads x head_dim]
//   k, v, dk, dv    [(context + tokens) x kv_heads x head_dim]
// Query head h reads K/V head h / (heads / kv_heads) (grouped-query attention).
// Query i (0-based among the new tokens) sees keys 0 .. context + i.
//
// Per head, the queries go in blocks of kAttentionBlockRows rows; a block
// multiplies only with the keys its last row can see (blocks of a causal
// triangle, as FlashAttention skips masked tiles), so the work grows as
// s*c + s^2/2 like the model's FLOPs, not as s*(c+s):
//   forward   S = Q_b K^T / sqrt(d) (masked, softmax row-wise) ; O_b = P V
//   backward  P recomputed as forward ; dV += P^T dO_b ; dP = dO_b V^T ;
//             dS = P * (dP - rowsum(P * dP)) / sqrt(d) ; dQ_b = dS K ;
//             dK += dS^T Q_b
// (five GEMMs of the forward's two sizes: 2.5 times the forward's FLOPs).
#include <cstdint>
#include <vector>

#include "runtime/attention_blocks.h"
#include "runtime/kernel_plan.h"

namespace eppsim::runtime {

// Scratch the kernels reuse between calls (score and gradient blocks); grows
// to the largest shape seen.
struct AttentionScratch {
  std::vector<float> scores;
  std::vector<float> score_grads;
};

// Element counts of the layouts above.
std::uint64_t attention_query_elements(const AttentionShape& shape);
std::uint64_t attention_key_elements(const AttentionShape& shape);

// One sequence (shape.count is not used: callers repeat). Throws
// std::invalid_argument for heads that kv_heads does not divide, or a zero
// head count or head dimension.
void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v, float* o,
                       AttentionScratch& scratch);
void attention_backward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                        const float* d_o, float* dq, float* dk, float* dv, AttentionScratch& scratch);

}  // namespace eppsim::runtime
