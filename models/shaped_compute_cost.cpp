#include "models/shaped_compute_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/errors.h"
#include "models/layer_gemms.h"

namespace eppsim {
namespace {

// Framework time beside the kernels, in PyTorch eager mode (rough estimates from
// a per-operator cost, not measurements; calibration replaces them):
//   layer: a layer runs about ten operators that launch no kernel of their own
//     (views, transposes, the autograd graph's nodes, module hooks); at the
//     lower end of eager mode's 5-25us per operator, 50us per layer and pass.
//   chunk: per micro-batch and pass the framework's step (fetching the batch,
//     building cu_seqlens and the position ids, the loss and the schedule's
//     bookkeeping), about a hundred such operators: 0.5ms.
constexpr double kLayerOverheadS = 50e-6;
constexpr double kChunkOverheadS = 0.5e-3;

// Kernels of a layer and pass beside its GEMMs and attention (see the header).
constexpr double kPostAttentionOtherKernels = 4.0;  // residual add, norm, activation, residual add
constexpr double kLmHeadOtherKernels = 2.0;         // final norm, cross-entropy

enum PartIndex { kPre = 0, kAttention = 1, kPost = 2 };
constexpr LayerPart kParts[] = {LayerPart::PreAttention, LayerPart::Attention, LayerPart::PostAttention};

// Kernel time of a part without its fixed costs, and its fixed costs.
struct PartTime {
  double kernels_s = 0.0;
  double fixed_s = 0.0;
};

double pre_attention_other_kernels(const TransformerSpec& model) {
  return model.ffn_kind == FfnKind::SwiGlu ? 2.0 : 1.0;  // norm (+ rotary embedding for Llama)
}

// The tile model's time of one GEMM (once), without the launch.
double gemm_kernel_s(const GemmShape& g, const ShapedComputeParams& p, double peak) {
  if (g.m == 0 || g.k == 0 || g.n == 0) return 0.0;
  const double sm_flops = p.gemm_tile_efficiency * peak / p.sm_count;
  const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k);
  double best = std::numeric_limits<double>::infinity();
  for (const GemmTile& tile : kGemmTiles) {
    const double tiles = std::ceil(m / tile.m) * std::ceil(n / tile.n);
    const double waves = std::ceil(tiles / p.sm_count);
    best = std::min(best, waves * 2.0 * tile.m * tile.n * (k + p.gemm_k_prologue) / sm_flops);
  }
  return best;
}

void check_params(const ShapedComputeParams& p) {
  check_efficiency("shaped gemm tile", p.gemm_tile_efficiency);
  check_efficiency("shaped attention", p.attention_efficiency);
  const std::pair<std::string_view, double> non_negative[] = {
      {"kernel launch", p.kernel_launch.value},
      {"layer overhead", p.layer_overhead.value},
      {"chunk overhead", p.chunk_overhead.value},
      {"GEMM K prologue", p.gemm_k_prologue},
  };
  for (const auto& [what, value] : non_negative) {
    if (!(value >= 0.0) || !std::isfinite(value))
      throw InputError(fmt::format("compute cost: shaped {} must be finite and >= 0, got {}", what, value));
  }
  if (!(p.attention_half_length_tokens > 0.0) || !std::isfinite(p.attention_half_length_tokens)) {
    throw InputError(fmt::format("compute cost: shaped attention half length must be finite and > 0, got {}",
                                 p.attention_half_length_tokens));
  }
  if (p.sm_count == 0) throw InputError("compute cost: shaped SM count must be > 0, got 0");
}

}  // namespace

ShapedComputeParams default_shaped_params(const GpuSpec& gpu) {
  const GpuSpec& source = gpu.sm_count > 0 ? gpu : nearest_gpu_preset(gpu.peak_bf16);
  return ShapedComputeParams{
      .fixed_costs = true,
      .kernel_launch = source.shaped.kernel_launch,
      .layer_overhead = Seconds(kLayerOverheadS),
      .chunk_overhead = Seconds(kChunkOverheadS),
      .gemm_tile_efficiency = source.shaped.gemm_tile_efficiency,
      .gemm_k_prologue = source.shaped.gemm_k_prologue,
      .attention_efficiency = source.shaped.attention_efficiency,
      .attention_half_length_tokens = source.shaped.attention_half_length_tokens,
      .sm_count = source.sm_count,
  };
}

Seconds shaped_gemm_time(const GemmShape& gemm, const ShapedComputeParams& params, FlopsPerSecond peak) {
  const double launch_s = params.fixed_costs ? params.kernel_launch.value : 0.0;
  return Seconds(launch_s + gemm_kernel_s(gemm, params, peak.value));
}

std::uint32_t padded_head_dim(std::uint32_t head_dim) {
  for (std::uint32_t supported : {64u, 96u, 128u, 256u}) {
    if (head_dim <= supported) return supported;
  }
  return head_dim;
}

double shaped_attention_efficiency(const ShapedComputeParams& params, double mean_attended_tokens, Pass pass) {
  const double l = mean_attended_tokens;
  const double forward = params.attention_efficiency * l / (l + params.attention_half_length_tokens);
  return pass == Pass::Backward ? forward * kBackwardAttentionEfficiencyRatio : forward;
}

ShapedComputeCost::ShapedComputeCost(TransformerSpec model, GpuSpec gpu, ShapedComputeParams params)
    : model_(std::move(model)), gpu_(std::move(gpu)), params_(params) {
  check_gpu(gpu_);
  check_params(params_);
  if (model_.attention_heads == 0 || model_.hidden_size == 0)
    throw InputError(fmt::format("compute cost: model '{}' needs hidden_size and attention_heads > 0", model_.name));
}

ComputeCost ShapedComputeCost::cost(const ComputeWork& work) const {
  const ChunkWork& chunk = work.chunk;
  const double shards = work.shards > 1 ? work.shards : 1;
  const double peak = gpu_.peak_bf16.value;
  const std::uint64_t tokens = chunk_tokens(chunk);
  PartTime parts[3];
  if (tokens > 0) {
    const double launch_s = params_.fixed_costs ? params_.kernel_launch.value : 0.0;
    // Each GPU runs ceil(tokens / shards) rows, as the runtime does.
    const std::uint64_t m = (tokens + work.shards - 1) / std::max(work.shards, 1u);
    const double layers = chunk.layer_count;
    const Pass pass = work.pass;

    // The layer's GEMMs (models/layer_gemms.h) in their parts.
    std::vector<GemmShape> gemms;
    for (const WeightGemm& w : layer_gemms(model_, 1, chunk.includes_lm_head)) {
      gemms.clear();
      append_pass_gemms(gemms, w, m, pass, w.once_per_chunk ? 1 : chunk.layer_count);
      PartTime& part = parts[w.part == LayerPart::PreAttention ? kPre : kPost];
      for (const GemmShape& g : gemms) {
        part.kernels_s += g.count * gemm_kernel_s(g, params_, peak);
        part.fixed_s += g.count * launch_s;
      }
    }

    PartTime& pre = parts[kPre];
    pre.fixed_s += layers * pre_attention_other_kernels(model_) * launch_s;
    if (chunk.includes_embedding) pre.fixed_s += launch_s;

    PartTime& attention = parts[kAttention];
    if (chunk.layer_count > 0) {
      const double pad = static_cast<double>(padded_head_dim(model_.head_dim())) / model_.head_dim();
      for (const Segment& seg : chunk.segments) {
        if (seg.tokens == 0) continue;
        ChunkWork one;
        one.segments = std::span<const Segment>(&seg, 1);
        one.layer_count = 1;
        const double flops = chunk_flops(model_, pass, one).attention * pad / shards;
        const double mean_attended = static_cast<double>(seg.context_tokens) + (static_cast<double>(seg.tokens) + 1.0) / 2.0;
        attention.kernels_s += layers * flops / (peak * shaped_attention_efficiency(params_, mean_attended, pass));
      }
      attention.fixed_s += layers * launch_s;  // one varlen kernel for the packed chunk
    }

    PartTime& post = parts[kPost];
    post.fixed_s += layers * kPostAttentionOtherKernels * launch_s;
    if (chunk.includes_lm_head) post.fixed_s += kLmHeadOtherKernels * launch_s;

    if (params_.fixed_costs && model_.layers > 0) {
      const double framework_s =
          layers * params_.layer_overhead.value + params_.chunk_overhead.value * layers / model_.layers;
      for (PartTime& part : parts) part.fixed_s += framework_s / 3.0;
    }
  }

  // The memory floor over the pass's kernels, then each part's share of it.
  const Bytes traffic = chunk_memory_traffic(model_, work.pass, chunk);
  const double memory_s = static_cast<double>(traffic.count) / shards / gpu_.memory_bandwidth.value;
  const double kernels_s = parts[kPre].kernels_s + parts[kAttention].kernels_s + parts[kPost].kernels_s;
  double time_s[3];
  double share[3];
  for (int i = 0; i < 3; ++i) {
    share[i] = kernels_s > 0.0 ? parts[i].kernels_s / kernels_s : weight_share(model_, chunk, kParts[i]);
    time_s[i] = std::max(kernels_s, memory_s) * share[i] + parts[i].fixed_s;
  }

  ComputeCost c;
  if (work.part == LayerPart::Whole) {
    c.flops = chunk_flops(model_, work.pass, chunk);
    c.memory_traffic = whole_bytes(static_cast<double>(traffic.count) / shards);
    c.time = Seconds(time_s[kPre] + time_s[kAttention] + time_s[kPost]);
  } else {
    const int i = work.part == LayerPart::PreAttention ? kPre : work.part == LayerPart::Attention ? kAttention : kPost;
    c.flops = part_flops(model_, work.pass, chunk, work.part);
    c.memory_traffic = whole_bytes(static_cast<double>(traffic.count) * share[i] / shards);
    c.time = Seconds(time_s[i]);
  }
  c.flops = FlopCount{c.flops.gemm / shards, c.flops.attention / shards};
  return c;
}

}  // namespace eppsim
