#include "schedule/model_shape.h"

#include <fmt/format.h>

#include "base/errors.h"

namespace eppsim {

proto::ModelShape to_model_shape(const TransformerSpec& model) {
  proto::ModelShape shape;
  shape.set_name(model.name);
  shape.set_layers(model.layers);
  shape.set_hidden_size(model.hidden_size);
  shape.set_attention_heads(model.attention_heads);
  shape.set_kv_heads(model.kv_heads);
  shape.set_ffn_hidden_size(model.ffn_hidden_size);
  shape.set_vocab_size(model.vocab_size);
  shape.set_gated_ffn(model.ffn_kind == FfnKind::SwiGlu);
  shape.set_position_embeddings(model.position_embeddings);
  shape.set_tied_embeddings(model.tied_embeddings);
  shape.set_bytes_per_element(model.bytes_per_element);
  return shape;
}

TransformerSpec from_model_shape(const proto::ModelShape& shape, std::string_view where) {
  auto require_positive = [&](std::string_view field, std::uint64_t value) {
    if (value == 0) throw InputError(fmt::format("{}: header.model.{}: must be > 0, got 0", where, field));
  };
  require_positive("layers", shape.layers());
  require_positive("hidden_size", shape.hidden_size());
  require_positive("attention_heads", shape.attention_heads());
  require_positive("kv_heads", shape.kv_heads());
  require_positive("ffn_hidden_size", shape.ffn_hidden_size());
  require_positive("vocab_size", shape.vocab_size());
  require_positive("bytes_per_element", shape.bytes_per_element());
  if (shape.hidden_size() % shape.attention_heads() != 0) {
    throw InputError(fmt::format("{}: header.model.hidden_size: must be a multiple of the {} attention heads, got {}",
                                 where, shape.attention_heads(), shape.hidden_size()));
  }
  if (shape.attention_heads() % shape.kv_heads() != 0) {
    throw InputError(fmt::format("{}: header.model.kv_heads: must divide the {} attention heads, got {}", where,
                                 shape.attention_heads(), shape.kv_heads()));
  }
  TransformerSpec model;
  model.name = shape.name();
  model.layers = shape.layers();
  model.hidden_size = shape.hidden_size();
  model.attention_heads = shape.attention_heads();
  model.kv_heads = shape.kv_heads();
  model.ffn_hidden_size = shape.ffn_hidden_size();
  model.vocab_size = shape.vocab_size();
  model.ffn_kind = shape.gated_ffn() ? FfnKind::SwiGlu : FfnKind::Gelu;
  model.position_embeddings = shape.position_embeddings();
  model.tied_embeddings = shape.tied_embeddings();
  model.bytes_per_element = shape.bytes_per_element();
  return model;
}

proto::Model to_scenario_model(const TransformerSpec& model) {
  proto::Model m;
  m.set_layers(model.layers);
  m.set_hidden_size(model.hidden_size);
  m.set_attention_heads(model.attention_heads);
  m.set_kv_heads(model.kv_heads);
  m.set_ffn_hidden_size(model.ffn_hidden_size);
  m.set_vocab_size(model.vocab_size);
  m.set_ffn_kind(model.ffn_kind == FfnKind::SwiGlu ? proto::SWIGLU : proto::GELU);
  m.set_position_embeddings(model.position_embeddings);
  m.set_tied_embeddings(model.tied_embeddings);
  m.set_bytes_per_element(model.bytes_per_element);
  return m;
}

}  // namespace eppsim
