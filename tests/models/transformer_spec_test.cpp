#include "models/transformer_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

namespace eppsim {
namespace {

const TransformerSpec& preset(const char* name) {
  const TransformerSpec* model = find_model_preset(name);
  if (model == nullptr) throw std::runtime_error(std::string("no preset ") + name);
  return *model;
}

void expect_within(double actual, double expected, double relative, const char* what) {
  EXPECT_LE(std::fabs(actual / expected - 1.0), relative) << what << ": " << actual << " vs " << expected;
}

TEST(ModelPresets, PublishedShapes) {
  const TransformerSpec& l7 = preset("llama2-7b");
  EXPECT_EQ(l7.layers, 32u);
  EXPECT_EQ(l7.hidden_size, 4096u);
  EXPECT_EQ(l7.attention_heads, 32u);
  EXPECT_EQ(l7.kv_heads, 32u);
  EXPECT_EQ(l7.ffn_hidden_size, 11008u);
  EXPECT_EQ(l7.vocab_size, 32000u);
  EXPECT_EQ(l7.ffn_kind, FfnKind::SwiGlu);
  EXPECT_EQ(l7.head_dim(), 128u);

  const TransformerSpec& l70 = preset("llama2-70b");
  EXPECT_EQ(l70.kv_heads, 8u);
  EXPECT_EQ(l70.kv_dim(), 1024u);
  EXPECT_EQ(l70.ffn_hidden_size, 28672u);

  const TransformerSpec& l3 = preset("llama3-8b");
  EXPECT_EQ(l3.vocab_size, 128256u);
  EXPECT_EQ(l3.kv_heads, 8u);
  EXPECT_EQ(l3.ffn_hidden_size, 14336u);

  const TransformerSpec& l30 = preset("llama-30b");
  EXPECT_EQ(l30.layers, 60u);
  EXPECT_EQ(l30.hidden_size, 6656u);
  EXPECT_EQ(l30.attention_heads, 52u);
  EXPECT_EQ(l30.ffn_hidden_size, 17920u);

  // FlexSP's GPT shapes: heads x head_dim 64x64, 64x80, 64x104.
  const TransformerSpec& g7 = preset("gpt-6.7b");
  EXPECT_EQ(g7.layers, 32u);
  EXPECT_EQ(g7.attention_heads, 64u);
  EXPECT_EQ(g7.head_dim(), 64u);
  EXPECT_EQ(g7.ffn_hidden_size, 16384u);
  EXPECT_EQ(g7.ffn_kind, FfnKind::Gelu);
  EXPECT_EQ(g7.vocab_size, 50257u);
  EXPECT_EQ(g7.position_embeddings, 0u);  // a scenario sets its maximum length
  EXPECT_EQ(preset("gpt-13b").head_dim(), 80u);
  EXPECT_EQ(preset("gpt-13b").layers, 40u);
  EXPECT_EQ(preset("gpt-30b").head_dim(), 104u);
  EXPECT_EQ(preset("gpt-30b").layers, 60u);
}

TEST(ModelPresets, Llama2_7bParameterCountIsExact) {
  const TransformerSpec& m = preset("llama2-7b");
  // attention 4*h^2, SwiGLU 3*h*f, two RMSNorms of h.
  EXPECT_DOUBLE_EQ(m.params_per_layer(), 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2.0 * 4096);
  // token embedding + untied output head + final norm.
  EXPECT_DOUBLE_EQ(m.embedding_params(), 2.0 * 32000 * 4096 + 4096);
  EXPECT_DOUBLE_EQ(m.total_params(), 6'738'415'616.0);  // the published count
}

TEST(ModelPresets, LlamaTotalsMatchPublishedSizes) {
  expect_within(preset("llama2-7b").total_params(), 6.74e9, 0.01, "llama2-7b");
  expect_within(preset("llama2-13b").total_params(), 13.0e9, 0.01, "llama2-13b");
  expect_within(preset("llama-30b").total_params(), 32.5e9, 0.01, "llama-30b");
  expect_within(preset("llama2-70b").total_params(), 68.98e9, 0.01, "llama2-70b");
  expect_within(preset("llama3-8b").total_params(), 8.03e9, 0.01, "llama3-8b");
  expect_within(preset("llama3-70b").total_params(), 70.6e9, 0.01, "llama3-70b");
}

TEST(ModelPresets, GqaShrinksKeyAndValueProjections) {
  const TransformerSpec& m = preset("llama3-8b");
  const double h = 4096, kv = 1024, f = 14336;
  EXPECT_DOUBLE_EQ(m.params_per_layer(), 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h);
}

TEST(ModelPresets, GptCountsBiasesAndLayerNorms) {
  const TransformerSpec& m = preset("gpt-6.7b");
  const double h = 4096, f = 16384;
  const double attention = 4 * h * h + 4 * h;  // QKV and output weights and biases
  const double ffn = 2 * h * f + f + h;
  const double norms = 2 * 2 * h;
  EXPECT_DOUBLE_EQ(m.params_per_layer(), attention + ffn + norms);
  EXPECT_DOUBLE_EQ(m.embedding_params(), 2 * 50257 * h + 2 * h);
}

// FlexSP reports parameter counts (in units of 2^30) at its maximum lengths of 192K
// and 384K (192,000 and 384,000 learned positions).
TEST(ModelPresets, GptMatchesFlexSpCountsWithPositionEmbeddings) {
  struct Case {
    const char* name;
    double at_192k;
    double at_384k;
  };
  for (const Case& c : {Case{"gpt-6.7b", 7.12, 7.85}, Case{"gpt-13b", 13.12, 14.03}, Case{"gpt-30b", 31.53, 32.72}}) {
    TransformerSpec m = preset(c.name);
    m.position_embeddings = 192'000;
    expect_within(m.total_params() / std::pow(2.0, 30), c.at_192k, 0.005, c.name);
    m.position_embeddings = 384'000;
    expect_within(m.total_params() / std::pow(2.0, 30), c.at_384k, 0.005, c.name);
  }
  // In plain billions, gpt-7b at 192K positions is within a few percent of "7.12B" too.
  TransformerSpec g7 = preset("gpt-7b");
  g7.position_embeddings = 192 * 1024;
  expect_within(g7.total_params(), 7.12e9, 0.08, "gpt-7b in 1e9");
}

TEST(ModelPresets, GptSizesNearTheirNames) {
  expect_within(preset("gpt-6.7b").total_params(), 6.7e9, 0.05, "gpt-6.7b");
  expect_within(preset("gpt-13b").total_params(), 13e9, 0.05, "gpt-13b");
  expect_within(preset("gpt-30b").total_params(), 30e9, 0.10, "gpt-30b");
}

TEST(ModelPresets, TiedEmbeddingsDropTheHead) {
  TransformerSpec m = preset("llama2-7b");
  const double untied = m.total_params();
  m.tied_embeddings = true;
  EXPECT_DOUBLE_EQ(untied - m.total_params(), 32000.0 * 4096);
}

TEST(ModelPresets, LookupIsCaseInsensitiveWithAliases) {
  EXPECT_EQ(find_model_preset("LLAMA2-7B"), find_model_preset("llama2-7b"));
  EXPECT_EQ(find_model_preset("llama2_7b"), find_model_preset("llama2-7b"));
  ASSERT_NE(find_model_preset("llama-33b"), nullptr);
  EXPECT_EQ(find_model_preset("llama-33b")->name, "llama-30b");
  ASSERT_NE(find_model_preset("GPT_7B"), nullptr);
  EXPECT_EQ(find_model_preset("GPT_7B")->name, "gpt-6.7b");
  EXPECT_EQ(find_model_preset("gpt-175b"), nullptr);
  EXPECT_EQ(find_model_preset(""), nullptr);
}

TEST(ModelPresets, NamesAreUniqueAndFindable) {
  std::set<std::string> names;
  for (const TransformerSpec& m : model_presets()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_EQ(find_model_preset(m.name), &m);
    EXPECT_EQ(m.hidden_size % m.attention_heads, 0u) << m.name;
    EXPECT_EQ(m.attention_heads % m.kv_heads, 0u) << m.name;
    EXPECT_EQ(m.bytes_per_element, 2u) << m.name;
  }
  EXPECT_GE(names.size(), 9u);
}

}  // namespace
}  // namespace eppsim
