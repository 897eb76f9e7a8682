#pragma once
// Activation memory one rank holds for one chunk between its forward and its
// backward on a pipeline stage, for elastic pipelines (InfiniPipe, Seq1F1B) and
// static ones alike. Builds on memory_model.h: A = activation_bytes_per_token_layer
// (the full set a layer keeps per token) and logits_bytes_per_token (fp32 logits).
//
// With T the chunk's new tokens, d the SP degree (every tensor is sharded 1/d:
// sequence-sharded between layers, head-sharded inside attention, so the K/V and
// dK/dV below too, assuming d <= kv_heads), l the stage's layers, c of them
// checkpointed (whole-layer recompute), P the chunk's prefix tokens (those that
// later slices of the same sequence attend to), e bytes per element:
//   full_layers        (l - c) * A * T/d              K/V included in A
//   checkpoint_inputs  c * e*h * T/d                  a checkpointed layer keeps its input ...
//   prefix_kv          c * e*2*kv * P/d               ... and, for prefix tokens, its K and V,
//                                                     which later slices read before this
//                                                     chunk's backward (kept even so)
//   dkv_buffer         l * e*2*kv * P/d               dK/dV of the prefix, made by the
//                                                     sequence's last slice's backward and
//                                                     freed by each slice's own backward
//                                                     (InfiniPipe's M_dkv)
//   logits             last stage: 4*V * T/d          fp32 logits for the loss
// Hence memory falls linearly in c: total = I - c * S with
//   I = l*A*T/d + l*e*2*kv*P/d + logits,  S = (A - e*h)*T/d - e*2*kv*P/d
// (InfiniPipe Eq. 10's intercept and slope with M_token/N = l*A/d per token).
//
// Reading of InfiniPipe's I_k (infinipipe.md section 8): its text sets I_k = 1 for
// a split chunk yet multiplies the K/V and dK/dV terms by (1 - I_k); we read the
// intent, not the letter: split chunks (non-final slices) DO carry the K/V and
// dK/dV terms, everything else does not. Here that is P = T for a split chunk,
// P = 0 for a tail slice, a batched chunk or a hybrid chunk (whose long-sequence
// part is a tail slice, attended by no later slice); a planner with another mix
// sets P to the sum of its non-final slices.
// Counting dkv_buffer for the chunk's whole residency is InfiniPipe's conservative
// accounting; the buffer only exists from the last slice's backward on. A planner
// that tracks memory over time can leave it out (total() - dkv_buffer) and allocate
// prefix_dkv_buffer_bytes at the last slice's backward instead.
//
// Logits: LogitsMemory::FusedInPlace (Megatron's fused cross entropy) keeps one
// fp32 logits buffer and writes the gradient into it; Unfused also materialises an
// fp32 gradient of the logits at the start of the backward (a transient).
#include <cstdint>
#include <span>

#include "models/chunk.h"
#include "models/transformer_spec.h"
#include "base/units.h"

namespace eppsim {

enum class LogitsMemory { FusedInPlace, Unfused };

struct ActivationChunk {
  std::span<const Segment> segments;       // T = sum of tokens (context adds nothing here)
  std::uint64_t prefix_tokens = 0;         // P <= T: tokens later slices attend to
  std::uint32_t layer_count = 0;           // l: the stage's layers
  std::uint32_t checkpointed_layers = 0;   // c <= l
  bool includes_lm_head = false;           // last stage: logits
};

struct ActivationOptions {
  std::uint32_t sp_degree = 1;  // Ulysses or ring CP degree, >= 1
  LogitsMemory logits = LogitsMemory::FusedInPlace;
};

struct ActivationBreakdown {
  Bytes full_layers;
  Bytes checkpoint_inputs;
  Bytes prefix_kv;
  Bytes dkv_buffer;
  Bytes logits;
  Bytes total() const { return full_layers + checkpoint_inputs + prefix_kv + dkv_buffer + logits; }
};

// Bytes kept per rank from the chunk's forward to its backward (each term rounded
// to the nearest byte). Throws InputError for sp_degree 0, c > l or P > T.
ActivationBreakdown chunk_activation_bytes(const TransformerSpec& model, const ActivationChunk& chunk,
                                           const ActivationOptions& options = {});

// Extra bytes live only while the chunk's backward runs: one recomputed layer's
// full set (A*T/d) when c > 0, plus the fp32 logits gradient (4*V*T/d) with
// Unfused logits on the last stage.
Bytes chunk_backward_transient_bytes(const TransformerSpec& model, const ActivationChunk& chunk,
                                     const ActivationOptions& options = {});

// total(c) = intercept - c * saving, exact in doubles (chunk.checkpointed_layers is
// ignored): for checkpointing ILPs (InfiniPipe Eq. 19-20).
struct ActivationLinearForm {
  double intercept_bytes = 0.0;                       // total with no checkpointed layer
  double saving_per_checkpointed_layer_bytes = 0.0;  // freed by each checkpointed layer
};
ActivationLinearForm chunk_activation_linear_form(const TransformerSpec& model, const ActivationChunk& chunk,
                                                  const ActivationOptions& options = {});

// dK/dV buffer of a sequence's `prefix_tokens` over `layer_count` layers at SP
// degree `sp_degree`: e * 2*kv * prefix/d * layers; what its last slice's backward
// allocates on a stage.
Bytes prefix_dkv_buffer_bytes(const TransformerSpec& model, std::uint64_t prefix_tokens, std::uint32_t layer_count,
                              std::uint32_t sp_degree = 1);

}  // namespace eppsim
