// `eppsim compare` as a library: every strategy on one sampled batch, records
// in the order asked for, speedups consistent, failures reported beside the
// strategies that ran, and compare.json shaped {"records": [...], "speedup": {A: {B: x}}}.
#include "tests/sim/test_scenarios.h"
#include "sim/compare.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <google/protobuf/struct.pb.h>

#include "base/errors.h"
#include "sim/plan/packed_1f1b.h"
#include "sim/plan/planner.h"
#include "sim/run.h"
#include "base/proto_io.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The quickstart with a smaller batch, so that each strategy runs in well under a second.
ResolvedScenario small_quickstart(std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(), "workload.global_batch=64");
  return testing::load_quickstart(overrides);
}

// packed-1f1b under another name with its own pipeline depth; it remembers the
// batch it was given.
class StagesPlanner final : public Planner {
 public:
  StagesPlanner(std::string name, std::uint32_t stages, std::vector<std::uint64_t>* seen)
      : name_(std::move(name)), packed_(packed_options(stages)), seen_(seen) {}
  std::string name() const override { return name_; }
  proto::Schedule plan(const PlanContext& context, std::span<const std::uint64_t> lengths) const override {
    seen_->assign(lengths.begin(), lengths.end());
    return packed_.plan(context, lengths);
  }

 private:
  static Packed1F1BOptions packed_options(std::uint32_t stages) {
    ResolvedScenario scenario = small_quickstart();
    scenario.proto.mutable_plan()->mutable_packed_1f1b()->set_pipeline_stages(stages);
    return resolve_packed_1f1b_options(scenario);
  }
  std::string name_;
  Packed1F1BPlanner packed_;
  std::vector<std::uint64_t>* seen_;
};

// A strategy that cannot plan anything: what an out-of-memory batch looks like.
class FailingPlanner final : public Planner {
 public:
  std::string name() const override { return "broken"; }
  proto::Schedule plan(const PlanContext&, std::span<const std::uint64_t>) const override {
    throw InputError("broken: needs 1 TiB but the memory limit is 64 GiB");
  }
};

// A bug, not bad input: it must not be hidden as a failed strategy.
class BuggyPlanner final : public Planner {
 public:
  std::string name() const override { return "buggy"; }
  proto::Schedule plan(const PlanContext&, std::span<const std::uint64_t>) const override {
    throw std::logic_error("buggy: broken invariant");
  }
};

// compare builds each planner from a factory; this one hands out a planner
// that forwards to `planner`, built by the test.
class Forwarding final : public Planner {
 public:
  explicit Forwarding(const Planner& planner) : planner_(planner) {}
  std::string name() const override { return planner_.name(); }
  proto::Schedule plan(const PlanContext& context, std::span<const std::uint64_t> lengths) const override {
    return planner_.plan(context, lengths);
  }

 private:
  const Planner& planner_;
};

PlannerFactory factory_of(const Planner& planner) {
  return PlannerFactory{planner.name(), [&planner](const ResolvedScenario& own) {
                          // compare hands each factory the scenario with the strategy set to its name.
                          EXPECT_EQ(own.plan.strategy, planner.name());
                          EXPECT_EQ(own.proto.plan().strategy(), planner.name());
                          return std::make_unique<Forwarding>(planner);
                        }};
}

std::vector<std::string> strategies_of(const proto::Comparison& comparison) {
  std::vector<std::string> names;
  for (const auto& r : comparison.records()) names.push_back(r.strategy());
  return names;
}

void expect_consistent_speedups(const proto::Comparison& comparison) {
  ASSERT_EQ(comparison.speedup_size(), comparison.records_size());
  for (const auto& a : comparison.records()) {
    ASSERT_EQ(comparison.speedup().at(a.strategy()).fields_size(), comparison.records_size());
    EXPECT_EQ(speedup(comparison, a.strategy(), a.strategy()), 1.0) << a.strategy();
    for (const auto& b : comparison.records()) {
      EXPECT_DOUBLE_EQ(speedup(comparison, a.strategy(), b.strategy()), b.step_time_s() / a.step_time_s());
      EXPECT_NEAR(speedup(comparison, a.strategy(), b.strategy()) * speedup(comparison, b.strategy(), a.strategy()),
                  1.0, 1e-12)
          << a.strategy() << " vs " << b.strategy();
    }
  }
}

TEST(Compare, EveryStrategyMatchesItsOwnRun) {
  const auto scenario = small_quickstart();
  const auto result = compare_strategies(scenario, planner_names());
  // Strategies still to come may not suit the quickstart; those that ran keep
  // planner_names()' order, and packed-1f1b (made for it) runs.
  std::vector<std::string> ran;
  for (const auto& name : planner_names()) {
    const auto& failures = result.comparison.failures();
    if (std::none_of(failures.begin(), failures.end(), [&](const auto& f) { return f.strategy() == name; })) {
      ran.push_back(name);
    }
  }
  EXPECT_EQ(strategies_of(result.comparison), ran);
  EXPECT_THAT(ran, ::testing::Contains("packed-1f1b"));
  ASSERT_EQ(result.runs.size(), static_cast<std::size_t>(result.comparison.records_size()));
  expect_consistent_speedups(result.comparison);
  // Every record is what `eppsim run --strategy NAME` reports (but the timings).
  for (const auto& record : result.comparison.records()) {
    const auto run = run_scenario(small_quickstart({"plan.strategy=" + record.strategy()}));
    EXPECT_EQ(record.step_time_s(), run.report.step_time_s()) << record.strategy();
    EXPECT_EQ(record.tokens(), run.report.tokens()) << record.strategy();
    EXPECT_EQ(record.seed(), scenario.workload.seed);
  }
}

TEST(Compare, SameBatchForAllRecordsInOrderFailuresBeside) {
  const auto scenario = small_quickstart();
  std::vector<std::uint64_t> seen4, seen2;
  const StagesPlanner four("stages-4", 4, &seen4), two("stages-2", 2, &seen2);
  const FailingPlanner broken;
  const std::vector<PlannerFactory> planners = {factory_of(four), factory_of(broken), factory_of(two)};
  const auto result = compare_planners(scenario, planners);
  const auto& c = result.comparison;

  EXPECT_EQ(strategies_of(c), (std::vector<std::string>{"stages-4", "stages-2"}));
  ASSERT_EQ(c.failures_size(), 1);
  EXPECT_EQ(c.failures(0).strategy(), "broken");
  EXPECT_THAT(c.failures(0).message(), HasSubstr("memory limit"));
  // One batch, sampled once with the scenario's seed, planned by both.
  EXPECT_EQ(seen4, sample_batch(scenario));
  EXPECT_EQ(seen2, seen4);
  EXPECT_EQ(c.records(0).tokens(), c.records(1).tokens());
  EXPECT_EQ(c.records(0).sequences(), c.records(1).sequences());
  EXPECT_EQ(c.records(0).pipeline_stages(), 4u);
  EXPECT_EQ(c.records(1).pipeline_stages(), 2u);
  EXPECT_NE(c.records(0).step_time_s(), c.records(1).step_time_s());
  expect_consistent_speedups(c);
  // Run directories are keyed by the name asked for.
  EXPECT_EQ(result.runs[1].report.strategy(), "stages-2");
  EXPECT_EQ(result.runs[1].schedule.strategy(), "stages-2");
}

TEST(Compare, BugsAreNotFailures) {
  const BuggyPlanner buggy;
  const std::vector<PlannerFactory> planners = {factory_of(buggy)};
  EXPECT_THROW(compare_planners(small_quickstart(), planners), std::logic_error);
}

TEST(Compare, NoStrategyFits) {
  // The batch of the CLI's "does not fit" case.
  const auto scenario =
      testing::load_quickstart({"plan.packed_1f1b.micro_batch_tokens=65536", "workload.max_length=65536"});
  const auto result = compare_strategies(scenario, {"packed-1f1b"});
  EXPECT_EQ(result.comparison.records_size(), 0);
  EXPECT_EQ(result.comparison.speedup_size(), 0);
  EXPECT_TRUE(result.runs.empty());
  ASSERT_EQ(result.comparison.failures_size(), 1);
  EXPECT_EQ(result.comparison.failures(0).strategy(), "packed-1f1b");
  EXPECT_THAT(result.comparison.failures(0).message(), HasSubstr("memory limit"));
  // With every strategy: each either runs or fails, none aborts the others.
  const auto all = compare_strategies(scenario, planner_names());
  EXPECT_EQ(all.comparison.records_size() + all.comparison.failures_size(), static_cast<int>(planner_names().size()));
}

TEST(Compare, ResolvesEachStrategyAsRunDoes) {
  // plan.epp.sp_degree 3 does not divide the quickstart's 8 GPUs per node:
  // `run` rejects it, and so does `compare`, as epp's failure, while the
  // strategies that ignore plan.epp still run.
  const std::string expected = "plan.epp.sp_degree: must divide cluster.gpus_per_node 8 (SP stays inside a node), got 3 "
                               "(set by --set plan.epp.sp_degree=3)";
  try {
    run_scenario(small_quickstart({"plan.strategy=epp", "plan.epp.sp_degree=3"}));
    FAIL() << "run: no InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(expected));
  }
  const auto result = compare_strategies(small_quickstart({"plan.epp.sp_degree=3"}), {"packed-1f1b", "epp", "epp-flex"});
  EXPECT_EQ(strategies_of(result.comparison), std::vector<std::string>{"packed-1f1b"});
  ASSERT_EQ(result.comparison.failures_size(), 2);
  EXPECT_EQ(result.comparison.failures(0).strategy(), "epp");
  EXPECT_THAT(result.comparison.failures(0).message(), HasSubstr(expected));
  EXPECT_EQ(result.comparison.failures(1).strategy(), "epp-flex");
  EXPECT_THAT(result.comparison.failures(1).message(), HasSubstr(expected));
}

TEST(Compare, UnknownAndRepeatedStrategies) {
  const auto scenario = small_quickstart();
  try {
    compare_strategies(scenario, {"packed-1f1b", "nope"});
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown strategy 'nope'"));
    EXPECT_THAT(e.what(), HasSubstr("packed-1f1b"));
  }
  EXPECT_THROW(compare_strategies(scenario, {}), InputError);
  EXPECT_THROW(compare_strategies(scenario, {"packed-1f1b", "packed-1f1b"}), InputError);

  EXPECT_THAT(parse_strategy_list("packed-1f1b"), ElementsAre("packed-1f1b"));
  EXPECT_THAT(parse_strategy_list(" packed-1f1b "), ElementsAre("packed-1f1b"));
  try {
    parse_strategy_list("packed-1f1b,nope");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown strategy 'nope' (known: packed-1f1b"));
  }
  EXPECT_THROW(parse_strategy_list(""), InputError);
  EXPECT_THROW(parse_strategy_list("packed-1f1b,"), InputError);
  EXPECT_THROW(parse_strategy_list("packed-1f1b,packed-1f1b"), InputError);
}

// A comparison of two strategies and a failure, for the output tests.
ComparisonResult two_and_a_failure() {
  static std::vector<std::uint64_t> seen4, seen2;
  static const StagesPlanner four("stages-4", 4, &seen4), two("stages-2", 2, &seen2);
  static const FailingPlanner broken;
  const std::vector<PlannerFactory> planners = {factory_of(four), factory_of(two), factory_of(broken)};
  return compare_planners(small_quickstart(), planners);
}

TEST(Compare, JsonShape) {
  const auto result = two_and_a_failure();
  const auto json = comparison_json(result.comparison);
  // Parsed as plain JSON: {"records": [...], "speedup": {"A": {"B": x}}, "failures": [...]}.
  google::protobuf::Struct parsed;
  from_json(json, &parsed, "compare.json");
  const auto& top = parsed.fields();
  ASSERT_TRUE(top.contains("records"));
  ASSERT_TRUE(top.contains("speedup"));
  const auto& records = top.at("records").list_value();
  ASSERT_EQ(records.values_size(), 2);
  EXPECT_EQ(records.values(0).struct_value().fields().at("strategy").string_value(), "stages-4");
  EXPECT_EQ(records.values(1).struct_value().fields().at("strategy").string_value(), "stages-2");
  EXPECT_TRUE(records.values(0).struct_value().fields().contains("step_time_s"));
  EXPECT_TRUE(records.values(0).struct_value().fields().contains("breakdown_s"));
  const auto& speedups = top.at("speedup").struct_value().fields();
  ASSERT_EQ(speedups.size(), 2u);
  const auto& row = speedups.at("stages-4").struct_value().fields();
  ASSERT_EQ(row.size(), 2u);
  EXPECT_EQ(row.at("stages-4").number_value(), 1.0);
  EXPECT_DOUBLE_EQ(row.at("stages-2").number_value(),
                   result.comparison.records(1).step_time_s() / result.comparison.records(0).step_time_s());
  const auto& failures = top.at("failures").list_value();
  ASSERT_EQ(failures.values_size(), 1);
  EXPECT_EQ(failures.values(0).struct_value().fields().at("strategy").string_value(), "broken");
  // And back into the message, strictly.
  proto::Comparison back;
  from_json(json, &back, "compare.json");
  EXPECT_EQ(back.records_size(), 2);
  EXPECT_EQ(speedup(back, "stages-2", "stages-4"), speedup(result.comparison, "stages-2", "stages-4"));
}

TEST(Compare, JsonIsDeterministic) {
  // Map entries print in key order, whatever order they were inserted in, and
  // everything else is as to_json prints it.
  proto::Comparison forward, backward;
  const std::vector<std::string> names = {"packed-1f1b", "ulysses", "flexsp", "seq1f1b", "epp", "a", "z"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    forward.add_records()->set_strategy(names[i]);
    forward.mutable_records(static_cast<int>(i))->set_step_time_s(1.0 + static_cast<double>(i));
  }
  backward = forward;
  fill_speedups(&forward);
  backward.mutable_speedup()->clear();
  for (auto a = names.rbegin(); a != names.rend(); ++a) {
    for (auto b = names.rbegin(); b != names.rend(); ++b) {
      (*(*backward.mutable_speedup())[*a].mutable_fields())[*b].set_number_value(speedup(forward, *a, *b));
    }
  }
  const auto json = comparison_json(forward);
  EXPECT_EQ(comparison_json(backward), json);
  EXPECT_LT(json.find("\"a\": {"), json.find("\"epp\": {"));
  EXPECT_LT(json.find("\"seq1f1b\": {"), json.find("\"ulysses\": {"));
  EXPECT_EQ(json.size(), to_json(forward).size());
  proto::Comparison back;
  from_json(json, &back, "compare.json");
  EXPECT_EQ(to_binary(back), to_binary(forward));
  EXPECT_EQ(json.substr(0, 19), "{\n  \"records\": [\n  ");
}

TEST(Compare, CsvAndDirectory) {
  const auto result = two_and_a_failure();
  const auto csv = comparison_csv(result.comparison);
  std::vector<std::string> lines;
  for (std::size_t begin = 0, end; begin < csv.size(); begin = end + 1) {
    end = csv.find('\n', begin);
    lines.push_back(csv.substr(begin, end - begin));
  }
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "strategy,network,step_time_s,tokens_per_s,mfu,peak_memory_bytes,bubble_share,communication_share,"
            "speedup_over_stages-4,speedup_over_stages-2,error");
  EXPECT_THAT(lines[1], ::testing::StartsWith("stages-4,simple,"));
  EXPECT_THAT(lines[1], ::testing::EndsWith(","));  // no error
  EXPECT_EQ(std::count(lines[1].begin(), lines[1].end(), ','), 10);
  EXPECT_THAT(lines[3], ::testing::StartsWith("broken,,,,,,,,,"));
  EXPECT_THAT(lines[3], HasSubstr("memory limit"));

  const auto summary = comparison_summary(result.comparison);
  EXPECT_THAT(summary, HasSubstr("vs stages-2"));
  EXPECT_THAT(summary, HasSubstr("1.00x"));
  EXPECT_THAT(summary, HasSubstr("broken"));
  EXPECT_THAT(summary, HasSubstr("system"));  // the paper system each strategy follows

  const fs::path dir = fs::temp_directory_path() / ("eppsim_compare_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  write_comparison_directory(result, dir);
  for (const char* file : {"compare.json", "compare.csv", "stages-4/report.json", "stages-4/ops.csv",
                           "stages-2/trace.pb", "stages-2/ranks.csv"}) {
    EXPECT_TRUE(fs::is_regular_file(dir / file)) << file;
  }
  EXPECT_FALSE(fs::exists(dir / "broken"));
  // Each strategy's directory: its own timings and its effective scenario, which names it.
  for (const char* strategy : {"stages-4", "stages-2"}) {
    proto::Timings timings;
    read_message(dir / strategy / "timings.json", &timings);
    EXPECT_GT(timings.peak_rss_bytes(), 0.0) << strategy;
    const auto scenario = parse_scenario_text(read_file(dir / strategy / "scenario.textproto"), "scenario.textproto");
    EXPECT_EQ(scenario.plan().strategy(), strategy);
    EXPECT_EQ(scenario.workload().global_batch(), 64u);
  }
  EXPECT_EQ(read_file(dir / "compare.csv"), csv);
  EXPECT_EQ(read_file(dir / "compare.json"), comparison_json(result.comparison));
  proto::Comparison back;
  read_message(dir / "compare.json", &back);
  EXPECT_EQ(back.records_size(), 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace eppsim

namespace eppsim {
namespace {

// The FlexSP reproduction on 6.7B/192K: FlexSP and its per-batch adaptive
// ablation both beat DeepSpeed's static degree 64, FlexSP within the paper's
// range (1.72x; scenarios/flexsp/RESULTS.md). The paper also puts FlexSP ahead of the ablation; with shared
// endpoints the model no longer does (FlexSP's SP groups across nodes share the
// NIC with ZeRO-3's gathers, scenarios/flexsp/README.md), so that order is not
// asserted here: the flow engine is to say which is right.
TEST(Compare, FlexSpReproductionBeatsDeepSpeed) {
  const auto sc = load_scenario(std::filesystem::path(EPPSIM_SOURCE_DIR) / "scenarios/flexsp/gpt67b_192k.textproto");
  const auto result = compare_strategies(sc, {"flexsp", "ulysses-adaptive", "ulysses"});
  ASSERT_EQ(result.comparison.records_size(), 3);
  const double flexsp_over_ds = speedup(result.comparison, "flexsp", "ulysses");
  const double adaptive_over_ds = speedup(result.comparison, "ulysses-adaptive", "ulysses");
  EXPECT_GT(flexsp_over_ds, 1.4);
  EXPECT_LT(flexsp_over_ds, 1.9);
  EXPECT_GT(adaptive_over_ds, 1.15);
}

// The quickstart on a fat-tree, with a torus to compare it with.
std::string quickstart_on_networks() {
  std::string text = read_file(fs::path(EPPSIM_SOURCE_DIR) / "scenarios/quickstart.textproto");
  const std::string networks = R"(
    topology { name: "fat-tree" node { kind: SWITCHED link { bandwidth: "300GB/s" latency: "1us" } }
               fat_tree { radix: 8 levels: 2 link { bandwidth: "25GB/s" latency: "2us" } } }
    compare_topologies { name: "torus" torus { dims: [8, 2] link { bandwidth: "25GB/s" latency: "2us" } } }
  )";
  text.insert(text.find("cluster {") + 9, networks);
  return text;
}

ResolvedScenario on_network(const std::string& text, const std::string& network) {
  return resolve_full(parse_scenario(text, "nets.textproto", fs::path(EPPSIM_SOURCE_DIR) / "scenarios",
                                     {"workload.global_batch=32", "cluster.network=" + network}));
}

TEST(CompareNetworks, EveryStrategyOnEveryNetworkNamedStrategyAtNetwork) {
  const std::string text = quickstart_on_networks();
  const ResolvedScenario base = on_network(text, "fat-tree");
  EXPECT_THAT(parse_network_list("all", base), ElementsAre("fat-tree", "torus"));
  EXPECT_THAT(parse_network_list("torus, simple", base), ElementsAre("torus", "simple"));
  EXPECT_THROW(parse_network_list("ring", base), InputError);  // "--networks: unknown network 'ring' (known: ...)"
  EXPECT_THROW(parse_network_list("torus,torus", base), InputError);

  const std::vector<ResolvedScenario> per_network{on_network(text, "fat-tree"), on_network(text, "torus")};
  const ComparisonResult result = compare_on_networks(per_network, {"packed-1f1b", "ulysses"});
  const auto& c = result.comparison;
  EXPECT_THAT(c.networks(), ElementsAre("fat-tree", "torus"));
  ASSERT_EQ(c.records_size(), 4);
  EXPECT_EQ(record_name(c, c.records(0)), "packed-1f1b@fat-tree");
  EXPECT_EQ(record_name(c, c.records(3)), "ulysses@torus");
  EXPECT_EQ(c.records(0).tokens(), c.records(2).tokens());  // one batch everywhere
  EXPECT_NE(c.records(0).step_time_s(), c.records(2).step_time_s());
  EXPECT_DOUBLE_EQ(speedup(c, "packed-1f1b@fat-tree", "packed-1f1b@torus"),
                   c.records(2).step_time_s() / c.records(0).step_time_s());
  // Each record equals its own run on its network.
  const RunResult alone = run_scenario(on_network(text, "torus"));
  EXPECT_DOUBLE_EQ(c.records(2).step_time_s(), alone.report.step_time_s());
  EXPECT_EQ(alone.report.network(), "torus");
  EXPECT_THAT(comparison_summary(c), HasSubstr("networks fat-tree, torus"));
  EXPECT_THAT(comparison_summary(c), HasSubstr("vs ulysses@torus"));
  EXPECT_THAT(comparison_csv(c), HasSubstr("\nulysses,torus,"));
}

}  // namespace
}  // namespace eppsim
