#include "sim/plan/ulysses.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "schedule/compute_segments.h"
#include "schedule/program_ops.h"
#include "scenario/scenario.h"
#include "test_scenarios.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

// `nodes` x `gpus_per_node` A100-80GB, llama2-7b; `plan` is the plan block's body.
ResolvedScenario scenario(std::uint32_t nodes, std::uint32_t gpus_per_node, const std::string& plan) {
  return testing::test_scenario(nodes, gpus_per_node, fmt::format(R"(
    name: "ulysses-test"
    seed: 7
    model {{ preset: "llama2-7b" }}
    workload {{ lengths {{ fixed: 4096 }} global_batch: 16 max_length: 1048576 }}
    plan {{ {} }}
  )",
                                                                  plan),
                                "ulysses.textproto");
}

std::int64_t simulate(const ResolvedScenario& sc, const proto::Schedule& schedule) {
  return testing::simulate_step_ns(sc, schedule);
}

const std::vector<std::uint64_t> kBatch = {32768, 16384, 16384, 8192, 8192, 8192, 8192, 4096,
                                           4096,  4096,  4096,  4096, 4096, 2048, 2048, 1024};

std::uint64_t max_peak(const proto::Schedule& schedule) {
  const auto& peaks = schedule.summary().planned_peak_memory_bytes();
  return *std::max_element(peaks.begin(), peaks.end());
}

TEST(Ulysses, ShapeTokensAndEngineRun) {
  const auto sc = scenario(1, 8, R"(strategy: "ulysses" ulysses { sp_degree: 4 })");
  const auto schedule = make_planner("ulysses", sc)->plan(sc, kBatch);
  EXPECT_EQ(schedule.strategy(), "ulysses");
  EXPECT_EQ(schedule.num_ranks(), 8u);
  EXPECT_EQ(schedule.summary().data_parallel(), 2u);
  EXPECT_EQ(schedule.summary().pipeline_stages(), 1u);
  EXPECT_GT(schedule.summary().model_flops(), 0.0);
  const std::uint64_t total = std::accumulate(kBatch.begin(), kBatch.end(), std::uint64_t{0});
  EXPECT_EQ(schedule.summary().tokens(), total);
  // Tokens conserved: each group's first rank sees every token of the group once in a forward,
  // and every rank of a group sees the same tokens with shards = degree.
  std::uint64_t forward_tokens = 0;
  for (std::uint32_t r = 0; r < 8; ++r) {
    std::uint64_t rank_tokens = 0;
    for (const OpView op : ops_of(schedule, r)) {
      if (op.is_compute() && compute_of(schedule, op).phase() == proto::FORWARD && compute_of(schedule, op).first_layer() == 0 &&
          compute_of(schedule, op).layer_part() == proto::PRE_ATTENTION) {
        EXPECT_EQ(compute_of(schedule, op).shards(), 4u);
        ASSERT_EQ(compute_of(schedule, op).splits_size(), 1);
        EXPECT_EQ(compute_of(schedule, op).splits(0).kind(), proto::SEQUENCE_PARALLEL);
        rank_tokens += new_tokens_of(compute_of(schedule, op));
      }
    }
    if (r % 4 == 0) forward_tokens += rank_tokens;
  }
  EXPECT_EQ(forward_tokens, total);
  // Runs in the analytic engine without deadlock, and memory is within the limit.
  EXPECT_GT(simulate(sc, schedule), 0);
  EXPECT_LE(max_peak(schedule), sc.plan.memory_limit.count);
}

TEST(Ulysses, DefaultsRunAScenarioWrittenForAnotherStrategy) {
  // No ulysses block at all: sp_degree = gpus_per_node, packing_fill 0.9.
  const auto sc = scenario(2, 8, R"(strategy: "ulysses" zero_stage: 1 packed_1f1b { pipeline_stages: 2 micro_batch_tokens: 4096 })");
  EXPECT_EQ(resolve_ulysses_options(sc).sp_degree, 8u);
  const auto schedule = make_planner("ulysses", sc)->plan(sc, kBatch);
  EXPECT_EQ(schedule.summary().data_parallel(), 2u);
  EXPECT_GT(simulate(sc, schedule), 0);
}

TEST(Ulysses, FullRecomputeRunsAndKeepsLessMemory) {
  const auto plain_sc = scenario(1, 8, R"(strategy: "ulysses" ulysses { sp_degree: 8 })");
  const auto rc_sc = scenario(1, 8, R"(strategy: "ulysses" ulysses { sp_degree: 8 full_recompute: true })");
  const std::vector<std::uint64_t> one = {65536};
  const auto plain = make_planner("ulysses", plain_sc)->plan(plain_sc, one);
  const auto rc = make_planner("ulysses", rc_sc)->plan(rc_sc, one);
  EXPECT_LT(max_peak(rc), max_peak(plain));
  EXPECT_GT(ulysses_group_capacity(rc_sc, resolve_ulysses_adaptive_options(rc_sc), 8), ulysses_group_capacity(plain_sc, resolve_ulysses_adaptive_options(plain_sc), 8));
  EXPECT_GT(simulate(rc_sc, rc), simulate(plain_sc, plain));
  EXPECT_DOUBLE_EQ(rc.summary().model_flops(), plain.summary().model_flops());
}

TEST(Ulysses, LargerDegreeNeedsLessMemoryPerGpu) {
  const auto sc = scenario(1, 8, R"(strategy: "ulysses")");
  const std::vector<std::uint64_t> one = {8192};
  std::uint64_t previous = UINT64_MAX;
  for (std::uint32_t d : {1u, 2u, 4u, 8u}) {
    const auto schedule = plan_ulysses(sc, resolve_ulysses_adaptive_options(sc), one, d, "ulysses");
    EXPECT_LT(max_peak(schedule), previous) << "degree " << d;
    previous = max_peak(schedule);
    if (d > 1) {
      EXPECT_GT(ulysses_group_capacity(sc, resolve_ulysses_adaptive_options(sc), d), ulysses_group_capacity(sc, resolve_ulysses_adaptive_options(sc), d / 2));
    }
  }
}

TEST(UlyssesAdaptive, NoSlowerThanAnyStaticDegree) {
  const auto sc = scenario(1, 8, R"(strategy: "ulysses-adaptive")");
  for (const auto& batch : {kBatch, std::vector<std::uint64_t>(16, 2048), std::vector<std::uint64_t>{65536, 4096}}) {
    const auto adaptive = make_planner("ulysses-adaptive", sc)->plan(sc, batch);
    EXPECT_EQ(adaptive.strategy(), "ulysses-adaptive");
    EXPECT_THAT(adaptive.groups(2).name(), HasSubstr("sp_degree"));
    const auto adaptive_time = simulate(sc, adaptive);
    int fitted = 0;
    for (std::uint32_t d : {1u, 2u, 4u, 8u}) {
      try {
        const auto fixed = plan_ulysses(sc, resolve_ulysses_adaptive_options(sc), batch, d, "ulysses");
        ++fitted;
        EXPECT_LE(adaptive_time, simulate(sc, fixed)) << "degree " << d << ", batch of " << batch.size();
      } catch (const InputError&) {
      }
    }
    EXPECT_GT(fitted, 0);
  }
}

TEST(Ulysses, SequenceTooLongForTheGroup) {
  const auto sc = scenario(1, 8, R"(strategy: "ulysses" ulysses { sp_degree: 1 })");
  const std::uint64_t capacity = ulysses_group_capacity(sc, resolve_ulysses_adaptive_options(sc), 1);
  const std::vector<std::uint64_t> batch = {capacity + 1};
  try {
    make_planner("ulysses", sc)->plan(sc, batch);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(std::to_string(capacity + 1)));
    EXPECT_THAT(e.what(), HasSubstr("degree 1"));
    EXPECT_THAT(e.what(), HasSubstr(std::to_string(capacity)));
    EXPECT_THAT(e.what(), HasSubstr("sp_degree"));
  }
  // A larger degree holds it; adaptive finds one.
  EXPECT_NO_THROW(plan_ulysses(sc, resolve_ulysses_adaptive_options(sc), batch, 8, "ulysses"));
  EXPECT_NO_THROW(make_planner("ulysses-adaptive", sc)->plan(sc, batch));
}

TEST(Ulysses, ModelStatesAloneDoNotFit) {
  // 7B on one GPU: 16 bytes per parameter exceed 80 GB.
  const auto sc = scenario(1, 1, R"(strategy: "ulysses")");
  const std::vector<std::uint64_t> batch = {1024};
  EXPECT_THROW(make_planner("ulysses", sc)->plan(sc, batch), InputError);
  EXPECT_THROW(make_planner("ulysses-adaptive", sc)->plan(sc, batch), InputError);
}

TEST(Ulysses, DegreesMustDivideHeadsAndGpus) {
  // llama2-7b has 32 heads: 64 does not divide them.
  EXPECT_THROW(make_planner("ulysses", scenario(8, 8, R"(strategy: "ulysses" ulysses { sp_degree: 64 })")), InputError);
  const auto sc = scenario(8, 8, R"(strategy: "ulysses")");
  const std::vector<std::uint64_t> batch = {1024};
  try {
    plan_ulysses(sc, resolve_ulysses_adaptive_options(sc), batch, 64, "ulysses");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("heads"));
  }
  EXPECT_THROW(plan_ulysses(sc, resolve_ulysses_adaptive_options(sc), batch, 3, "ulysses"), InputError);
  EXPECT_THROW(make_planner("ulysses", scenario(1, 8, R"(strategy: "ulysses" ulysses { sp_degree: 3 })")), InputError);
  EXPECT_THROW(make_planner("ulysses", scenario(1, 8, R"(strategy: "ulysses" ulysses { packing_fill: 1.5 })")),
               InputError);
  EXPECT_THROW(make_planner("ulysses-adaptive", scenario(1, 8, R"(ulysses { packing_fill: 1.5 })")), InputError);
  // ulysses-adaptive chooses the degree: sp_degree is not its option.
  EXPECT_NO_THROW(make_planner("ulysses-adaptive", scenario(1, 8, R"(ulysses { sp_degree: 3 })")));
  // Adaptive skips 64 and picks a fitting degree.
  const auto adaptive = make_planner("ulysses-adaptive", sc)->plan(sc, batch);
  EXPECT_EQ(adaptive.num_ranks(), 64u);
}

// Errors in plan.ulysses name the file, the line, the field, the rule and the
// --set that caused them.
TEST(Ulysses, OptionErrorsAreLocated) {
  const std::string text = testing::test_scenario_text(1, 8, R"(name: "u"
    model { preset: "llama2-7b" }
    workload { lengths { fixed: 4096 } global_batch: 8 max_length: 8192 }
    plan { strategy: "ulysses"
      ulysses { sp_degree: 3 }
    })");
  EXPECT_EQ(testing::planner_error(text), "s.textproto:6: plan.ulysses.sp_degree: must be a power of two dividing the "
                                          "cluster's 8 GPUs (0 means gpus_per_node), got 3");
  EXPECT_EQ(testing::planner_error(text, {"plan.ulysses.sp_degree=4"}), "");
  EXPECT_EQ(testing::planner_error(text, {"plan.ulysses={packing_fill: 2}"}),
            "s.textproto: plan.ulysses.packing_fill: must be in (0, 1] (0 means the default 0.9), got 2 (set by --set "
            "plan.ulysses={packing_fill: 2})");
  EXPECT_EQ(testing::planner_error(text, {"plan.strategy=ulysses-adaptive"}), "");
}

}  // namespace
}  // namespace eppsim
