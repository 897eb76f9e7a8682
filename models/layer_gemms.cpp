#include "models/layer_gemms.h"

namespace eppsim {
namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace

std::vector<WeightGemm> layer_gemms(const TransformerSpec& model, std::uint32_t tensor_parallel, bool lm_head) {
  const std::uint32_t tp = tensor_parallel > 0 ? tensor_parallel : 1;
  const std::uint64_t head_dim = model.head_dim();
  const std::uint64_t h = model.hidden_size;
  const std::uint64_t heads = model.attention_heads / tp;
  // Fewer K/V heads than ranks: each rank keeps one (Megatron replicates them).
  const std::uint64_t kv_heads = model.kv_heads % tp == 0 ? model.kv_heads / tp : 1;
  const std::uint64_t f = ceil_div(model.ffn_hidden_size, tp);
  const bool gated = model.ffn_kind == FfnKind::SwiGlu;
  std::vector<WeightGemm> gemms = {
      {"qkv", "qkv_dgrad", "qkv_wgrad", LayerPart::PreAttention, h, (heads + 2 * kv_heads) * head_dim, false},
      {"attention_output", "attention_output_dgrad", "attention_output_wgrad", LayerPart::PostAttention,
       heads * head_dim, h, false},
      {"ffn_up", "ffn_up_dgrad", "ffn_up_wgrad", LayerPart::PostAttention, h, gated ? 2 * f : f, false},
      {"ffn_down", "ffn_down_dgrad", "ffn_down_wgrad", LayerPart::PostAttention, f, h, false},
  };
  if (lm_head) {
    gemms.push_back({"lm_head", "lm_head_dgrad", "lm_head_wgrad", LayerPart::PostAttention, h,
                     ceil_div(model.vocab_size, tp), true});
  }
  return gemms;
}

void append_pass_gemms(std::vector<GemmShape>& gemms, const WeightGemm& w, std::uint64_t m, Pass pass,
                       std::uint32_t count) {
  if (m == 0 || w.in == 0 || w.out == 0 || count == 0) return;
  if (pass != Pass::Backward) {
    gemms.push_back(GemmShape{.m = m, .n = w.out, .k = w.in, .count = count, .name = w.forward});
  } else {
    gemms.push_back(GemmShape{.m = m, .n = w.in, .k = w.out, .count = count, .name = w.input_grad});
    gemms.push_back(GemmShape{.m = w.in, .n = w.out, .k = m, .count = count, .name = w.weight_grad});
  }
}

}  // namespace eppsim
