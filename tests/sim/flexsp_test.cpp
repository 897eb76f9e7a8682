#include "sim/plan/flexsp.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "models/memory_model.h"
#include "models/sequence_parallel_cost.h"
#include "sim/plan/ulysses.h"
#include "schedule/program_ops.h"
#include "scenario/scenario.h"
#include "test_scenarios.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

// `nodes` x 8 A100-80GB; `model` a preset; a flexsp plan with `extra_plan`.
ResolvedScenario scenario(std::uint32_t nodes, const std::string& model, std::uint32_t batch, std::uint64_t max_length,
                          const std::string& extra_plan = "", const std::string& lengths = "distribution: \"wikipedia\"",
                          const std::string& cost_model = "") {
  return testing::test_scenario(nodes, 8, fmt::format(R"(
    name: "flexsp-test"
    seed: 3
    model {{ preset: "{}" }}
    workload {{ lengths {{ {} }} global_batch: {} max_length: {} over_max_length: DROP }}
    plan {{ strategy: "flexsp" {} }}
    cost_model {{ {} }}
  )",
                                                      model, lengths, batch, max_length, extra_plan, cost_model),
                                "flexsp.textproto");
}

double simulate(const ResolvedScenario& sc, const proto::Schedule& schedule) {
  return static_cast<double>(testing::simulate_step_ns(sc, schedule)) * 1e-9;
}

void expect_valid(const FlexSpPlan& plan, std::size_t sequences, std::uint32_t gpus) {
  std::vector<int> seen(sequences, 0);
  for (const auto& mb : plan.micro_batches) {
    std::uint32_t sum = 0;
    std::uint32_t next_rank = 0;
    std::uint32_t previous = gpus;
    for (const auto& g : mb.groups) {
      EXPECT_EQ(g.degree & (g.degree - 1), 0u) << "power of two";
      EXPECT_GE(g.degree, 2u);
      EXPECT_LE(g.degree, previous) << "descending degree";
      EXPECT_EQ(g.first_rank, next_rank);
      EXPECT_EQ(g.first_rank % g.degree, 0u) << "aligned";
      EXPECT_FALSE(g.sequences.empty());
      previous = g.degree;
      next_rank += g.degree;
      sum += g.degree;
      for (auto i : g.sequences) ++seen[i];
    }
    EXPECT_EQ(sum, gpus);
  }
  for (std::size_t i = 0; i < sequences; ++i) EXPECT_EQ(seen[i], 1) << "sequence " << i;
}

TEST(FlexSp, EverySequenceOnceAndDegreesFillTheCluster) {
  const auto sc = scenario(2, "llama2-7b", 128, 32768);
  const auto lengths = sample_batch(sc);
  const auto plan = plan_flexsp(sc, resolve_flexsp_options(sc), lengths);
  ASSERT_FALSE(plan.micro_batches.empty());
  expect_valid(plan, lengths.size(), 16);
  EXPECT_GT(plan.step_time_s, 0.0);
  // Each micro-batch records how its MILP ended; a plan the MILP made is its solution.
  for (const auto& mb : plan.micro_batches) {
    EXPECT_NE(mb.solve, proto::SOLVE_STATUS_UNSPECIFIED);
    if (mb.solved_by_milp) {
      EXPECT_TRUE(mb.solve == proto::SOLVE_OPTIMAL || mb.solve == proto::SOLVE_FEASIBLE_AT_LIMIT) << mb.solve;
    }
  }
}

TEST(FlexSp, PresetModelOnSixtyFourGpus) {
  // GPT-7B (FlexSP's constants), 28 GB of each GPU, 512 Wikipedia sequences up to 192K.
  const auto sc = scenario(8, "gpt-6.7b", 512, 196608, "memory_fraction: 0.35", "distribution: \"wikipedia\"",
                           "flexsp_preset: \"gpt-7b\"");
  ASSERT_NE(sc.cost.flexsp_preset, nullptr);
  const auto lengths = sample_batch(sc);
  const auto plan = plan_flexsp(sc, resolve_flexsp_options(sc), lengths);
  expect_valid(plan, lengths.size(), 64);
  EXPECT_GE(plan.micro_batches.size(), 1u);
}

TEST(FlexSp, ScheduleRunsWithoutDeadlock) {
  const auto sc = scenario(2, "llama2-7b", 64, 16384);
  const auto lengths = sample_batch(sc);
  const auto schedule = make_planner("flexsp", sc)->plan(sc, lengths);
  EXPECT_EQ(schedule.num_ranks(), 16u);
  EXPECT_EQ(schedule.summary().sequences(), lengths.size());
  for (const auto& program : schedule.programs()) {
    bool has_shards = false;
    for (const OpView op : ops_of(program)) has_shards |= op.is_compute() && compute_of(schedule, op).shards() >= 2;
    EXPECT_TRUE(has_shards);
  }
  const double step = simulate(sc, schedule);
  EXPECT_GT(step, 0.0);
}

TEST(FlexSp, MixedBatchBeatsHomogeneousGroups) {
  // One 48K sequence and 63 of 1K on 16 GPUs. A homogeneous plan puts every
  // sequence in groups of the long one's degree; FlexSP may give the short ones
  // small intra-node groups.
  const auto sc = scenario(2, "llama2-7b", 64, 49152);
  std::vector<std::uint64_t> lengths(64, 1024);
  lengths[0] = 49152;
  const auto schedule = make_planner("flexsp", sc)->plan(sc, lengths);
  const double flexsp = simulate(sc, schedule);
  const auto plan = plan_flexsp(sc, resolve_flexsp_options(sc), lengths);
  expect_valid(plan, lengths.size(), 16);
  // Homogeneous plans: DeepSpeed-Ulysses at one degree for every group, from the
  // smallest that holds the long sequence up to a node.
  std::uint32_t d = 2;
  while (49152 > plan.token_capacity * d) d *= 2;
  for (std::uint32_t degree = d; degree <= 8; degree *= 2) {
    const auto homo_sc = scenario(2, "llama2-7b", 64, 49152, fmt::format("ulysses {{ sp_degree: {} }}", degree));
    const auto homogeneous = simulate(homo_sc, make_planner("ulysses", homo_sc)->plan(homo_sc, lengths));
    EXPECT_LE(flexsp, homogeneous) << "degree " << degree;
  }
}

TEST(FlexSp, TooLongSequenceIsAnInputError) {
  const auto sc = scenario(1, "llama2-7b", 4, 8192, "memory_fraction: 0.2");
  const std::vector<std::uint64_t> lengths{4'000'000};
  EXPECT_THROW(plan_flexsp(sc, resolve_flexsp_options(sc), lengths), InputError);
}

// Errors in plan.flexsp name the file, the line, the field, the rule and the
// --set that caused them.
TEST(FlexSp, OptionErrorsAreLocated) {
  const std::string text = testing::test_scenario_text(1, 8, R"(name: "f"
    model { preset: "llama2-7b" }
    workload { lengths { fixed: 4096 } global_batch: 8 max_length: 8192 }
    plan { strategy: "flexsp"
      flexsp { relative_gap: 1.5 }
    })");
  EXPECT_EQ(testing::planner_error(text),
            "s.textproto:6: plan.flexsp.relative_gap: must be in [0, 1) (0 means the default 0.01), got 1.5");
  EXPECT_EQ(testing::planner_error(text, {"plan.flexsp.relative_gap=0.05"}), "");
  EXPECT_EQ(testing::planner_error(text, {"plan.flexsp={max_buckets: 5000}"}),
            "s.textproto: plan.flexsp.max_buckets: must be <= 4096 (0 means the default 16), got 5000 (set by --set "
            "plan.flexsp={max_buckets: 5000})");
  EXPECT_EQ(testing::planner_error(text, {"plan.flexsp={}", "cluster.gpus_per_node=3"}),
            "s.textproto:9: cluster.nodes: flexsp needs an even number of GPUs (power-of-two SP groups), got 3");
  EXPECT_EQ(testing::planner_error(text, {"plan.flexsp={recomputed_mlp_fraction: 1.5}"}),
            "s.textproto: plan.flexsp.recomputed_mlp_fraction: must be in [0, 1], got 1.5 (set by --set "
            "plan.flexsp={recomputed_mlp_fraction: 1.5})");
}

// By default FlexSP recomputes as its released code does: the MLP block of 12
// of 32 layers on 32 GPUs or more, none below, none with a preset's measured
// constants (which hold the recomputation already).
TEST(FlexSp, RecomputesTheMlpOfThreeEighthsOfTheLayersOnThirtyTwoGpusOrMore) {
  EXPECT_EQ(resolve_flexsp_options(scenario(4, "llama2-7b", 64, 16384)).recomputed_mlp_layers, 12u);
  EXPECT_EQ(resolve_flexsp_options(scenario(4, "llama2-13b", 64, 16384)).recomputed_mlp_layers, 15u);  // 0.375 x 40
  EXPECT_EQ(resolve_flexsp_options(scenario(2, "llama2-7b", 64, 16384)).recomputed_mlp_layers, 0u);
  EXPECT_EQ(resolve_flexsp_options(scenario(4, "llama2-7b", 64, 16384, "flexsp { recomputed_mlp_fraction: 0 }"))
                .recomputed_mlp_layers,
            0u);
  EXPECT_EQ(resolve_flexsp_options(scenario(8, "gpt-6.7b", 64, 16384, "", "distribution: \"wikipedia\"",
                                            "flexsp_preset: \"gpt-7b\""))
                .recomputed_mlp_layers,
            0u);
}

// Checkpointed MLP blocks: less memory a token, so larger groups and fewer
// micro-batches; a RECOMPUTE op before each such layer's backward, on every
// rank, in every micro-batch.
TEST(FlexSp, RecomputedMlpLayersHoldMoreTokensAndRecompute) {
  const auto sc = scenario(2, "llama2-7b", 64, 16384);
  const auto lengths = sample_batch(sc);
  const auto recomputing_sc = scenario(2, "llama2-7b", 64, 16384, "flexsp { recomputed_mlp_fraction: 0.375 }");
  const FlexSpOptions options = resolve_flexsp_options(recomputing_sc);
  EXPECT_EQ(options.recomputed_mlp_layers, 12u);
  const Zero3Memory kept = zero3_memory(sc, false, options.zero3);
  const Zero3Memory recomputing = zero3_memory(sc, false, options.zero3, 12);
  EXPECT_NEAR(kept.activation_bytes_per_token - recomputing.activation_bytes_per_token,
              11 * mlp_checkpoint_saving_bytes_per_token_layer(sc.model), 1e-6);
  const auto plan = plan_flexsp(recomputing_sc, options, lengths);
  EXPECT_GT(plan.token_capacity, plan_flexsp(sc, resolve_flexsp_options(sc), lengths).token_capacity);
  const proto::Schedule schedule = make_planner("flexsp", recomputing_sc)->plan(recomputing_sc, lengths);
  std::uint32_t recomputes = 0;
  for (const OpView op : ops_of(schedule, 0)) {
    recomputes += op.is_compute() &&
                  schedule.shared_computes(static_cast<int>(op.shared_compute())).phase() == proto::RECOMPUTE;
  }
  EXPECT_EQ(recomputes, 12u * plan.micro_batches.size());
  EXPECT_GT(simulate(recomputing_sc, schedule), 0.0);
}

}  // namespace
}  // namespace eppsim

namespace eppsim {
namespace {

TEST(FlexSp, PlanningMemoryCapSetsTheGroupCapacities) {
  const auto sc = scenario(2, "llama2-7b", 64, 16384);
  const auto lengths = sample_batch(sc);
  const FlexSpOptions device = resolve_flexsp_options(sc);
  EXPECT_FALSE(device.planning_memory_cap);
  const auto capped_sc = scenario(2, "llama2-7b", 64, 16384, R"(flexsp { planning_memory_cap: "28GiB" })");
  const FlexSpOptions capped = resolve_flexsp_options(capped_sc);
  ASSERT_TRUE(capped.planning_memory_cap);
  EXPECT_EQ(capped.planning_memory_cap->count, 28ull << 30);
  EXPECT_EQ(flexsp_planning_limit(capped_sc, capped).count, 28ull << 30);
  EXPECT_EQ(flexsp_planning_limit(sc, device), sc.plan.memory_limit);
  // C = (limit - fixed) / bytes per token: the cap, not the 80 GB, sizes the groups.
  const Zero3Memory memory = zero3_memory(sc, false, device.zero3);
  const auto full = plan_flexsp(sc, device, lengths);
  const auto small = plan_flexsp(capped_sc, capped, lengths);
  EXPECT_EQ(full.token_capacity, memory.capacity(sc.plan.memory_limit.count, 1));
  EXPECT_EQ(small.token_capacity, memory.capacity(28ull << 30, 1));
  EXPECT_LT(small.token_capacity, full.token_capacity);
  expect_valid(small, lengths.size(), 16);
  EXPECT_GE(small.micro_batches.size(), full.micro_batches.size());
}

// Gathers (ALL_GATHER) of rank 0 that wait for nothing: the first d + 1 visits.
int gathers_without_deps(const proto::Schedule& schedule) {
  int free = 0;
  for (const OpView op : ops_of(schedule, 0)) {
    free += op.is_collective() && op.collective_kind() == proto::ALL_GATHER && op.deps().empty();
  }
  return free;
}

TEST(FlexSp, GathersAreOnDemandWhenThePrefetchDoesNotSurviveTheGroups) {
  const auto sc = scenario(2, "llama2-7b", 64, 16384);
  const auto lengths = sample_batch(sc);
  const auto prefetched = make_planner("flexsp", sc)->plan(sc, lengths);
  EXPECT_EQ(gathers_without_deps(prefetched), 2);  // depth 1: visits 0 and 1
  const auto ds_sc = scenario(2, "llama2-7b", 64, 16384, "zero3 { prefetch_survives_group_changes: false }");
  const auto on_demand = make_planner("flexsp", ds_sc)->plan(ds_sc, lengths);
  EXPECT_EQ(gathers_without_deps(on_demand), 1);  // depth 0: every later gather waits for the previous layer
  EXPECT_GT(simulate(ds_sc, on_demand), simulate(sc, prefetched));
  // ulysses keeps its static groups' prefetch whatever the option says.
  EXPECT_EQ(gathers_without_deps(make_planner("ulysses", ds_sc)->plan(ds_sc, lengths)), 2);
}

TEST(FlexSp, AllToAllEfficiencyEntersTheEstimates) {
  const auto sc = scenario(2, "llama2-7b", 64, 16384);
  const auto derated_sc = scenario(2, "llama2-7b", 64, 16384, "", "distribution: \"wikipedia\"",
                                   "all_to_all_efficiency { degree: 2 efficiency: 0.25 } "
                                   "all_to_all_efficiency { degree: 4 efficiency: 0.25 } "
                                   "all_to_all_efficiency { degree: 8 efficiency: 0.25 } "
                                   "all_to_all_efficiency { degree: 16 efficiency: 0.25 }");
  const std::vector<std::uint32_t> node{0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_NEAR(ulysses_layer_time(derated_sc.model, 16384, node, Pass::Forward, *derated_sc.cost.model).value,
              4.0 * ulysses_layer_time(sc.model, 16384, node, Pass::Forward, *sc.cost.model).value, 1e-12);
  const auto lengths = sample_batch(sc);
  EXPECT_GT(plan_flexsp(derated_sc, resolve_flexsp_options(derated_sc), lengths).step_time_s,
            plan_flexsp(sc, resolve_flexsp_options(sc), lengths).step_time_s);
}

}  // namespace
}  // namespace eppsim
