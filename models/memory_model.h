#pragma once
// Memory of training: model states under ZeRO and activations per token.
//
// Model states, mixed-precision Adam (bytes per parameter): bf16 weights 2,
// bf16 gradients 2, fp32 master weights + Adam m + v 12.
//   ZeRO-0: 2 + 2 + 12          ZeRO-1: 2 + 2 + 12/d
//   ZeRO-2: 2 + (2 + 12)/d      ZeRO-3: (2 + 2 + 12)/d      (d = data-parallel degree)
//
// Activations kept for backward, per token and layer, with FlashAttention (no
// s^2 score matrix), e = bytes per element:
//   attention: norm input h, QKV input h, Q/K/V (h + 2*kv_dim), attention output h,
//              output-projection input (same tensor, counted once), softmax
//              log-sum-exp 4 bytes per head
//   FFN:       norm input h, FFN input h, SwiGLU gate and up 2*f and product f
//              (GELU: up f and activation f)
//   => e * (6h + 2*kv_dim + 3f) + 4*heads     (GELU: e * (6h + 2*kv_dim + 2f) + 4*heads)
//      (attention 4h + 2*kv_dim, FFN 2h + 3f or 2h + 2f)
// With full recompute only each layer's input (e*h) is kept, and one layer's full
// set is live during its backward.
// The last stage also keeps the logits for the loss: 4 * vocab bytes per token (fp32).
#include <cstdint>

#include "models/transformer_spec.h"
#include "base/units.h"

namespace eppsim {

struct ModelStateBytes {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;
  Bytes total() const { return weights + gradients + optimizer; }
};

// `params` on this rank before sharding; `data_parallel` ranks share them.
ModelStateBytes model_state_bytes(double params, std::uint32_t zero_stage, std::uint32_t data_parallel);

// Bytes kept for backward per token per layer (full set, no recompute).
double activation_bytes_per_token_layer(const TransformerSpec& model);
// Bytes per token a layer no longer keeps when its MLP block is checkpointed
// (recomputed from the block's input, its norm input, which it keeps): the
// FFN's set but that, e * (h + 3f) (GELU: e * (h + 2f)).
double mlp_checkpoint_saving_bytes_per_token_layer(const TransformerSpec& model);
// Bytes per token for the output logits of the loss.
double logits_bytes_per_token(const TransformerSpec& model);

// Activation bytes a stage keeps for one chunk of `tokens` between its forward
// and its backward.
Bytes stage_activation_bytes(const TransformerSpec& model, std::uint64_t tokens, std::uint32_t layer_count,
                             bool includes_lm_head, bool full_recompute);
// Extra bytes live only while a chunk's backward runs: with full recompute, one
// layer's full activation set; without, nothing beyond what was kept.
Bytes backward_workspace_bytes(const TransformerSpec& model, std::uint64_t tokens, bool full_recompute);

}  // namespace eppsim
