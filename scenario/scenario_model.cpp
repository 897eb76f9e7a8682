#include "scenario/scenario_parts.h"

#include <span>
#include <utility>

namespace eppsim::scenario_parts {
namespace {

std::string preset_names(std::span<const TransformerSpec> presets) {
  return join_names(presets, [](const TransformerSpec& s) { return s.name; });
}

}  // namespace

TransformerSpec resolve_model(const proto::Model& m, const FieldLocator& where) {
  TransformerSpec spec;
  const bool has_preset = !m.preset().empty();
  if (has_preset) {
    const TransformerSpec* preset = find_model_preset(m.preset());
    if (preset == nullptr)
      where.fail("model.preset", fmt::format("unknown preset {} (known: {})", quote_string(m.preset()),
                                             preset_names(model_presets())));
    spec = *preset;
  } else {
    spec.name = "custom";
    const std::pair<std::string_view, std::uint32_t> required[] = {
        {"model.layers", m.layers()},
        {"model.hidden_size", m.hidden_size()},
        {"model.attention_heads", m.attention_heads()},
        {"model.ffn_hidden_size", m.ffn_hidden_size()},
        {"model.vocab_size", m.vocab_size()},
    };
    for (const auto& [path, value] : required) {
      if (value == 0)
        where.fail(path, fmt::format("must be > 0 when model.preset is not set (known presets: {}), got 0",
                                     preset_names(model_presets())));
    }
    spec.kv_heads = m.attention_heads();  // multi-head attention unless kv_heads says otherwise
  }
  if (m.layers() != 0) spec.layers = m.layers();
  if (m.hidden_size() != 0) spec.hidden_size = m.hidden_size();
  if (m.attention_heads() != 0) spec.attention_heads = m.attention_heads();
  if (m.kv_heads() != 0) spec.kv_heads = m.kv_heads();
  if (m.ffn_hidden_size() != 0) spec.ffn_hidden_size = m.ffn_hidden_size();
  if (m.vocab_size() != 0) spec.vocab_size = m.vocab_size();
  switch (m.ffn_kind()) {
    case proto::FFN_KIND_UNSPECIFIED: break;
    case proto::SWIGLU: spec.ffn_kind = FfnKind::SwiGlu; break;
    case proto::GELU: spec.ffn_kind = FfnKind::Gelu; break;
    default: where.fail("model.ffn_kind", fmt::format("unknown value {} (known: SWIGLU, GELU)", static_cast<int>(m.ffn_kind())));
  }
  if (m.position_embeddings() != 0) spec.position_embeddings = m.position_embeddings();
  if (m.tied_embeddings()) spec.tied_embeddings = true;
  if (m.bytes_per_element() != 0) {
    if (m.bytes_per_element() != 1 && m.bytes_per_element() != 2 && m.bytes_per_element() != 4)
      where.fail("model.bytes_per_element", fmt::format("must be 1, 2 or 4 (0 means 2), got {}", m.bytes_per_element()));
    spec.bytes_per_element = m.bytes_per_element();
  }
  require_at_most(where, "model.layers", spec.layers, limits::kMaxLayers);
  require_at_most(where, "model.hidden_size", spec.hidden_size, limits::kMaxHiddenSize);
  require_at_most(where, "model.attention_heads", spec.attention_heads, limits::kMaxAttentionHeads);
  require_at_most(where, "model.kv_heads", spec.kv_heads, limits::kMaxAttentionHeads);
  require_at_most(where, "model.ffn_hidden_size", spec.ffn_hidden_size, limits::kMaxFfnHiddenSize);
  require_at_most(where, "model.vocab_size", spec.vocab_size, limits::kMaxVocabSize);
  require_at_most(where, "model.position_embeddings", spec.position_embeddings, limits::kMaxSequenceTokens);
  if (spec.attention_heads == 0) where.fail("model.attention_heads", "must be > 0, got 0");
  if (spec.kv_heads == 0) where.fail("model.kv_heads", "must be > 0, got 0");
  if (spec.hidden_size % spec.attention_heads != 0)
    where.fail("model.hidden_size", fmt::format("must be divisible by model.attention_heads ({}), got {}",
                                                spec.attention_heads, spec.hidden_size));
  if (spec.attention_heads % spec.kv_heads != 0)
    where.fail("model.kv_heads", fmt::format("must divide model.attention_heads ({}), got {}", spec.attention_heads,
                                             spec.kv_heads));
  return spec;
}

}  // namespace eppsim::scenario_parts
