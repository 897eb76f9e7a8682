#pragma once
// The GEMMs of a transformer layer, listed once: the shaped cost model
// (models/shaped_compute_cost.h) prices them and the runtime's kernel plan
// (runtime/kernel_plan.h) runs them.
//
// A weight's GEMM, per token (forward: tokens x in -> tokens x out, the
// activations times the weights), after tensor parallelism over `tp` ranks
// (heads, and the FFN's and vocabulary's columns, split tp ways):
//   PRE_ATTENTION   qkv               h -> (heads + 2 kv_heads) * head_dim
//   POST_ATTENTION  attention_output  heads * head_dim -> h
//                   ffn_up            h -> 2f (SwiGLU: gate and up as one GEMM), f (GELU)
//                   ffn_down          f -> h
//   LM head         lm_head           h -> vocab (once per chunk, with POST_ATTENTION)
// Forward and recompute run C[m x out] = X[m x in] W; backward runs the input
// gradient dX[m x in] = dY[m x out] W^T and the weight gradient
// dW[in x out] = X^T[in x m] dY (m is then the reduction).
#include <cstdint>
#include <string_view>
#include <vector>

#include "models/chunk.h"
#include "models/cost_model.h"
#include "models/transformer_spec.h"

namespace eppsim {

// C[m x n] = A[m x k] * B[k x n], `count` times (e.g. once per layer). `name`
// says which weight and pass it is for ("qkv", "qkv_dgrad", "qkv_wgrad", ...)
// and points at a string literal.
struct GemmShape {
  std::uint64_t m = 0, n = 0, k = 0;
  std::uint32_t count = 1;
  std::string_view name;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * count; }
  bool operator==(const GemmShape&) const = default;
};

// One weight's GEMM, per token, as in the table above.
struct WeightGemm {
  std::string_view forward, input_grad, weight_grad;  // names of its GEMMs in each pass
  LayerPart part = LayerPart::PostAttention;
  std::uint64_t in = 0, out = 0;
  bool once_per_chunk = false;  // the LM head; the others run once per layer
};

// The layer's weight GEMMs in the order a forward runs them, the LM head last
// when `lm_head`.
std::vector<WeightGemm> layer_gemms(const TransformerSpec& model, std::uint32_t tensor_parallel, bool lm_head);

// Appends the GEMMs `pass` runs for `weight` over `m` rows (tokens), `count`
// times: one forward (recompute too), two backward. Nothing when a dimension is 0.
void append_pass_gemms(std::vector<GemmShape>& gemms, const WeightGemm& weight, std::uint64_t m, Pass pass,
                       std::uint32_t count);

}  // namespace eppsim
