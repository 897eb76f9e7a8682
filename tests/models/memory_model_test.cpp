#include "models/memory_model.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace eppsim {
namespace {

const TransformerSpec& preset(const char* name) { return *find_model_preset(name); }

TEST(ModelStateBytes, ZeroStagesShardProgressively) {
  const double p = 1e9;
  const std::uint32_t d = 8;
  const ModelStateBytes z0 = model_state_bytes(p, 0, d);
  EXPECT_EQ(z0.weights, Bytes(2'000'000'000));
  EXPECT_EQ(z0.gradients, Bytes(2'000'000'000));
  EXPECT_EQ(z0.optimizer, Bytes(12'000'000'000));
  EXPECT_EQ(z0.total(), Bytes(16'000'000'000));

  const ModelStateBytes z1 = model_state_bytes(p, 1, d);  // 2 + 2 + 12/d
  EXPECT_EQ(z1.weights, Bytes(2'000'000'000));
  EXPECT_EQ(z1.gradients, Bytes(2'000'000'000));
  EXPECT_EQ(z1.optimizer, Bytes(1'500'000'000));

  const ModelStateBytes z2 = model_state_bytes(p, 2, d);  // 2 + (2 + 12)/d
  EXPECT_EQ(z2.weights, Bytes(2'000'000'000));
  EXPECT_EQ(z2.gradients, Bytes(250'000'000));
  EXPECT_EQ(z2.optimizer, Bytes(1'500'000'000));
  EXPECT_EQ(z2.total(), Bytes(3'750'000'000));

  const ModelStateBytes z3 = model_state_bytes(p, 3, d);  // (2 + 2 + 12)/d
  EXPECT_EQ(z3.weights, Bytes(250'000'000));
  EXPECT_EQ(z3.gradients, Bytes(250'000'000));
  EXPECT_EQ(z3.optimizer, Bytes(1'500'000'000));
  EXPECT_EQ(z3.total(), Bytes(2'000'000'000));
}

TEST(ModelStateBytes, OneReplicaShardsNothing) {
  for (std::uint32_t stage = 0; stage <= 3; ++stage) {
    EXPECT_EQ(model_state_bytes(7e9, stage, 1).total(), Bytes(112'000'000'000)) << stage;
  }
}

TEST(ModelStateBytes, RoundsToTheNearestByte) {
  const ModelStateBytes z3 = model_state_bytes(10, 3, 3);  // 20/3, 20/3, 120/3
  EXPECT_EQ(z3.weights, Bytes(7));
  EXPECT_EQ(z3.optimizer, Bytes(40));
}

TEST(ModelStateBytes, RejectsBadInput) {
  EXPECT_THROW(model_state_bytes(1e9, 4, 8), InputError);
  EXPECT_THROW(model_state_bytes(1e9, 3, 0), InputError);
  EXPECT_THROW(model_state_bytes(-1.0, 3, 8), InputError);
}

TEST(ActivationBytes, Llama2_7bPerTokenAndLayer) {
  // e * (6h + 2*kv_dim + 3f) + 4*heads with h = kv_dim = 4096, f = 11008.
  EXPECT_DOUBLE_EQ(activation_bytes_per_token_layer(preset("llama2-7b")),
                   2.0 * (6 * 4096 + 2 * 4096 + 3 * 11008) + 4 * 32);
}

TEST(ActivationBytes, GroupedQueryAttentionKeepsSmallerKeysAndValues) {
  EXPECT_DOUBLE_EQ(activation_bytes_per_token_layer(preset("llama3-8b")),
                   2.0 * (6 * 4096 + 2 * 1024 + 3 * 14336) + 4 * 32);
}

TEST(ActivationBytes, GeluKeepsTwoFfnTensors) {
  EXPECT_DOUBLE_EQ(activation_bytes_per_token_layer(preset("gpt-6.7b")),
                   2.0 * (6 * 4096 + 2 * 4096 + 2 * 16384) + 4 * 64);
}

TEST(ActivationBytes, LogitsAreFp32OverTheVocabulary) {
  EXPECT_DOUBLE_EQ(logits_bytes_per_token(preset("llama3-8b")), 4.0 * 128256);
}

TEST(StageActivationBytes, WithAndWithoutRecompute) {
  const TransformerSpec& m = preset("llama2-7b");
  const std::uint64_t a = 2 * (6 * 4096 + 2 * 4096 + 3 * 11008) + 4 * 32;
  EXPECT_EQ(stage_activation_bytes(m, 1000, 8, false, false), Bytes(1000 * 8 * a));
  EXPECT_EQ(stage_activation_bytes(m, 1000, 8, true, false), Bytes(1000 * (8 * a + 4 * 32000)));
  EXPECT_EQ(stage_activation_bytes(m, 1000, 8, false, true), Bytes(1000 * 8 * 2 * 4096));
  EXPECT_EQ(stage_activation_bytes(m, 1000, 8, true, true), Bytes(1000 * (8 * 2 * 4096 + 4 * 32000)));
  EXPECT_EQ(stage_activation_bytes(m, 0, 8, true, false), Bytes(0));
}

TEST(BackwardWorkspaceBytes, OneLayerFullSetUnderRecompute) {
  const TransformerSpec& m = preset("llama2-7b");
  const std::uint64_t a = 2 * (6 * 4096 + 2 * 4096 + 3 * 11008) + 4 * 32;
  EXPECT_EQ(backward_workspace_bytes(m, 4096, true), Bytes(4096 * a));
  EXPECT_EQ(backward_workspace_bytes(m, 4096, false), Bytes(0));
}

// Llama-2 7B (SwiGLU, h 4096, f 11008, bf16): the FFN's set but its input,
// 2 * (4096 + 3 * 11008) bytes a token.
TEST(MlpCheckpoint, SavesTheFfnSetButItsInput) {
  EXPECT_DOUBLE_EQ(mlp_checkpoint_saving_bytes_per_token_layer(preset("llama2-7b")), 2.0 * (4096 + 3 * 11008));
  EXPECT_LT(mlp_checkpoint_saving_bytes_per_token_layer(preset("llama2-7b")),
            activation_bytes_per_token_layer(preset("llama2-7b")));
}

}  // namespace
}  // namespace eppsim
