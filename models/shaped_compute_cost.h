#pragma once
// Compute by shape (cost_model { compute: SHAPED }): every kernel a layer runs is
// priced by its own shape on this rank's GPU, so that small or fragmented work
// loses efficiency as it does on a real GPU (docs/cost-model.md has the formulas
// and every default with its source).
//
// Work per GPU. A ComputeWork is this rank's 1/shards share of a pass. Every
// kind of sharding (SP x TP x CP) is taken as splitting tokens: each GEMM runs
// M = ceil(chunk tokens / shards) rows. That keeps the FLOPs exact and approximates
// tensor parallelism, which really narrows N (or K) instead of M.
//
// GEMMs: those of models/layer_gemms.h (QKV in PRE_ATTENTION; the output
// projection, FFN up and down, and once per chunk the LM head in
// POST_ATTENTION; backward their data and weight gradients), with
// M = ceil(chunk tokens / shards) rows. A GEMM (output M x N, reduction over K) takes
//   t = t_launch + waves * 2 * tm * tn * (K + k0) / (e_max * peak / SMs)
// minimised over the tiles tm x tn in {256x128, 128x256, 128x128, 128x64, 64x64},
// with waves = ceil(ceil(M/tm) * ceil(N/tn) / SMs) (NVIDIA's "Matrix Multiplication
// Background": a partly filled last wave costs a whole one).
//
// Attention (FlashAttention varlen: one kernel per layer and pass for the whole
// packed chunk): each segment's FLOPs as chunk_flops counts them, with the head
// dimension padded up to the kernels' sizes {64, 96, 128, 256} (FLOPs scale with
// the padded size; a larger head dimension is taken as it is), at efficiency
//   e(L) = e_att * L / (L + L0),  L = context + (tokens + 1) / 2
// (the mean number of keys a new token attends to), divided by the shards with
// L that of the whole segment (Ulysses gives each GPU whole sequences of fewer
// heads; ring attention's blocks still span the segment). Backward: 2.5x the
// forward FLOPs (chunk_flops) at kBackwardAttentionEfficiencyRatio of the
// forward efficiency.
//
// Kernels of one layer and pass beside GEMMs and attention (elementwise and norm
// kernels, one backward kernel each in backward):
//   PRE_ATTENTION   norm, rotary embedding (SwiGLU/Llama models): 2 (GELU: 1)
//   POST_ATTENTION  residual add, norm, activation, residual add: 4
//   LM head         final norm, cross-entropy: 2 (once per chunk)
//   embedding       lookup (backward: scatter-add): 1 (once per chunk, PRE_ATTENTION)
//
// Fixed costs (ShapedComputeParams::fixed_costs; each GPU pays them whole, none
// is divided by the shards): kernel_launch per kernel (each GEMM, attention and
// other kernel above); layer_overhead per layer and pass; chunk_overhead per
// chunk and pass, spread over the model's layers (a GPU running L of the model's
// N layers pays L/N of it per chunk, as InfiniPipe's Eq. 1 divides its per-chunk
// constant by the pipeline degree; it also keeps a layer run as separate part
// ops from paying it once per layer). The layer and chunk overheads go a third
// to each part. With fixed_costs off all three are 0.
//
// Memory floor: the pass's kernels take max(their compute, HBM traffic
// (chunk_memory_traffic) / shards / bandwidth), as the roofline does; a part
// takes its compute's share of that (the weights' share when nothing is computed).
// Parts: PRE_ATTENTION, ATTENTION and POST_ATTENTION take their own kernels and
// sum to WHOLE exactly.
#include <array>
#include <cstdint>

#include "models/compute_cost.h"
#include "models/layer_gemms.h"

namespace eppsim {

// Backward attention efficiency over forward: FlashAttention-2 reaches up to 73%
// of A100 peak forward and up to 63% backward (its paper, arXiv 2307.08691).
inline constexpr double kBackwardAttentionEfficiencyRatio = 63.0 / 73.0;

struct ShapedComputeParams {
  bool fixed_costs = true;
  Seconds kernel_launch;                     // per kernel
  Seconds layer_overhead;                    // per layer and pass
  Seconds chunk_overhead;                    // per chunk and pass (spread over the model's layers)
  double gemm_tile_efficiency = 0.0;         // e_max, (0, 1]
  double gemm_k_prologue = 0.0;              // k0, elements of K, >= 0
  double attention_efficiency = 0.0;         // e_att, (0, 1]
  double attention_half_length_tokens = 0.0; // L0, > 0
  std::uint32_t sm_count = 0;                // > 0
};

// The defaults on `gpu`: its preset's SM count and kernel defaults (a custom GPU
// without them: those of the preset nearest its peak, nearest_gpu_preset), and
// the framework's layer and chunk overheads (docs/cost-model.md).
ShapedComputeParams default_shaped_params(const GpuSpec& gpu);

struct GemmTile {
  std::uint32_t m = 0;
  std::uint32_t n = 0;
};
inline constexpr std::array<GemmTile, 5> kGemmTiles = {{{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 64}}};

// One of the GEMM's `count` runs (models/layer_gemms.h), with the formula
// above; the launch only when params.fixed_costs.
Seconds shaped_gemm_time(const GemmShape& gemm, const ShapedComputeParams& params, FlopsPerSecond peak);
// The head dimension a FlashAttention kernel runs for `head_dim`.
std::uint32_t padded_head_dim(std::uint32_t head_dim);
// e(L) above, forward or backward.
double shaped_attention_efficiency(const ShapedComputeParams& params, double mean_attended_tokens, Pass pass);

class ShapedComputeCost final : public ComputeCostModel {
 public:
  // Throws InputError for parameters outside their ranges (above) or a GPU
  // without a positive peak and HBM bandwidth.
  ShapedComputeCost(TransformerSpec model, GpuSpec gpu, ShapedComputeParams params);
  ComputeCost cost(const ComputeWork& work) const override;
  const ShapedComputeParams& params() const { return params_; }

 private:
  TransformerSpec model_;
  GpuSpec gpu_;
  ShapedComputeParams params_;
};

}  // namespace eppsim
