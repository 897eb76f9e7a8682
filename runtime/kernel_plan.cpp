#include "runtime/kernel_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/errors.h"
#include "models/compute_cost.h"
#include "models/transformer_spec.h"
#include "runtime/attention_blocks.h"
#include "schedule/compute_segments.h"
#include "schedule/model_shape.h"
#include "schedule/op_cost.h"

namespace eppsim::runtime {
namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// How the op's work is shared: the product of the group sizes per kind.
struct Degrees {
  std::uint32_t sequence = 1, tensor = 1, context = 1;
};

Degrees split_degrees(const proto::ComputeOp& op, const std::vector<std::uint32_t>& group_sizes) {
  Degrees d;
  for (int i = 0; i < op.splits_size(); ++i) {
    const proto::ComputeSplit& split = op.splits(i);
    if (split.group() >= group_sizes.size()) {
      throw InputError(fmt::format("compute.splits[{}].group: the schedule has no group {} ({} groups)", i,
                                   split.group(), group_sizes.size()));
    }
    const std::uint32_t size = group_sizes[split.group()];
    if (size == 0) throw InputError(fmt::format("compute.splits[{}].group: group {} is empty", i, split.group()));
    switch (split.kind()) {
      case proto::SEQUENCE_PARALLEL: d.sequence *= size; break;
      case proto::TENSOR_PARALLEL: d.tensor *= size; break;
      case proto::CONTEXT_PARALLEL: d.context *= size; break;
      default:
        throw InputError(fmt::format(
            "compute.splits[{}].kind: must be SEQUENCE_PARALLEL, TENSOR_PARALLEL or CONTEXT_PARALLEL, got {}", i,
            static_cast<int>(split.kind())));
    }
  }
  return d;
}

// K/V heads per rank when the query heads are split `degree` ways: split too
// when they divide, else replicated (one per rank) as Ulysses and Megatron do
// for grouped-query attention with fewer K/V heads than ranks.
std::uint32_t kv_heads_per_rank(std::uint32_t kv_heads, std::uint32_t degree) {
  if (kv_heads % degree == 0) return kv_heads / degree;
  if (degree % kv_heads == 0) return 1;
  throw InputError(fmt::format("compute.splits: the sequence x tensor parallel degree {} and the model's {} K/V "
                               "heads must divide one another",
                               degree, kv_heads));
}

void add_attention(KernelPlan& plan, const AttentionShape& shape) {
  for (AttentionShape& a : plan.attention) {
    AttentionShape same = shape;
    same.count = a.count;
    if (a == same) {
      a.count += shape.count;
      return;
    }
  }
  plan.attention.push_back(shape);
}

}  // namespace

double attention_flops(const AttentionShape& a, Pass pass) {
  const double s = static_cast<double>(a.tokens);
  const double c = static_cast<double>(a.context_tokens);
  const double forward = 4.0 * a.head_dim * static_cast<double>(a.heads) * (s * c + s * (s + 1.0) / 2.0) * a.count;
  return pass == Pass::Backward ? kBackwardAttentionFactor * forward : forward;
}

void KernelBuffers::grow(const KernelPlan& plan) {
  for (const GemmShape& g : plan.gemms) {
    gemm_a = std::max(gemm_a, g.m * g.k);
    gemm_b = std::max(gemm_b, g.k * g.n);
    gemm_c = std::max(gemm_c, g.m * g.n);
  }
  for (const AttentionShape& a : plan.attention) {
    const std::uint64_t keys_seen = a.context_tokens + a.tokens;
    queries = std::max(queries, a.tokens * a.heads * std::uint64_t{a.head_dim});
    keys = std::max(keys, keys_seen * a.kv_heads * std::uint64_t{a.head_dim});
    scores = std::max(scores, std::min(a.tokens, kAttentionBlockRows) * keys_seen);
  }
  stream = std::max(stream, plan.elementwise_bytes / (3 * sizeof(float)));
}

std::uint64_t KernelBuffers::elements(std::uint64_t stream_buffer_elements) const {
  return gemm_a + gemm_b + gemm_c + 4 * queries + 4 * keys + 2 * scores + 2 * std::min(stream, stream_buffer_elements);
}

std::uint64_t KernelBuffers::largest(std::uint64_t stream_buffer_elements) const {
  return std::max({gemm_a, gemm_b, gemm_c, queries, keys, scores, std::min(stream, stream_buffer_elements)});
}

double plan_flops(const KernelPlan& plan) {
  double flops = 0.0;
  for (const GemmShape& g : plan.gemms) flops += g.flops();
  for (const AttentionShape& a : plan.attention) flops += attention_flops(a, plan.pass);
  return flops;
}

// Per layer and rank (m = the rank's tokens, e = bytes per element, f and the
// heads after tensor parallelism), the GEMMs as models/layer_gemms.h lists them:
//   PRE_ATTENTION   qkv; element-wise: the first norm (read and write h per token)
//   ATTENTION       causal attention per segment
//   POST_ATTENTION  attention_output, ffn_up, ffn_down; element-wise: two
//                   residual adds (read 2h, write h), the second norm (2h), the
//                   FFN activation (SwiGLU: read 2f, write f; GELU: read and write f)
//   first layer     the embedding row read and written (2h), with PRE_ATTENTION
//   LM head         lm_head, the final norm (2h) and the fp32 logits written and
//                   read for the loss (8 * vocab bytes)
// Backward doubles the GEMMs (input and weight gradients) and the element-wise
// bytes (read the activation, write its gradient).
KernelPlan plan_kernels(const proto::ModelShape& model_shape, const proto::ComputeOp& op,
                        const std::vector<std::uint32_t>& group_sizes) {
  KernelPlan plan;
  if (op.phase() == proto::OPTIMIZER || op.phase() == proto::PHASE_UNSPECIFIED) {
    plan.elementwise_bytes = op.memory_traffic_bytes();
    return plan;
  }
  const TransformerSpec model = from_model_shape(model_shape, "schedule header");
  if (static_cast<std::uint64_t>(op.first_layer()) + op.layer_count() > model.layers) {
    throw InputError(fmt::format("compute.first_layer: layers {}..{} are past the model's {} layers", op.first_layer(),
                                 static_cast<std::uint64_t>(op.first_layer()) + op.layer_count(), model.layers));
  }
  plan.pass = pass_of(op.phase());
  const bool backward = plan.pass == Pass::Backward;
  const Degrees d = split_degrees(op, group_sizes);
  const std::uint32_t head_split = d.sequence * d.tensor;
  if (model.attention_heads % head_split != 0) {
    throw InputError(fmt::format("compute.splits: the sequence x tensor parallel degree {} must divide the model's {} "
                                 "attention heads",
                                 head_split, model.attention_heads));
  }
  // Attention splits the heads over sequence and tensor parallelism; the
  // projections are split by tensor parallelism only (Ulysses projects its
  // share of the tokens with every head, then trades tokens for heads).
  const std::uint32_t heads = model.attention_heads / head_split;
  const std::uint32_t kv_heads = kv_heads_per_rank(model.kv_heads, head_split);
  kv_heads_per_rank(model.kv_heads, d.tensor);  // checks that TP and the K/V heads divide one another
  const std::uint64_t head_dim = model.head_dim();
  const std::uint64_t h = model.hidden_size;
  const std::uint64_t f = ceil_div(model.ffn_hidden_size, d.tensor);
  const std::uint64_t vocab = ceil_div(model.vocab_size, d.tensor);
  const std::uint64_t e = model.bytes_per_element;
  const bool gated = model.ffn_kind == FfnKind::SwiGlu;

  const std::uint64_t chunk_tokens = new_tokens_of(op);
  const std::uint64_t m = ceil_div(chunk_tokens, std::uint64_t{d.sequence} * d.context);
  const std::uint32_t layers = op.layer_count();
  const proto::LayerPart part = op.layer_part();
  const bool pre = part == proto::LAYER_WHOLE || part == proto::PRE_ATTENTION;
  const bool attention = part == proto::LAYER_WHOLE || part == proto::ATTENTION;
  const bool post = part == proto::LAYER_WHOLE || part == proto::POST_ATTENTION;

  const std::vector<WeightGemm> weights = layer_gemms(model, d.tensor, op.includes_lm_head());
  auto add_gemms = [&](LayerPart gemm_part) {
    for (const WeightGemm& w : weights) {
      if (w.part == gemm_part) append_pass_gemms(plan.gemms, w, m, plan.pass, w.once_per_chunk ? 1 : layers);
    }
  };
  std::uint64_t elementwise_per_token = 0;  // bytes
  if (pre) {
    add_gemms(LayerPart::PreAttention);
    elementwise_per_token += layers * 2 * e * h;
    if (op.first_layer() == 0 && layers > 0) elementwise_per_token += 2 * e * h;
  }
  if (attention && layers > 0) {
    for (const Segment& s : segments_of(op)) {
      if (s.tokens == 0) continue;
      // Context parallelism (ring attention, load-balanced): the rank's
      // ceil(s/cp) queries at the average position, so that the causal pairs
      // are the segment's over cp.
      const std::uint64_t queries = ceil_div(s.tokens, d.context);
      const std::uint64_t context = s.context_tokens + (s.tokens - queries) / 2;
      add_attention(plan, AttentionShape{.tokens = queries,
                                         .context_tokens = context,
                                         .heads = heads,
                                         .kv_heads = kv_heads,
                                         .head_dim = static_cast<std::uint32_t>(head_dim),
                                         .count = layers});
    }
  }
  if (post) {
    add_gemms(LayerPart::PostAttention);
    elementwise_per_token += layers * (2 * 3 * e * h + 2 * e * h + (gated ? 3 : 2) * e * f);
    if (op.includes_lm_head()) elementwise_per_token += 2 * e * h + 2 * 4 * vocab;
  }
  plan.elementwise_bytes = (backward ? 2 : 1) * elementwise_per_token * m;
  return plan;
}

}  // namespace eppsim::runtime
