#include "sim/plan/epp.h"

#include <algorithm>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "sim/run.h"
#include "schedule/compute_segments.h"
#include "schedule/identical_replicas.h"
#include "schedule/schedule_validation.h"
#include "schedule/program_ops.h"
#include "scenario/scenario.h"
#include "test_scenarios.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

// 2 nodes x 4 A100-80GB, llama2-7b, the long-tailed mix up to 32K; `fraction`
// of the memory usable.
ResolvedScenario scenario(const std::string& strategy, double fraction, const std::string& intra = "300GB/s",
                          const std::string& distribution = "longtail", std::uint32_t nodes = 2) {
  return testing::test_scenario(nodes, 4, fmt::format(R"(
    name: "epp-test"
    seed: 5
    model {{ preset: "llama2-7b" }}
    workload {{ lengths {{ distribution: "{}" }} global_batch: 48 max_length: 32768 }}
    plan {{ strategy: "{}" zero_stage: 1 memory_fraction: {} epp {{ pipeline_stages: 2 sp_degree: 4 }} }}
  )",
                                                      distribution, strategy, fraction),
                                "epp.textproto", intra);
}

struct Run {
  proto::Schedule schedule;
  double step_s = 0.0;
  double recompute_s = 0.0;
};

Run run(const std::string& strategy, double fraction, const std::string& intra = "300GB/s",
        const std::string& distribution = "longtail", std::uint32_t nodes = 2) {
  const auto sc = scenario(strategy, fraction, intra, distribution, nodes);
  const auto lengths = sample_batch(sc);
  Run out;
  out.schedule = make_planner(strategy, sc)->plan(PlanContext(sc, simulated_step_seconds), lengths);
  out.step_s = static_cast<double>(testing::simulate_step_ns(sc, out.schedule)) * 1e-9;
  for (const auto& program : out.schedule.programs()) {
    for (const OpView op : ops_of(program)) {
      if (op.is_compute() && compute_of(out.schedule, op).phase() == proto::RECOMPUTE) {
        out.recompute_s += static_cast<double>(compute_of(out.schedule, op).estimated_duration_ns()) * 1e-9;
      }
    }
  }
  return out;
}

std::uint64_t max_peak(const proto::Schedule& schedule) {
  const auto& peaks = schedule.summary().planned_peak_memory_bytes();
  return *std::max_element(peaks.begin(), peaks.end());
}

TEST(Epp, EveryTokenOnceAndWithinMemory) {
  const auto sc = scenario("epp", 1.0);
  const auto lengths = sample_batch(sc);
  const auto plan = plan_epp(sc, resolve_epp_options(sc), lengths, EppVariant::Faithful);
  EXPECT_EQ(plan.stages, 2u);
  EXPECT_EQ(plan.sp_degree, 4u);
  ASSERT_EQ(plan.replicas.size(), 1u);
  std::uint64_t planned = 0;
  for (const auto& p : plan.replicas[0].pipelines) {
    for (const auto& lane : p.lanes) {
      for (const auto& c : lane.chunks) planned += c.tokens();
    }
  }
  EXPECT_EQ(planned, std::accumulate(lengths.begin(), lengths.end(), std::uint64_t{0}));
  const auto r = run("epp", 1.0);
  // Rank 0 (stage 0, first SP rank) runs every chunk's forward once with shards = 4,
  // layer by layer in Ulysses' pieces (layer 0's PRE_ATTENTION starts each).
  std::uint64_t forward_tokens = 0;
  for (const OpView op : ops_of(r.schedule, 0)) {
    if (op.is_compute() && compute_of(r.schedule, op).phase() == proto::FORWARD) {
      EXPECT_EQ(compute_of(r.schedule, op).shards(), 4u);
      EXPECT_NE(compute_of(r.schedule, op).layer_part(), proto::LAYER_WHOLE);
      if (compute_of(r.schedule, op).first_layer() == 0 && compute_of(r.schedule, op).layer_part() == proto::PRE_ATTENTION) {
        forward_tokens += new_tokens_of(compute_of(r.schedule, op));
      }
    }
  }
  EXPECT_EQ(forward_tokens, planned);
  EXPECT_GT(r.step_s, 0.0);
  EXPECT_LE(max_peak(r.schedule), sc.plan.memory_limit.count);
}

TEST(Epp, TightMemoryCheckpointsAdaptivelyAndBeatsFullCheckpointing) {
  constexpr double kTight = 0.45;
  const auto adaptive = run("epp", kTight);
  const auto full = run("epp-full-ckpt", kTight);
  EXPECT_GT(adaptive.recompute_s, 0.0);
  EXPECT_LT(adaptive.recompute_s, full.recompute_s);
  EXPECT_LT(adaptive.step_s, full.step_s);
  const auto limit = scenario("epp", kTight).plan.memory_limit.count;
  EXPECT_LE(max_peak(adaptive.schedule), limit);
  EXPECT_LE(max_peak(full.schedule), limit);
  try {
    run("epp-no-ckpt", kTight);
    FAIL() << "epp-no-ckpt fitted a batch that needs recomputation";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("epp-no-ckpt"));
    EXPECT_THAT(e.what(), HasSubstr("memory limit"));
  }
}

TEST(Epp, AblationsAndFlexRun) {
  const auto base = run("epp", 1.0);
  const auto even = run("epp-even-split", 1.0);
  const auto flex = run("epp-flex", 1.0);
  EXPECT_EQ(even.schedule.strategy(), "epp-even-split");
  EXPECT_GT(even.step_s, 0.0);
  EXPECT_GT(flex.step_s, 0.0);
  EXPECT_LE(max_peak(flex.schedule), scenario("epp-flex", 1.0).plan.memory_limit.count);
}

TEST(Epp, FlexTakesSmallerDegreesOnASlowNodeFabricAndNeverLoses) {
  // PCIe-class links inside the node and mostly short sequences: all-to-alls
  // cost more than sub-pipelines of smaller degree.
  const auto sc = scenario("epp-flex", 1.0, "25GB/s", "wikipedia");
  const auto plan = plan_epp(PlanContext(sc, simulated_step_seconds), resolve_epp_options(sc), sample_batch(sc), EppVariant::Flex);
  bool smaller = false;
  for (const auto& p : plan.replicas[0].pipelines) {
    smaller = smaller || p.sp_degree < 4;
    EXPECT_EQ(p.lanes.size(), 4u / p.sp_degree);
  }
  EXPECT_TRUE(smaller);
  const auto base = run("epp", 1.0, "25GB/s", "wikipedia");
  const auto flex = run("epp-flex", 1.0, "25GB/s", "wikipedia");
  EXPECT_LT(flex.step_s, base.step_s);
  // With two data-parallel replicas (4 nodes, 2 stages), each scored on its own.
  const auto replicas = run("epp-flex", 1.0, "25GB/s", "wikipedia", 4);
  EXPECT_EQ(replicas.schedule.summary().data_parallel(), 2u);
  EXPECT_GT(replicas.step_s, 0.0);
}

TEST(Epp, SamePlanTwice) {
  const auto a = run("epp", 0.45).schedule.SerializeAsString();
  const auto b = run("epp", 0.45).schedule.SerializeAsString();
  EXPECT_EQ(a, b);
}

// Errors in plan.epp name the file, the line, the field, the rule and the
// --set that caused them; every variant resolves the same options.
TEST(Epp, ScenarioChecks) {
  const std::string base = testing::test_scenario_text(2, 4, R"(name: "x" model { preset: "llama2-7b" }
    workload { lengths { fixed: 1024 } global_batch: 8 max_length: 4096 })");
  auto expect_error = [&](const std::string& plan, const std::string& message) {
    EXPECT_THAT(testing::planner_error(base + plan), HasSubstr(message)) << plan;
  };
  expect_error(R"(plan { strategy: "epp" epp { sp_degree: 3 } })",
               "s.textproto:10: plan.epp.sp_degree: must divide cluster.gpus_per_node 4 (SP stays inside a node), got 3");
  expect_error(R"(plan { strategy: "epp" epp { pipeline_stages: 3 } })", "s.textproto:10: plan.epp.pipeline_stages");
  expect_error(R"(plan { strategy: "epp" epp { slice_counts: 0 } })",
               "s.textproto:10: plan.epp.slice_counts[0]: must be in [1, 1024], got 0");
  expect_error(R"(plan { strategy: "epp" epp { checkpoint_gap: 1.5 } })", "s.textproto:10: plan.epp.checkpoint_gap");
  expect_error(R"(plan { strategy: "epp-flex" zero_stage: 3 })",
               "s.textproto:10: plan.zero_stage: epp supports ZeRO stages 0 to 2, got 3");
  for (const std::string strategy : {"epp", "epp-no-ckpt", "epp-full-ckpt", "epp-even-split", "epp-flex"}) {
    EXPECT_EQ(testing::planner_error(base, {"plan.strategy=" + strategy, "plan.epp.sp_degree=3"}),
              "s.textproto: plan.epp.sp_degree: must divide cluster.gpus_per_node 4 (SP stays inside a node), got 3 (set "
              "by --set plan.epp.sp_degree=3)")
        << strategy;
    EXPECT_EQ(testing::planner_error(base, {"plan.strategy=" + strategy}), "") << strategy;
  }
}


// A batch of workload.repeats copies, repeats a multiple of the replicas:
// every replica gets the same lengths in the same order (longest processing
// time first), is planned once and written once (schedule/identical_replicas.h).
TEST(Epp, IdenticalReplicasArePlannedAndWrittenOnce) {
  const auto planned = [](const std::string& repeats) {
    const auto sc = testing::test_scenario(4, 4, fmt::format(R"(
      name: "epp-test"
      seed: 5
      model {{ preset: "llama2-7b" }}
      workload {{ lengths {{ distribution: "longtail" }} global_batch: 48 max_length: 32768 {} }}
      plan {{ strategy: "epp" zero_stage: 1 epp {{ pipeline_stages: 2 sp_degree: 4 }} }}
    )",
                                                             repeats));
    const auto lengths = sample_batch(sc);
    return make_planner("epp", sc)->plan(PlanContext(sc, simulated_step_seconds), lengths);
  };
  const proto::Schedule once = planned("repeats: 4");
  ASSERT_TRUE(once.has_identical_replicas());
  EXPECT_EQ(once.identical_replicas().copies(), 2u);  // 16 GPUs / (2 stages x SP 4)
  EXPECT_EQ(once.identical_replicas().stride(), 4u);
  for (std::uint32_t r = 0; r < once.num_ranks(); ++r) {
    EXPECT_EQ(ops_of(once, r).empty(), (r / 4) % 2 == 1) << "rank " << r;
  }
  // Each replica's sliced sequences, by their own batch index, in the plan's decisions.
  std::multiset<std::uint64_t> lengths[2];
  std::set<std::uint64_t> sequences;
  for (const auto& sliced : once.summary().decisions().sliced_sequences()) {
    lengths[sliced.replica()].insert(sliced.length_tokens());
    sequences.insert(sliced.sequence());
  }
  EXPECT_EQ(lengths[0], lengths[1]);
  EXPECT_EQ(sequences.size(), lengths[0].size() + lengths[1].size());
  EXPECT_NO_THROW(validate_schedule(expand_identical_replicas(once)));
  // Drawn one by one, the replicas' lengths differ: every rank is written.
  EXPECT_FALSE(planned("").has_identical_replicas());
}

}  // namespace
}  // namespace eppsim
