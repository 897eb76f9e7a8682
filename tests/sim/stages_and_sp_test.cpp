#include "sim/plan/stages_and_sp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "test_scenarios.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

// `nodes` x 4 A100-80GB, llama2-7b (32 layers, 32 heads, 32 KV heads).
ResolvedScenario scenario(std::uint32_t nodes) {
  return testing::test_scenario(nodes, 4, R"(
    name: "layout"
    model { preset: "llama2-7b" }
    workload { lengths { fixed: 1024 } global_batch: 8 max_length: 4096 }
    plan { strategy: "epp" }
  )");
}

std::string error_of(const ResolvedScenario& sc, std::uint32_t stages, std::uint32_t sp) {
  try {
    resolve_stages_and_sp(sc, "plan.seq1f1b", stages, sp);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(StagesAndSp, DefaultsAreOneStagePerNodeAndSpOverANode) {
  const auto sc = scenario(4);
  const StagesAndSp layout = resolve_stages_and_sp(sc, "plan.epp", 0, 0);
  EXPECT_EQ(layout.pipeline_stages, 4u);
  EXPECT_EQ(layout.sp_degree, 4u);
  EXPECT_EQ(layout.data_parallel, 1u);
  const StagesAndSp two = resolve_stages_and_sp(sc, "plan.epp", 2, 2);
  EXPECT_EQ(two.data_parallel, 4u);
}

TEST(StagesAndSp, EachRuleNamesTheStrategysField) {
  const auto sc = scenario(2);
  EXPECT_THAT(error_of(sc, 0, 3),
              HasSubstr("plan.seq1f1b.sp_degree: must divide cluster.gpus_per_node 4 (SP stays inside a node), got 3"));
  EXPECT_THAT(error_of(sc, 0, 8), HasSubstr("plan.seq1f1b.sp_degree: must divide cluster.gpus_per_node 4"));
  EXPECT_THAT(error_of(sc, 64, 1), HasSubstr("plan.seq1f1b.pipeline_stages: must be <= the model's 32 layers, got 64"));
  EXPECT_THAT(error_of(sc, 3, 1),
              HasSubstr("plan.seq1f1b.pipeline_stages: pipeline_stages x sp_degree (3 x 1) must divide the 8 GPUs"));
  EXPECT_EQ(error_of(sc, 8, 1), "");
}

TEST(StagesAndSp, SpMustDivideTheHeads) {
  const auto sc = testing::test_scenario(1, 8, R"(
    name: "heads"
    model { layers: 4 hidden_size: 768 attention_heads: 12 kv_heads: 12 ffn_hidden_size: 3072 vocab_size: 32000 }
    workload { lengths { fixed: 1024 } global_batch: 8 max_length: 4096 }
    plan { strategy: "epp" }
  )");
  EXPECT_THAT(error_of(sc, 1, 8),
              HasSubstr("plan.seq1f1b.sp_degree: must divide the model's 12 attention heads and 12 KV heads, got 8"));
  EXPECT_EQ(resolve_stages_and_sp(sc, "plan.epp", 2, 4).data_parallel, 1u);
}

}  // namespace
}  // namespace eppsim
