#include "models/activation_memory.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "base/errors.h"
#include "models/memory_model.h"

namespace eppsim {
namespace {

Bytes whole_bytes(double bytes) {
  const double rounded = std::round(bytes);
  if (!(rounded >= 0.0 && rounded < 18446744073709551616.0)) {  // 2^64
    throw std::overflow_error(fmt::format("activation memory: {} bytes is out of range", bytes));
  }
  return Bytes(static_cast<std::uint64_t>(rounded));
}

std::uint64_t new_tokens(std::span<const Segment> segments) {
  std::uint64_t tokens = 0;
  for (const Segment& s : segments) tokens += s.tokens;
  return tokens;
}

// Per-rank quantities of a validated chunk, in doubles.
struct Terms {
  double tokens = 0.0;         // T/d
  double prefix = 0.0;         // P/d
  double full_set = 0.0;       // A, bytes per token and layer
  double layer_input = 0.0;    // e*h
  double kv = 0.0;             // e*2*kv
  double logits = 0.0;         // 4*V on the last stage, else 0
};

Terms terms_of(const TransformerSpec& model, const ActivationChunk& chunk, const ActivationOptions& options) {
  if (options.sp_degree == 0) throw InputError("activation memory: sp_degree must be >= 1, got 0");
  const std::uint64_t tokens = new_tokens(chunk.segments);
  if (chunk.prefix_tokens > tokens) {
    throw InputError(fmt::format("activation memory: prefix_tokens ({}) exceeds the chunk's tokens ({})",
                                 chunk.prefix_tokens, tokens));
  }
  const double d = options.sp_degree;
  const double e = model.bytes_per_element;
  Terms t;
  t.tokens = static_cast<double>(tokens) / d;
  t.prefix = static_cast<double>(chunk.prefix_tokens) / d;
  t.full_set = activation_bytes_per_token_layer(model);
  t.layer_input = e * model.hidden_size;
  t.kv = e * 2.0 * model.kv_dim();
  t.logits = chunk.includes_lm_head ? logits_bytes_per_token(model) : 0.0;
  return t;
}

}  // namespace

ActivationBreakdown chunk_activation_bytes(const TransformerSpec& model, const ActivationChunk& chunk,
                                           const ActivationOptions& options) {
  if (chunk.checkpointed_layers > chunk.layer_count) {
    throw InputError(fmt::format("activation memory: checkpointed_layers ({}) exceeds layer_count ({})",
                                 chunk.checkpointed_layers, chunk.layer_count));
  }
  const Terms t = terms_of(model, chunk, options);
  const double l = chunk.layer_count;
  const double c = chunk.checkpointed_layers;
  ActivationBreakdown b;
  b.full_layers = whole_bytes((l - c) * t.full_set * t.tokens);
  b.checkpoint_inputs = whole_bytes(c * t.layer_input * t.tokens);
  b.prefix_kv = whole_bytes(c * t.kv * t.prefix);
  b.dkv_buffer = whole_bytes(l * t.kv * t.prefix);
  b.logits = whole_bytes(t.logits * t.tokens);
  return b;
}

Bytes chunk_backward_transient_bytes(const TransformerSpec& model, const ActivationChunk& chunk,
                                     const ActivationOptions& options) {
  const Terms t = terms_of(model, chunk, options);
  double bytes = chunk.checkpointed_layers > 0 ? t.full_set * t.tokens : 0.0;
  if (options.logits == LogitsMemory::Unfused) bytes += t.logits * t.tokens;
  return whole_bytes(bytes);
}

ActivationLinearForm chunk_activation_linear_form(const TransformerSpec& model, const ActivationChunk& chunk,
                                                  const ActivationOptions& options) {
  const Terms t = terms_of(model, chunk, options);
  const double l = chunk.layer_count;
  ActivationLinearForm f;
  f.intercept_bytes = l * t.full_set * t.tokens + l * t.kv * t.prefix + t.logits * t.tokens;
  f.saving_per_checkpointed_layer_bytes = (t.full_set - t.layer_input) * t.tokens - t.kv * t.prefix;
  return f;
}

Bytes prefix_dkv_buffer_bytes(const TransformerSpec& model, std::uint64_t prefix_tokens, std::uint32_t layer_count,
                              std::uint32_t sp_degree) {
  if (sp_degree == 0) throw InputError("activation memory: sp_degree must be >= 1, got 0");
  const double kv = static_cast<double>(model.bytes_per_element) * 2.0 * model.kv_dim();
  return whole_bytes(kv * static_cast<double>(prefix_tokens) / sp_degree * layer_count);
}

}  // namespace eppsim
