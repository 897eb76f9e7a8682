#include "models/compute_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/errors.h"
#include "models/memory_model.h"

namespace eppsim {
namespace {

constexpr double kBackwardGemmFactor = 2.0;       // input gradients + weight gradients
constexpr double kBackwardAttentionFactor = 2.5;  // FlashAttention recomputes the scores

std::uint64_t chunk_tokens(const ChunkWork& work) {
  std::uint64_t tokens = 0;
  for (const Segment& seg : work.segments) tokens += seg.tokens;
  return tokens;
}

// Sum over segments of the causal query-key pairs: s*c + s*(s+1)/2.
double attention_pairs(const ChunkWork& work) {
  double pairs = 0.0;
  for (const Segment& seg : work.segments) {
    const double s = static_cast<double>(seg.tokens);
    const double c = static_cast<double>(seg.context_tokens);
    pairs += s * c + s * (s + 1.0) / 2.0;
  }
  return pairs;
}

// Forward FLOPs of the output projection over the vocabulary.
double lm_head_forward_flops(const TransformerSpec& model, std::uint64_t tokens) {
  return 2.0 * model.hidden_size * static_cast<double>(model.vocab_size) * static_cast<double>(tokens);
}

double pass_gemm_factor(Pass pass) { return pass == Pass::Backward ? kBackwardGemmFactor : 1.0; }

Bytes whole_bytes(double bytes) {
  const double rounded = std::round(bytes);
  if (!(rounded >= 0.0 && rounded < 18446744073709551616.0)) {  // 2^64
    throw std::overflow_error(fmt::format("compute cost: {} bytes of memory traffic is out of range", bytes));
  }
  return Bytes(static_cast<std::uint64_t>(rounded));
}

void check_efficiency(std::string_view what, double value) {
  if (!(value > 0.0 && value <= 1.0)) {
    throw InputError(fmt::format("compute cost: {} efficiency must be in (0, 1], got {}", what, value));
  }
}

void check_gpu(const GpuSpec& gpu) {
  if (!(gpu.peak_bf16.value > 0.0) || !std::isfinite(gpu.peak_bf16.value)) {
    throw InputError(fmt::format("compute cost: GPU '{}': peak_bf16 must be > 0, got {}", gpu.name, gpu.peak_bf16.value));
  }
  if (!(gpu.memory_bandwidth.value > 0.0) || !std::isfinite(gpu.memory_bandwidth.value)) {
    throw InputError(fmt::format("compute cost: GPU '{}': memory_bandwidth must be > 0, got {}", gpu.name,
                                 gpu.memory_bandwidth.value));
  }
}

void check_fit(std::string_view which, const CalibratedFit& fit) {
  if (!std::isfinite(fit.alpha1_s_per_token2) || !std::isfinite(fit.alpha2_s_per_token) || !std::isfinite(fit.beta_s)) {
    throw InputError(fmt::format("compute cost: {} fit must be finite, got alpha1 {} alpha2 {} beta {}", which,
                                 fit.alpha1_s_per_token2, fit.alpha2_s_per_token, fit.beta_s));
  }
}

}  // namespace

FlopCount chunk_flops(const TransformerSpec& model, Pass pass, const ChunkWork& work) {
  const std::uint64_t tokens = chunk_tokens(work);
  const double layers = work.layer_count;
  FlopCount forward;
  forward.gemm = layers * 2.0 * model.params_per_layer() * static_cast<double>(tokens);
  if (work.includes_lm_head) forward.gemm += lm_head_forward_flops(model, tokens);
  forward.attention = layers * 4.0 * model.hidden_size * attention_pairs(work);
  if (pass != Pass::Backward) return forward;  // recompute is one more forward
  return FlopCount{forward.gemm * kBackwardGemmFactor, forward.attention * kBackwardAttentionFactor};
}

// Forward (and recompute): the stage's weights are read once; per token, each layer
// writes the activations it keeps for backward (activation_bytes_per_token_layer),
// the embedding reads a row and writes it, and the LM head writes fp32 logits.
// Backward doubles both: weights read and weight gradients written; activations
// read back and their gradients written.
Bytes chunk_memory_traffic(const TransformerSpec& model, Pass pass, const ChunkWork& work) {
  const double tokens = static_cast<double>(chunk_tokens(work));
  const double e = model.bytes_per_element;
  const double h = model.hidden_size;
  double weights = e * model.params_per_layer() * work.layer_count;
  double per_token = activation_bytes_per_token_layer(model) * work.layer_count;
  if (work.includes_embedding) per_token += 2.0 * e * h;
  if (work.includes_lm_head) {
    weights += e * h * model.vocab_size;
    per_token += logits_bytes_per_token(model);
  }
  return whole_bytes(pass_gemm_factor(pass) * (weights + per_token * tokens));
}

AnalyticComputeCost::AnalyticComputeCost(TransformerSpec model, GpuSpec gpu, AnalyticEfficiency efficiency)
    : model_(std::move(model)), gpu_(std::move(gpu)), efficiency_(efficiency) {
  check_gpu(gpu_);
  check_efficiency("gemm", efficiency_.gemm);
  check_efficiency("attention", efficiency_.attention);
}

ComputeCost AnalyticComputeCost::cost(Pass pass, const ChunkWork& work) const {
  ComputeCost c;
  c.flops = chunk_flops(model_, pass, work);
  c.memory_traffic = chunk_memory_traffic(model_, pass, work);
  const double peak = gpu_.peak_bf16.value;
  const double compute_s = c.flops.gemm / (peak * efficiency_.gemm) + c.flops.attention / (peak * efficiency_.attention);
  const double memory_s = transfer_time(c.memory_traffic, gpu_.memory_bandwidth).value;
  c.time = Seconds(std::max(compute_s, memory_s));
  return c;
}

CalibratedComputeCost::CalibratedComputeCost(TransformerSpec model, GpuSpec gpu, CalibratedFit forward,
                                             CalibratedFit backward, AnalyticEfficiency head_efficiency)
    : model_(std::move(model)),
      gpu_(std::move(gpu)),
      forward_(forward),
      backward_(backward),
      head_efficiency_(head_efficiency) {
  check_fit("forward", forward_);
  check_fit("backward", backward_);
  if (!(gpu_.peak_bf16.value > 0.0) || !std::isfinite(gpu_.peak_bf16.value)) {
    throw InputError(fmt::format("compute cost: GPU '{}': peak_bf16 must be > 0, got {}", gpu_.name, gpu_.peak_bf16.value));
  }
  check_efficiency("LM-head gemm", head_efficiency_.gemm);
}

// Per layer: the sum over segments of alpha1*((c+s)^2 - c^2) + alpha2*s, plus beta once
// per layer for a chunk with any tokens; times the layer count. The LM head is added
// at the GPU's peak times the head's gemm efficiency.
ComputeCost CalibratedComputeCost::cost(Pass pass, const ChunkWork& work) const {
  ComputeCost c;
  c.flops = chunk_flops(model_, pass, work);
  c.memory_traffic = chunk_memory_traffic(model_, pass, work);
  const CalibratedFit& fit = pass == Pass::Backward ? backward_ : forward_;
  const std::uint64_t tokens = chunk_tokens(work);
  double layer_s = 0.0;
  for (const Segment& seg : work.segments) {
    const double s = static_cast<double>(seg.tokens);
    const double ctx = static_cast<double>(seg.context_tokens);
    layer_s += fit.alpha1_s_per_token2 * (s * (s + 2.0 * ctx)) + fit.alpha2_s_per_token * s;
  }
  if (tokens > 0) layer_s += fit.beta_s;
  double time_s = work.layer_count * layer_s;
  if (work.includes_lm_head) {
    const double head_flops = pass_gemm_factor(pass) * lm_head_forward_flops(model_, tokens);
    time_s += head_flops / (gpu_.peak_bf16.value * head_efficiency_.gemm);
  }
  c.time = Seconds(time_s);
  return c;
}

}  // namespace eppsim
