#pragma once
// Decoder-only transformer shapes, their parameter counts, and the presets.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace eppsim {

enum class FfnKind { SwiGlu, Gelu };

struct TransformerSpec {
  std::string name;
  std::uint32_t layers = 0;
  std::uint32_t hidden_size = 0;
  std::uint32_t attention_heads = 0;
  std::uint32_t kv_heads = 0;
  std::uint32_t ffn_hidden_size = 0;
  std::uint32_t vocab_size = 0;
  FfnKind ffn_kind = FfnKind::SwiGlu;
  std::uint64_t position_embeddings = 0;  // learned positions (GPT); 0 for rotary
  bool tied_embeddings = false;
  std::uint32_t bytes_per_element = 2;    // bf16

  // Parameter counts follow the family `ffn_kind` implies: SwiGlu is Llama (no
  // biases, RMSNorm), Gelu is GPT-2/Megatron GPT (biases, LayerNorm).
  std::uint32_t head_dim() const { return hidden_size / attention_heads; }
  std::uint32_t kv_dim() const { return kv_heads * head_dim(); }
  // Weights of one transformer layer (attention, FFN, norms).
  double params_per_layer() const;
  // Token embedding, position embedding, final norm and (untied) output head.
  double embedding_params() const;
  double total_params() const;
};

// llama2-7b, llama2-13b, llama-30b (= llama-33b), llama2-70b, llama3-8b, llama3-70b,
// gpt-6.7b (= gpt-7b), gpt-13b, gpt-30b (FlexSP's shapes; untied output head, and
// no position embeddings: a scenario sets `position_embeddings` to its maximum length).
std::span<const TransformerSpec> model_presets();
// Case-insensitive lookup, '_' read as '-'; nullptr when unknown.
const TransformerSpec* find_model_preset(std::string_view name);

}  // namespace eppsim
