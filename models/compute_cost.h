#pragma once
// Compute cost of a chunk: FLOPs, HBM traffic and time.
//
// FLOPs per token and layer, forward (2 FLOPs per multiply-add):
//   GEMMs      2 * params_per_layer (QKV, output projection, FFN)
//   attention  causal: each of the s new tokens at position c+i attends to c+i+1
//              keys; QK^T and AV cost 2 * 2 * head_dim * heads per key, so a
//              segment costs 4 * hidden * (s*c + s*(s+1)/2).
//   LM head    2 * hidden * vocab per token on the last stage.
// Backward is 2x forward for GEMMs and 2.5x for attention (FlashAttention
// recomputes the scores); recompute is one more forward.
//
// Parts of a layer (LayerPart, for Ulysses and ring attention, which run a layer
// as pieces with communication between them):
//   PRE_ATTENTION   the norm before attention and the Q/K/V projections (with
//                   their biases): GEMM FLOPs of those weights
//   ATTENTION       the attention kernel: every attention FLOP, no GEMM
//   POST_ATTENTION  output projection, the second norm, the FFN: the rest of the
//                   layer's weights; with the model's last layer, the LM head
//   WHOLE           all three. The embedding (first layer) moves bytes only.
//
// Three time models behind one interface (the third, ShapedComputeCost, prices
// each kernel by its shape: models/shaped_compute_cost.h); all return this rank's share when the
// chunk is split over `shards` GPUs:
//   AnalyticComputeCost: roofline, max(gemm/(peak*gemm_eff) + attn/(peak*attn_eff),
//                        traffic / HBM bandwidth) of the whole layers, divided by
//                        shards; a part takes the share of it its own compute term
//                        has (gemm/attention FLOPs over their efficiencies), so
//                        the three parts sum to WHOLE exactly.
//   CalibratedComputeCost: per layer alpha1*((c+s)^2 - c^2) + alpha2*s + beta from
//                        a Calibration (InfiniPipe's Eq. 1 form); FLOPs stay analytic.
//                        The alpha terms (token work) are divided by shards; beta, a
//                        fixed cost each GPU pays per layer, is not. A part takes the
//                        share of the layer time its roofline FLOPs have, or, with
//                        an attention fit, ATTENTION that fit and the other parts
//                        the rest; the LM head (its own fit, or the roofline) goes
//                        to POST_ATTENTION.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "models/chunk.h"
#include "models/cost_model.h"
#include "models/gpu_spec.h"
#include "models/transformer_spec.h"
#include "base/units.h"

namespace eppsim {

namespace proto {
class ComputeFit;
class Calibration;
}  // namespace proto

// Backward attention FLOPs over forward: FlashAttention recomputes the scores
// (the table above).
inline constexpr double kBackwardAttentionFactor = 2.5;

// FlopCount and ComputeCost: models/cost_model.h.

// FLOPs of one pass over the chunk (see the table above), all of it.
FlopCount chunk_flops(const TransformerSpec& model, Pass pass, const ChunkWork& work);
// FLOPs of one part of each layer (see above); the three parts sum to WHOLE.
FlopCount part_flops(const TransformerSpec& model, Pass pass, const ChunkWork& work, LayerPart part);
// HBM bytes of one pass: every weight of the layers read once (twice for
// backward: weights and weight gradients), plus activations in and out: per
// token and layer the activations kept for backward (memory_model.h), the
// embedding row read and written, the LM head's weights and fp32 logits; backward
// moves each twice (read, and its gradient written). Recompute equals forward.
Bytes chunk_memory_traffic(const TransformerSpec& model, Pass pass, const ChunkWork& work);

// Shared by the compute models (analytic, calibrated, shaped):
// New tokens of the chunk (all segments).
std::uint64_t chunk_tokens(const ChunkWork& work);
// A part's share of a pass when nothing is computed (no tokens): the share of the
// weights its layers read, the only traffic left (ATTENTION has none).
double weight_share(const TransformerSpec& model, const ChunkWork& work, LayerPart part);
// `bytes` rounded to whole bytes; throws std::overflow_error past 2^64.
Bytes whole_bytes(double bytes);
// Throw InputError naming `what` for an efficiency outside (0, 1], or a GPU
// without a positive, finite peak and HBM bandwidth.
void check_efficiency(std::string_view what, double value);
void check_gpu(const GpuSpec& gpu);

class ComputeCostModel {
 public:
  virtual ~ComputeCostModel() = default;
  // This rank's share (work.shards) of work.part of the chunk's layers.
  virtual ComputeCost cost(const ComputeWork& work) const = 0;
};

struct AnalyticEfficiency {
  double gemm = 0.75;
  double attention = 0.55;
};

class AnalyticComputeCost final : public ComputeCostModel {
 public:
  // Throws InputError for efficiencies outside (0, 1] or a GPU without a positive
  // peak and HBM bandwidth.
  AnalyticComputeCost(TransformerSpec model, GpuSpec gpu, AnalyticEfficiency efficiency);
  ComputeCost cost(const ComputeWork& work) const override;

 private:
  TransformerSpec model_;
  GpuSpec gpu_;
  AnalyticEfficiency efficiency_;
};

struct CalibratedFit {
  double alpha1_s_per_token2 = 0.0;
  double alpha2_s_per_token = 0.0;
  double beta_s = 0.0;
  double gamma_s_per_extra_segment = 0.0;  // per layer, each sequence of a chunk past the first
};

// What a CalibratedFit weighs, in its order (alpha1, alpha2, beta, gamma), for
// one layer over `segments` sequences of `tokens` new tokens after
// `context_tokens` each: {n s (s + 2c), n s, 1, n - 1}, s (s + 2c) being
// (c + s)^2 - c^2 without its cancellation. The one formula of the fit:
// `eppsim calibrate` regresses measured times on these terms, and
// CalibratedComputeCost prices each segment of a chunk by its own (n = 1).
std::array<double, 4> calibrated_fit_terms(double tokens, double context_tokens, double segments);

// Fits of kernels the layer fits do not single out (calibration.proto's
// forward_head ... backward_attention), per pass; each may be absent.
struct CalibratedKernelFits {
  // The LM head's GEMMs: alpha2 * tokens + beta (alpha1 and gamma unused).
  std::optional<CalibratedFit> forward_head, backward_head;
  // The attention kernel of one layer, all heads, one sequence: alpha1 * ((c+s)^2 - c^2) + alpha2 * s + beta.
  std::optional<CalibratedFit> forward_attention, backward_attention;
};

class CalibratedComputeCost final : public ComputeCostModel {
 public:
  // Recompute uses the forward fits. A packed chunk sums the alpha terms over its
  // segments and pays beta once per layer and gamma per layer for each segment
  // with tokens past the first (nothing for a chunk without tokens); a sharded
  // chunk divides the alpha terms, not beta or gamma. The LM head takes the pass's
  // head fit (alpha2 * tokens / shards + beta), or without one is charged
  // analytically at the GPU's peak times gemm efficiency, divided by the shards.
  // With the pass's attention fit, ATTENTION takes it (at most the layers' time)
  // and PRE_ and POST_ATTENTION share the rest by their GEMM FLOPs; without one
  // each part takes the layers' time in proportion to its FLOPs. Throws
  // InputError for a non-finite fit or an efficiency outside (0, 1].
  CalibratedComputeCost(TransformerSpec model, GpuSpec gpu, CalibratedFit forward, CalibratedFit backward,
                        AnalyticEfficiency head_efficiency = {}, CalibratedKernelFits kernels = {});
  ComputeCost cost(const ComputeWork& work) const override;

 private:
  TransformerSpec model_;
  GpuSpec gpu_;
  CalibratedFit forward_;
  CalibratedFit backward_;
  AnalyticEfficiency head_efficiency_;
  CalibratedKernelFits kernels_;
};

}  // namespace eppsim
