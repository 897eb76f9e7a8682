#include "models/compute_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/errors.h"
#include "models/memory_model.h"

namespace eppsim {
namespace {

constexpr double kBackwardGemmFactor = 2.0;       // input gradients + weight gradients

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

void check_fit(std::string_view which, const CalibratedFit& fit) {
  if (!std::isfinite(fit.alpha1_s_per_token2) || !std::isfinite(fit.alpha2_s_per_token) || !std::isfinite(fit.beta_s) ||
      !std::isfinite(fit.gamma_s_per_extra_segment)) {
    throw InputError(fmt::format("compute cost: {} fit must be finite, got alpha1 {} alpha2 {} beta {} gamma {}", which,
                                 fit.alpha1_s_per_token2, fit.alpha2_s_per_token, fit.beta_s,
                                 fit.gamma_s_per_extra_segment));
  }
}

// Parameters of one layer's PRE_ATTENTION part: the first norm, the Q, K and V
// projections and (GPT) their biases; POST_ATTENTION holds the rest of the layer.
double pre_attention_params(const TransformerSpec& model) {
  const double h = model.hidden_size;
  const double kv = model.kv_dim();
  const bool gpt = model.ffn_kind == FfnKind::Gelu;
  const double qkv = h * h + 2.0 * h * kv + (gpt ? h + 2.0 * kv : 0.0);
  const double norm = gpt ? 2.0 * h : h;
  return qkv + norm;
}

std::uint32_t shards_of(const ComputeWork& work) { return work.shards > 1 ? work.shards : 1; }

}  // namespace

std::uint64_t chunk_tokens(const ChunkWork& work) {
  std::uint64_t tokens = 0;
  for (const Segment& seg : work.segments) tokens += seg.tokens;
  return tokens;
}

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

double weight_share(const TransformerSpec& model, const ChunkWork& work, LayerPart part) {
  const double layers = work.layer_count;
  const double head = work.includes_lm_head ? static_cast<double>(model.hidden_size) * model.vocab_size : 0.0;
  const double total = layers * model.params_per_layer() + head;
  if (!(total > 0.0)) return part == LayerPart::PostAttention ? 1.0 : 0.0;
  const double pre = layers * pre_attention_params(model) / total;
  switch (part) {
    case LayerPart::PreAttention: return pre;
    case LayerPart::Attention: return 0.0;
    case LayerPart::PostAttention: return 1.0 - pre;
    case LayerPart::Whole: break;
  }
  return 1.0;
}

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

FlopCount part_flops(const TransformerSpec& model, Pass pass, const ChunkWork& work, LayerPart part) {
  const FlopCount whole = chunk_flops(model, pass, work);
  const double pre_gemm = pass_gemm_factor(pass) * work.layer_count * 2.0 * pre_attention_params(model) *
                          static_cast<double>(chunk_tokens(work));
  switch (part) {
    case LayerPart::PreAttention: return FlopCount{pre_gemm, 0.0};
    case LayerPart::Attention: return FlopCount{0.0, whole.attention};
    case LayerPart::PostAttention: return FlopCount{whole.gemm - pre_gemm, 0.0};
    case LayerPart::Whole: break;
  }
  return whole;
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

// The roofline of the whole layers, then the part's share of it (its own compute
// term over the whole's), then this rank's 1/shards.
ComputeCost AnalyticComputeCost::cost(const ComputeWork& work) const {
  const double peak = gpu_.peak_bf16.value;
  auto compute_s = [&](const FlopCount& f) {
    return f.gemm / (peak * efficiency_.gemm) + f.attention / (peak * efficiency_.attention);
  };
  const FlopCount whole = chunk_flops(model_, work.pass, work.chunk);
  const Bytes traffic = chunk_memory_traffic(model_, work.pass, work.chunk);
  const double whole_compute_s = compute_s(whole);
  const double whole_s = std::max(whole_compute_s, transfer_time(traffic, gpu_.memory_bandwidth).value);
  double share = 1.0;
  ComputeCost c;
  c.flops = whole;
  if (work.part != LayerPart::Whole) {
    c.flops = part_flops(model_, work.pass, work.chunk, work.part);
    share = whole_compute_s > 0.0 ? compute_s(c.flops) / whole_compute_s : weight_share(model_, work.chunk, work.part);
  }
  const double shards = shards_of(work);
  c.flops = FlopCount{c.flops.gemm / shards, c.flops.attention / shards};
  c.memory_traffic = whole_bytes(static_cast<double>(traffic.count) * share / shards);
  c.time = Seconds(whole_s * share / shards);
  return c;
}

CalibratedComputeCost::CalibratedComputeCost(TransformerSpec model, GpuSpec gpu, CalibratedFit forward,
                                             CalibratedFit backward, AnalyticEfficiency head_efficiency,
                                             CalibratedKernelFits kernels)
    : model_(std::move(model)),
      gpu_(std::move(gpu)),
      forward_(forward),
      backward_(backward),
      head_efficiency_(head_efficiency),
      kernels_(std::move(kernels)) {
  check_fit("forward", forward_);
  check_fit("backward", backward_);
  for (auto [which, fit] : {std::pair{"forward LM-head", &kernels_.forward_head},
                            std::pair{"backward LM-head", &kernels_.backward_head},
                            std::pair{"forward attention", &kernels_.forward_attention},
                            std::pair{"backward attention", &kernels_.backward_attention}}) {
    if (*fit) check_fit(which, **fit);
  }
  if (!(gpu_.peak_bf16.value > 0.0) || !std::isfinite(gpu_.peak_bf16.value)) {
    throw InputError(fmt::format("compute cost: GPU '{}': peak_bf16 must be > 0, got {}", gpu_.name, gpu_.peak_bf16.value));
  }
  check_efficiency("LM-head gemm", head_efficiency_.gemm);
}

std::array<double, 4> calibrated_fit_terms(double tokens, double context_tokens, double segments) {
  return {segments * (tokens * (tokens + 2.0 * context_tokens)), segments * tokens, 1.0, segments - 1.0};
}

// Per layer: the sum over segments of alpha1*((c+s)^2 - c^2) + alpha2*s divided by
// the shards, plus beta once per layer and gamma for each segment with tokens past
// the first (per GPU, not divided) for a chunk with any tokens; times the layer
// count. The LM head: its fit, or the GPU's peak times the head's gemm
// efficiency; divided by the shards. Parts: see the header.
ComputeCost CalibratedComputeCost::cost(const ComputeWork& work) const {
  const ChunkWork& chunk = work.chunk;
  const double shards = shards_of(work);
  const FlopCount whole = chunk_flops(model_, work.pass, chunk);
  const Bytes traffic = chunk_memory_traffic(model_, work.pass, chunk);
  const bool backward = work.pass == Pass::Backward;
  const CalibratedFit& fit = backward ? backward_ : forward_;
  const std::optional<CalibratedFit>& head_fit = backward ? kernels_.backward_head : kernels_.forward_head;
  const std::optional<CalibratedFit>& attention_fit =
      backward ? kernels_.backward_attention : kernels_.forward_attention;
  const std::uint64_t tokens = chunk_tokens(chunk);
  double alpha_s = 0.0, attention_alpha_s = 0.0;
  double segments = 0.0;
  for (const Segment& seg : chunk.segments) {
    const double s = static_cast<double>(seg.tokens);
    const double ctx = static_cast<double>(seg.context_tokens);
    const auto terms = calibrated_fit_terms(s, ctx, 1.0);
    alpha_s += fit.alpha1_s_per_token2 * terms[0] + fit.alpha2_s_per_token * terms[1];
    if (attention_fit)
      attention_alpha_s += attention_fit->alpha1_s_per_token2 * terms[0] + attention_fit->alpha2_s_per_token * terms[1];
    if (seg.tokens > 0) segments += 1.0;
  }
  const double fixed_s = fit.beta_s + fit.gamma_s_per_extra_segment * std::max(0.0, segments - 1.0);
  const double layers_s = tokens > 0 ? chunk.layer_count * (alpha_s / shards + fixed_s) : 0.0;
  double head_s = 0.0;
  if (chunk.includes_lm_head && tokens > 0) {
    if (head_fit) {
      head_s = head_fit->alpha2_s_per_token * static_cast<double>(tokens) / shards + head_fit->beta_s;
    } else {
      const double head_flops = pass_gemm_factor(work.pass) * lm_head_forward_flops(model_, tokens);
      head_s = head_flops / (gpu_.peak_bf16.value * head_efficiency_.gemm) / shards;
    }
  }
  ComputeCost c;
  c.flops = whole;
  double time_s = layers_s + head_s;
  double traffic_share = 1.0;
  if (work.part != LayerPart::Whole) {
    c.flops = part_flops(model_, work.pass, chunk, work.part);
    ChunkWork layers_only = chunk;
    layers_only.includes_lm_head = false;
    const FlopCount layer_flops = chunk_flops(model_, work.pass, layers_only);
    const FlopCount part_layer_flops = part_flops(model_, work.pass, layers_only, work.part);
    const double head_part_s = work.part == LayerPart::PostAttention ? head_s : 0.0;
    if (attention_fit) {
      const double attention_s =
          tokens > 0 ? std::min(layers_s, chunk.layer_count * (attention_alpha_s / shards + attention_fit->beta_s)) : 0.0;
      const double gemm_share = layer_flops.gemm > 0.0 ? part_layer_flops.gemm / layer_flops.gemm
                                                       : weight_share(model_, chunk, work.part);
      time_s = work.part == LayerPart::Attention ? attention_s : (layers_s - attention_s) * gemm_share + head_part_s;
    } else {
      const double layer_share = layer_flops.total() > 0.0 ? part_layer_flops.total() / layer_flops.total()
                                                           : weight_share(model_, chunk, work.part);
      time_s = layers_s * layer_share + head_part_s;
    }
    traffic_share = whole.total() > 0.0 ? c.flops.total() / whole.total() : weight_share(model_, chunk, work.part);
  }
  c.flops = FlopCount{c.flops.gemm / shards, c.flops.attention / shards};
  c.memory_traffic = whole_bytes(static_cast<double>(traffic.count) * traffic_share / shards);
  c.time = Seconds(time_s);
  return c;
}

}  // namespace eppsim
