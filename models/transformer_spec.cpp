#include "models/transformer_spec.h"
#include "models/preset_name.h"

#include <array>
#include <cctype>

namespace eppsim {

// Parameter counts follow the two families the presets come from, told apart by
// `ffn_kind`:
//   SwiGLU (Llama): no biases; RMSNorm with a scale of h per norm.
//   GELU (GPT-2 / Megatron GPT): biases on every linear layer; LayerNorm with a
//     scale and a bias of h each.
// Per layer: Q and O are h x h, K and V are h x kv_dim; the FFN is 3*h*f (gate, up,
// down) for SwiGLU and 2*h*f for GELU; two norms (before attention and FFN).
double TransformerSpec::params_per_layer() const {
  const double h = hidden_size;
  const double kv = kv_dim();
  const double f = ffn_hidden_size;
  const bool gpt = ffn_kind == FfnKind::Gelu;
  const double attention = 2.0 * h * h + 2.0 * h * kv + (gpt ? h + 2.0 * kv + h : 0.0);
  const double ffn = gpt ? 2.0 * h * f + f + h : 3.0 * h * f;
  const double norms = 2.0 * (gpt ? 2.0 * h : h);
  return attention + ffn + norms;
}

double TransformerSpec::embedding_params() const {
  const double h = hidden_size;
  const double token = static_cast<double>(vocab_size) * h;
  const double positions = static_cast<double>(position_embeddings) * h;
  const double final_norm = ffn_kind == FfnKind::Gelu ? 2.0 * h : h;
  const double head = tied_embeddings ? 0.0 : token;
  return token + positions + final_norm + head;
}

double TransformerSpec::total_params() const { return layers * params_per_layer() + embedding_params(); }

namespace {

TransformerSpec llama(std::string name, std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads,
                      std::uint32_t kv_heads, std::uint32_t ffn, std::uint32_t vocab) {
  return TransformerSpec{.name = std::move(name),
                         .layers = layers,
                         .hidden_size = hidden,
                         .attention_heads = heads,
                         .kv_heads = kv_heads,
                         .ffn_hidden_size = ffn,
                         .vocab_size = vocab,
                         .ffn_kind = FfnKind::SwiGlu,
                         .position_embeddings = 0,
                         .tied_embeddings = false};
}

// FlexSP's GPT models (GPT-2 architecture, vocabulary 50257, 64 heads). Their learned
// position embeddings grow with the maximum sequence length, so the presets carry none
// and a scenario sets `position_embeddings` to its maximum length. The output head is
// counted untied, as FlexSP counts it: with 192,000 positions gpt-6.7b has 7.12 * 2^30
// parameters, FlexSP's "7.12B" (its figures are in units of 2^30).
TransformerSpec gpt(std::string name, std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads,
                    std::uint32_t ffn) {
  return TransformerSpec{.name = std::move(name),
                         .layers = layers,
                         .hidden_size = hidden,
                         .attention_heads = heads,
                         .kv_heads = heads,
                         .ffn_hidden_size = ffn,
                         .vocab_size = 50257,
                         .ffn_kind = FfnKind::Gelu,
                         .position_embeddings = 0,
                         .tied_embeddings = false};
}

const std::array<TransformerSpec, 9>& presets() {
  static const std::array<TransformerSpec, 9> table = {
      // Llama 2 (Touvron et al. 2023) and Llama 3 (Meta, 2024): the models' published configs.
      llama("llama2-7b", 32, 4096, 32, 32, 11008, 32000),
      llama("llama2-13b", 40, 5120, 40, 40, 13824, 32000),
      llama("llama-30b", 60, 6656, 52, 52, 17920, 32000),  // LLaMA 1 "33B"
      llama("llama2-70b", 80, 8192, 64, 8, 28672, 32000),
      llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256),
      llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256),
      // FlexSP's gpt-7b, gpt-13b, gpt-30b (heads x head_dim 64x64, 64x80, 64x104; FFN 4h).
      gpt("gpt-6.7b", 32, 4096, 64, 16384),
      gpt("gpt-13b", 40, 5120, 64, 20480),
      gpt("gpt-30b", 60, 6656, 64, 26624),
  };
  return table;
}

struct Alias {
  std::string_view alias;
  std::string_view name;
};
constexpr std::array kAliases = {
    Alias{"llama-33b", "llama-30b"},
    Alias{"gpt-7b", "gpt-6.7b"},
};


}  // namespace

std::span<const TransformerSpec> model_presets() { return presets(); }

const TransformerSpec* find_model_preset(std::string_view name) {
  std::string key = normalize_preset_name(name);
  for (const Alias& a : kAliases) {
    if (a.alias == key) key = a.name;
  }
  for (const TransformerSpec& model : presets()) {
    if (normalize_preset_name(model.name) == key) return &model;
  }
  return nullptr;
}

}  // namespace eppsim
