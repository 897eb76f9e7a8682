#include "models/memory_model.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "base/errors.h"

namespace eppsim {
namespace {

// Mixed-precision Adam, bytes per parameter.
constexpr double kWeightBytes = 2.0;     // bf16 weights
constexpr double kGradientBytes = 2.0;   // bf16 gradients
constexpr double kOptimizerBytes = 12.0; // fp32 master weights, Adam m and v

// `bytes` rounded to the nearest byte.
Bytes whole_bytes(double bytes) {
  const double rounded = std::round(bytes);
  if (!(rounded >= 0.0 && rounded < 18446744073709551616.0)) {  // 2^64
    throw std::overflow_error(fmt::format("memory model: {} bytes is out of range", bytes));
  }
  return Bytes(static_cast<std::uint64_t>(rounded));
}

// `bytes_per_param * params / shards`, to the nearest byte.
Bytes state_bytes(double bytes_per_param, double params, std::uint32_t shards) {
  return whole_bytes(bytes_per_param * params / shards);
}

}  // namespace

ModelStateBytes model_state_bytes(double params, std::uint32_t zero_stage, std::uint32_t data_parallel) {
  if (!(params >= 0.0) || !std::isfinite(params)) {
    throw InputError(fmt::format("model states: parameter count must be finite and >= 0, got {}", params));
  }
  if (data_parallel == 0) throw InputError("model states: data-parallel degree must be >= 1, got 0");
  if (zero_stage > 3) throw InputError(fmt::format("model states: ZeRO stage must be 0, 1, 2 or 3, got {}", zero_stage));
  const std::uint32_t d = data_parallel;
  ModelStateBytes m;
  m.weights = state_bytes(kWeightBytes, params, zero_stage >= 3 ? d : 1);
  m.gradients = state_bytes(kGradientBytes, params, zero_stage >= 2 ? d : 1);
  m.optimizer = state_bytes(kOptimizerBytes, params, zero_stage >= 1 ? d : 1);
  return m;
}

double activation_bytes_per_token_layer(const TransformerSpec& model) {
  const double e = model.bytes_per_element;
  const double h = model.hidden_size;
  const double kv = model.kv_dim();
  const double f = model.ffn_hidden_size;
  // Attention: norm input, QKV input, Q, K, V, attention output (= output-projection input).
  const double attention = 4.0 * h + 2.0 * kv;
  // FFN: norm input, FFN input, then SwiGLU gate, up and their product, or GELU input and output.
  const double ffn = 2.0 * h + (model.ffn_kind == FfnKind::SwiGlu ? 3.0 * f : 2.0 * f);
  const double softmax_lse = 4.0 * model.attention_heads;  // fp32 log-sum-exp per head
  return e * (attention + ffn) + softmax_lse;
}

double mlp_checkpoint_saving_bytes_per_token_layer(const TransformerSpec& model) {
  const double f = model.ffn_hidden_size;
  return static_cast<double>(model.bytes_per_element) *
         (model.hidden_size + (model.ffn_kind == FfnKind::SwiGlu ? 3.0 * f : 2.0 * f));
}

double logits_bytes_per_token(const TransformerSpec& model) { return 4.0 * model.vocab_size; }

Bytes stage_activation_bytes(const TransformerSpec& model, std::uint64_t tokens, std::uint32_t layer_count,
                             bool includes_lm_head, bool full_recompute) {
  const double per_layer =
      full_recompute ? static_cast<double>(model.bytes_per_element) * model.hidden_size : activation_bytes_per_token_layer(model);
  const double per_token = layer_count * per_layer + (includes_lm_head ? logits_bytes_per_token(model) : 0.0);
  return whole_bytes(per_token * static_cast<double>(tokens));
}

Bytes backward_workspace_bytes(const TransformerSpec& model, std::uint64_t tokens, bool full_recompute) {
  if (!full_recompute) return Bytes(0);
  return whole_bytes(activation_bytes_per_token_layer(model) * static_cast<double>(tokens));
}

}  // namespace eppsim
