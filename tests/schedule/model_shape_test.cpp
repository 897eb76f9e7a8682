#include "schedule/model_shape.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace eppsim {
namespace {

void expect_same(const TransformerSpec& a, const TransformerSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.layers, b.layers);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.attention_heads, b.attention_heads);
  EXPECT_EQ(a.kv_heads, b.kv_heads);
  EXPECT_EQ(a.ffn_hidden_size, b.ffn_hidden_size);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.ffn_kind, b.ffn_kind);
  EXPECT_EQ(a.position_embeddings, b.position_embeddings);
  EXPECT_EQ(a.tied_embeddings, b.tied_embeddings);
  EXPECT_EQ(a.bytes_per_element, b.bytes_per_element);
  EXPECT_DOUBLE_EQ(a.total_params(), b.total_params());
}

TEST(ModelShape, EveryPresetRoundTrips) {
  for (const TransformerSpec& preset : model_presets()) {
    SCOPED_TRACE(preset.name);
    expect_same(from_model_shape(to_model_shape(preset), "test.pb"), preset);
  }
}

TEST(ModelShape, CarriesGptFeatures) {
  TransformerSpec gpt = *find_model_preset("gpt-13b");
  gpt.position_embeddings = 196608;
  gpt.tied_embeddings = true;
  gpt.bytes_per_element = 4;
  const proto::ModelShape shape = to_model_shape(gpt);
  EXPECT_FALSE(shape.gated_ffn());
  EXPECT_EQ(shape.position_embeddings(), 196608u);
  expect_same(from_model_shape(shape, "test.pb"), gpt);
  EXPECT_TRUE(to_model_shape(*find_model_preset("llama2-7b")).gated_ffn());
}

TEST(ModelShape, RejectsShapesThatAreNoTransformer) {
  const proto::ModelShape good = to_model_shape(*find_model_preset("llama3-8b"));
  auto message = [&](auto mutate) {
    proto::ModelShape shape = good;
    mutate(shape);
    try {
      from_model_shape(shape, "plan.pb");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([](proto::ModelShape& s) { s.set_layers(0); }), "plan.pb: header.model.layers: must be > 0, got 0");
  EXPECT_EQ(message([](proto::ModelShape& s) { s.set_bytes_per_element(0); }),
            "plan.pb: header.model.bytes_per_element: must be > 0, got 0");
  EXPECT_EQ(message([](proto::ModelShape& s) { s.set_hidden_size(4097); }),
            "plan.pb: header.model.hidden_size: must be a multiple of the 32 attention heads, got 4097");
  EXPECT_EQ(message([](proto::ModelShape& s) { s.set_kv_heads(5); }),
            "plan.pb: header.model.kv_heads: must divide the 32 attention heads, got 5");
  EXPECT_EQ(message([](proto::ModelShape&) {}), "no error");
}

}  // namespace
}  // namespace eppsim
