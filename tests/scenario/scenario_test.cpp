#include "scenario/scenario.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "models/flexsp_preset.h"
#include "models/shaped_compute_cost.h"
#include "base/rng.h"
#include "base/proto_io.h"
#include "tests/schedule/sample_messages.h"
#include "tests/scenario/scenario_file_fixture.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using testing::fresh_dir;
using testing::kBase;
using testing::replaced;
using testing::ScenarioFile;

TEST_F(ScenarioFile, ResolvesEveryField) {
  const ResolvedScenario r = load(kBase);
  EXPECT_EQ(r.source, file());
  EXPECT_EQ(r.proto.name(), "t");
  EXPECT_EQ(r.model.name, "llama2-7b");
  EXPECT_EQ(r.model.layers, 32u);
  EXPECT_EQ(r.cluster.nodes, 2u);
  EXPECT_EQ(r.cluster.gpus_per_node, 8u);
  EXPECT_EQ(r.cluster.gpu.name, "A100-80GB");
  EXPECT_DOUBLE_EQ(r.cluster.intra_node.bandwidth.value, 300e9);
  EXPECT_DOUBLE_EQ(r.cluster.intra_node.latency.value, 2e-6);
  EXPECT_DOUBLE_EQ(r.cluster.inter_node.bandwidth.value, 25e9);
  EXPECT_DOUBLE_EQ(r.cluster.inter_node.latency.value, 5e-6);
  ASSERT_NE(r.workload.lengths, nullptr);
  Rng rng(1);
  EXPECT_EQ(r.workload.lengths->sample(rng), 4096u);
  EXPECT_EQ(r.workload.global_batch, 32u);
  EXPECT_EQ(r.workload.max_length, 8192u);
  EXPECT_EQ(r.workload.over_max_length, OverMaxLength::Truncate);
  EXPECT_EQ(r.workload.seed, 7u);
  EXPECT_EQ(r.plan.strategy, "packed-1f1b");  // the default
  EXPECT_EQ(r.simulation.engine, "analytic");       // the default
  EXPECT_EQ(r.plan.memory_limit, Bytes(std::uint64_t{80} << 30));
  ASSERT_NE(r.cost.compute, nullptr);
  EXPECT_NE(dynamic_cast<const ShapedComputeCost*>(r.cost.compute.get()), nullptr);  // the default
  EXPECT_TRUE(r.cost.interference.enabled);                                           // the default
}

TEST_F(ScenarioFile, RuleViolationsNameFileLineFieldAndValue) {
  EXPECT_EQ(error_of(replaced(kBase, "nodes: 2", "nodes: 0")), file() + ":5: cluster.nodes: must be > 0, got 0");
  EXPECT_EQ(error_of(replaced(kBase, "global_batch: 32", "global_batch: 0")),
            file() + ":13: workload.global_batch: must be > 0, got 0");
  EXPECT_THAT(error_of(replaced(kBase, "zero_stage: 1", "zero_stage: 4")),
              HasSubstr(file() + ":17: plan.zero_stage: must be 0, 1, 2 or 3, got 4"));
}

TEST_F(ScenarioFile, MissingFieldsPointAtTheirParentOrTheFile) {
  // No line for a field that is not written: the nearest written ancestor's.
  EXPECT_EQ(error_of(replaced(kBase, "  max_length: 8192\n", "")),
            file() + ":11: workload.max_length: must be > 0, got 0");
  EXPECT_THAT(error_of(replaced(kBase, "  gpus_per_node: 8\n", "")), HasSubstr(":4: cluster.gpus_per_node: must be > 0"));
  EXPECT_THAT(error_of(replaced(kBase, "  intra_node { bandwidth: \"300GB/s\" latency: \"2us\" }\n", "")),
              HasSubstr(":4: cluster.intra_node.bandwidth: must be set"));
  EXPECT_THAT(error_of(replaced(kBase, "latency: \"5us\" ", "")), HasSubstr(":9: cluster.inter_node.latency: must be set"));
  EXPECT_THAT(error_of(replaced(kBase, "lengths { fixed: 4096 }", "")),
              HasSubstr(":11: workload.lengths: set one of distribution"));
  // Nothing written at all: no line.
  EXPECT_THAT(error_of("name: \"empty\"\n"), HasSubstr(file() + ": model."));
}

TEST_F(ScenarioFile, UnknownFieldHasLineColumnAndName) {
  const std::string error = error_of(replaced(kBase, "nodes: 2", "nodez: 2"));
  EXPECT_THAT(error, HasSubstr(file() + ":5:3: "));
  EXPECT_THAT(error, HasSubstr("\"nodez\""));
}

TEST_F(ScenarioFile, SyntaxErrorsAndDuplicatesAreErrors) {
  EXPECT_THAT(error_of(replaced(kBase, "seed: 7", "seed: seven")), HasSubstr(file() + ":2:7: "));
  EXPECT_THAT(error_of(replaced(kBase, "seed: 7", "seed: 7 seed: 8")), HasSubstr(file() + ":2:"));
  EXPECT_THAT(error_of(std::string(kBase) + "plan {"), HasSubstr(file()));
}

TEST_F(ScenarioFile, BadUnitNamesFieldLineAndTheParsersWords) {
  const std::string error = error_of(replaced(kBase, "\"300GB/s\"", "\"300 parsecs\""));
  EXPECT_THAT(error, HasSubstr(file() + ":8: cluster.intra_node.bandwidth: "));
  EXPECT_THAT(error, HasSubstr("300 parsecs"));
  EXPECT_THAT(error_of(replaced(kBase, "\"5us\"", "\"5 fortnights\"")), HasSubstr(":9: cluster.inter_node.latency: "));
  EXPECT_THAT(error_of(replaced(kBase, "\"300GB/s\"", "\"0GB/s\"")),
              HasSubstr(":8: cluster.intra_node.bandwidth: must be > 0, got \"0GB/s\""));
}

TEST_F(ScenarioFile, UnknownModelPresetListsTheKnownOnes) {
  const std::string error = error_of(replaced(kBase, "llama2-7b", "llama9-1b"));
  EXPECT_THAT(error, HasSubstr(file() + ":3: model.preset: unknown preset \"llama9-1b\""));
  EXPECT_THAT(error, HasSubstr("llama2-7b"));
  EXPECT_THAT(error, HasSubstr("gpt-13b"));
}

TEST_F(ScenarioFile, ModelPresetFieldsCanBeOverridden) {
  const ResolvedScenario r = load(replaced(kBase, "preset: \"llama2-7b\"", "preset: \"llama2-7b\" layers: 16"));
  EXPECT_EQ(r.model.layers, 16u);
  EXPECT_EQ(r.model.hidden_size, 4096u);
}

TEST_F(ScenarioFile, CustomModelNeedsEveryShapeField) {
  const std::string custom =
      "layers: 8 hidden_size: 1024 attention_heads: 16 kv_heads: 4 ffn_hidden_size: 4096 vocab_size: 50000 "
      "ffn_kind: GELU";
  const ResolvedScenario r = load(replaced(kBase, "preset: \"llama2-7b\"", custom));
  EXPECT_EQ(r.model.layers, 8u);
  EXPECT_EQ(r.model.kv_heads, 4u);
  EXPECT_EQ(r.model.ffn_kind, FfnKind::Gelu);

  EXPECT_THAT(error_of(replaced(kBase, "preset: \"llama2-7b\"", "layers: 8")),
              HasSubstr(":3: model.hidden_size: must be > 0 when model.preset is not set"));
  EXPECT_THAT(error_of(replaced(kBase, "preset: \"llama2-7b\"", replaced(custom, "hidden_size: 1024", "hidden_size: 1000"))),
              HasSubstr(":3: model.hidden_size: must be divisible by model.attention_heads (16), got 1000"));
  EXPECT_THAT(error_of(replaced(kBase, "preset: \"llama2-7b\"", replaced(custom, "kv_heads: 4", "kv_heads: 5"))),
              HasSubstr(":3: model.kv_heads: must divide model.attention_heads (16), got 5"));
}

TEST_F(ScenarioFile, GpuPresetOrEveryField) {
  EXPECT_THAT(error_of(replaced(kBase, "A100-80GB", "Z9000")),
              HasSubstr(":7: cluster.gpu.preset: unknown preset \"Z9000\" (known: "));
  EXPECT_THAT(error_of(replaced(kBase, "A100-80GB", "Z9000")), HasSubstr("H100-SXM"));
  EXPECT_THAT(error_of(replaced(kBase, "gpu { preset: \"A100-80GB\" }", "gpu { peak_flops: \"100TFLOPS\" }")),
              HasSubstr(":7: cluster.gpu.memory: must be set when cluster.gpu.preset is not"));

  const ResolvedScenario custom = load(replaced(
      kBase, "gpu { preset: \"A100-80GB\" }",
      "gpu { peak_flops: \"100TFLOPS\" memory: \"16GiB\" memory_bandwidth: \"1TB/s\" nvlink_bandwidth: \"100GB/s\" }"));
  EXPECT_DOUBLE_EQ(custom.cluster.gpu.peak_bf16.value, 100e12);
  EXPECT_EQ(custom.plan.memory_limit, Bytes(std::uint64_t{16} << 30));

  // A preset with an override, and a memory fraction.
  const ResolvedScenario overridden = load(replaced(replaced(kBase, "gpu { preset: \"A100-80GB\" }",
                                                             "gpu { preset: \"A100-80GB\" memory: \"40GiB\" }"),
                                                    "zero_stage: 1", "zero_stage: 1 memory_fraction: 0.5"));
  EXPECT_EQ(overridden.cluster.gpu.name, "A100-80GB");
  EXPECT_EQ(overridden.cluster.gpu.memory, Bytes(std::uint64_t{40} << 30));
  EXPECT_EQ(overridden.plan.memory_limit, Bytes(std::uint64_t{20} << 30));
  EXPECT_THAT(error_of(replaced(kBase, "zero_stage: 1", "memory_fraction: 1.5")),
              HasSubstr(":17: plan.memory_fraction: must be in (0, 1]"));
  EXPECT_THAT(error_of(replaced(kBase, "\"A100-80GB\" }", "\"A100-80GB\" peak_flops: \"fast\" }")),
              HasSubstr(":7: cluster.gpu.peak_flops: "));
}

TEST_F(ScenarioFile, StrategyAndEngine) {
  // The strategy stays a name: its planner checks it (sim/plan/planner_registry.h).
  EXPECT_EQ(load(replaced(kBase, "zero_stage: 1", "strategy: \"magic\"")).plan.strategy, "magic");
  // The engine stays a name too: the engine registry checks it (sim/engine/engine_registry.h).
  EXPECT_EQ(load(std::string(kBase) + "simulation { engine: \"analytic\" }\n").simulation.engine, "analytic");
  EXPECT_EQ(load(std::string(kBase) + "simulation { engine: \"warp\" }\n").simulation.engine, "warp");
  EXPECT_EQ(load(kBase).simulation.engine, "analytic");
}

// Planners report the rules of their options through the resolved scenario's locator.
TEST_F(ScenarioFile, LocatorOfTheResolvedScenario) {
  const auto fail = [](const ResolvedScenario& r, std::string_view path) -> std::string {
    try {
      r.where().fail(path, "must be even, got 5");
    } catch (const InputError& e) {
      return e.what();
    }
    return {};
  };
  const ResolvedScenario r = load(kBase);
  EXPECT_EQ(fail(r, "plan.packed_1f1b.pipeline_stages"), file() + ":18: plan.packed_1f1b.pipeline_stages: must be even, got 5");
  // Not written: the nearest written ancestor's line.
  EXPECT_EQ(fail(r, "plan.epp.sp_degree"), file() + ":16: plan.epp.sp_degree: must be even, got 5");
  EXPECT_EQ(fail(r, "plan.epp.slice_counts[1]"), file() + ":16: plan.epp.slice_counts[1]: must be even, got 5");
  // Set by --set: the override, no line.
  EXPECT_EQ(fail(load(kBase, {"plan.epp={sp_degree: 5}"}), "plan.epp.sp_degree"),
            file() + ": plan.epp.sp_degree: must be even, got 5 (set by --set plan.epp={sp_degree: 5})");
  // Built in code: no line.
  EXPECT_EQ(fail(resolve_scenario(parse_scenario_text(kBase, "code"), "code", "."), "plan.epp.sp_degree"),
            "code: plan.epp.sp_degree: must be even, got 5");
}

// A command resolves only the parts it uses.
TEST_F(ScenarioFile, StagedResolution) {
  const std::string cluster_only = R"(name: "c"
cluster {
  nodes: 2
  gpus_per_node: 8
  gpu { preset: "A100-80GB" }
  intra_node { bandwidth: "300GB/s" latency: "2us" }
  inter_node { bandwidth: "200Gbps" latency: "5us" }
}
)";
  const ResolvedScenario cluster = load_scenario(write(cluster_only), {}, ScenarioPart::Cluster);
  EXPECT_EQ(cluster.part, ScenarioPart::Cluster);
  EXPECT_EQ(cluster.usable_gpus(), 16u);
  EXPECT_EQ(cluster.cost.compute, nullptr);
  EXPECT_EQ(network_of(cluster).nodes, 2u);
  // The cluster's own rules still hold.
  EXPECT_THAT(error_of_part(replaced(cluster_only, "nodes: 2", "nodes: 0"), ScenarioPart::Cluster),
              HasSubstr(":3: cluster.nodes: must be > 0, got 0"));
  // The simulation part needs the model, not the workload or the plan.
  EXPECT_THAT(error_of_part(cluster_only, ScenarioPart::Simulation), HasSubstr(": model."));
  const std::string bad_plan_and_workload = replaced(replaced(kBase, "global_batch: 32", "global_batch: 0"),
                                                     "zero_stage: 1", "zero_stage: 9 memory_fraction: 7");
  const ResolvedScenario simulation = load_scenario(write(bad_plan_and_workload), {}, ScenarioPart::Simulation);
  EXPECT_EQ(simulation.part, ScenarioPart::Simulation);
  EXPECT_NE(simulation.cost.compute, nullptr);
  EXPECT_EQ(simulation.simulation.engine, "analytic");
  EXPECT_EQ(simulation.model.layers, 32u);
  EXPECT_THAT(error_of(bad_plan_and_workload), HasSubstr(":13: workload.global_batch: must be > 0, got 0"));
}

TEST_F(ScenarioFile, LengthSources) {
  // Missing file: resolved against the scenario's directory.
  const std::string missing = error_of(replaced(kBase, "fixed: 4096", "file: \"nope.txt\""));
  EXPECT_THAT(missing, HasSubstr(":12: workload.lengths.file: no such file "));
  EXPECT_THAT(missing, HasSubstr((dir_ / "nope.txt").string()));

  // A JSONL file beside the scenario, with its own key.
  write("{\"tokens\": 100, \"id\": \"a\"}\n{\"tokens\": 300, \"id\": \"b\"}\n", "lengths.jsonl");
  const ResolvedScenario jsonl = load(replaced(kBase, "fixed: 4096", "file: \"lengths.jsonl\" jsonl_field: \"tokens\""));
  Rng rng(3);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 50; ++i) seen.insert(jsonl.workload.lengths->sample(rng));
  EXPECT_EQ(seen, (std::set<std::uint64_t>{100, 300}));

  // A JSONL file without the key: the loader's error, under the field.
  EXPECT_THAT(error_of(replaced(kBase, "fixed: 4096", "file: \"lengths.jsonl\"")),
              HasSubstr(":12: workload.lengths.file: "));

  // One length per line, in a subdirectory.
  write("# lengths\n10\n\n20\n", "data/lengths.txt");
  const ResolvedScenario text = load(replaced(kBase, "fixed: 4096", "file: \"data/lengths.txt\""));
  std::set<std::uint64_t> text_seen;
  for (int i = 0; i < 50; ++i) text_seen.insert(text.workload.lengths->sample(rng));
  EXPECT_EQ(text_seen, (std::set<std::uint64_t>{10, 20}));

  EXPECT_EQ(load(replaced(kBase, "fixed: 4096", "distribution: \"wikipedia\"")).workload.lengths->name(), "wikipedia");
  EXPECT_THAT(error_of(replaced(kBase, "fixed: 4096", "distribution: \"twitter\"")),
              HasSubstr(":12: workload.lengths.distribution: "));
  EXPECT_THAT(error_of(replaced(kBase, "fixed: 4096", "fixed: 0")), HasSubstr(":12: workload.lengths.fixed: must be > 0"));
  EXPECT_THAT(error_of(replaced(kBase, "fixed: 4096", "fixed: 4096 jsonl_field: \"n\"")),
              HasSubstr(":12: workload.lengths.jsonl_field: only applies to a file source"));
  EXPECT_EQ(load(replaced(kBase, "max_length: 8192", "max_length: 8192 over_max_length: DROP")).workload.over_max_length,
            OverMaxLength::Drop);
}

// A collective micro-benchmark instead of a training step; line numbers refer to kCollective.
constexpr std::string_view kCollective = R"(name: "c"
cluster {
  nodes: 4
  gpus_per_node: 2
  gpu { preset: "H100-SXM" }
  intra_node { bandwidth: "450GB/s" latency: "2us" }
  inter_node { bandwidth: "50GB/s" latency: "500ns" }
}
workload {
  collective { kind: ALL_GATHER bytes: "1MiB" algorithm: RING chunks: 4 }
}
)";

TEST_F(ScenarioFile, CollectiveBenchmark) {
  const ResolvedScenario r = load(kCollective);
  ASSERT_TRUE(r.workload.collective.has_value());
  EXPECT_EQ(r.workload.collective->kind, proto::ALL_GATHER);
  EXPECT_EQ(r.workload.collective->algorithm, proto::RING);
  EXPECT_EQ(r.workload.collective->size, Bytes(1u << 20));
  EXPECT_EQ(r.workload.collective->chunks, 4u);
  EXPECT_EQ(r.workload.collective->group_size, 8u);  // every usable GPU by default
  EXPECT_EQ(r.workload.collective->stride, 1u);
  EXPECT_EQ(r.workload.collective->iterations, 1u);
  EXPECT_EQ(r.plan.strategy, "collective");
  EXPECT_EQ(r.workload.lengths, nullptr);
  EXPECT_TRUE(r.model.name.empty());  // no model needed
  EXPECT_EQ(load(kCollective, {"workload.collective.stride=3"}).workload.collective->group_size, 3u);  // GPUs 0, 3, 6
  EXPECT_EQ(load(kCollective, {"model.preset=llama2-7b"}).model.name, "llama2-7b");

  const std::string f = file();
  EXPECT_EQ(error_of(kCollective, {"workload.global_batch=8"}),
            f + ": workload.global_batch: must be unset when workload.collective describes a collective benchmark "
                "instead of a training step (set by --set workload.global_batch=8)");
  EXPECT_THAT(error_of(replaced(kCollective, "kind: ALL_GATHER ", "")),
              HasSubstr(f + ":10: workload.collective.kind: must be one of ALL_REDUCE"));
  EXPECT_THAT(error_of(replaced(kCollective, "bytes: \"1MiB\"", "bytes: \"1 parsec\"")),
              HasSubstr(f + ":10: workload.collective.bytes: "));
  EXPECT_THAT(error_of(replaced(kCollective, "chunks: 4", "chunks: 4 group_size: 9")),
              HasSubstr(f + ":10: workload.collective.group_size: the group needs 2 to 8 members (8 usable GPUs at a "
                            "stride of 1), got 9"));
  EXPECT_THAT(error_of(replaced(kCollective, "chunks: 4", "stride: 8")),
              HasSubstr("workload.collective.stride: the group needs 2 to 1 members"));
  EXPECT_THAT(error_of(kCollective, {"plan.strategy=epp"}),
              HasSubstr("plan.strategy: a collective benchmark (workload.collective) has no training strategy"));
}

// A ring of chips, one per node: the node has no fabric, so its link may be left out.
TEST_F(ScenarioFile, OneChipNodesNeedNoNodeLink) {
  const std::string ring = R"(name: "r"
model { preset: "llama2-7b" }
cluster {
  nodes: 8
  gpus_per_node: 1
  gpu { preset: "H100-SXM" }
  topology { torus { dims: [8] link { bandwidth: "50GB/s" latency: "500ns" } } }
}
workload { lengths { fixed: 1024 } global_batch: 8 max_length: 1024 }
)";
  const ResolvedScenario r = load(ring);
  ASSERT_TRUE(r.cluster.topology.has_value());
  EXPECT_EQ(std::get<TorusConfig>(r.cluster.topology->network).dims, std::vector<std::uint32_t>{8});
  EXPECT_DOUBLE_EQ(r.cluster.inter_node.bandwidth.value, 50e9);
  EXPECT_THAT(error_of(replaced(replaced(ring, "nodes: 8", "nodes: 4"), "gpus_per_node: 1", "gpus_per_node: 2")),
              HasSubstr("cluster.topology.node.link.bandwidth: must be set"));
}

TEST_F(ScenarioFile, ClusterNetworkPicksANetworkByName) {
  const std::string text = R"(name: "r"
model { preset: "llama2-7b" }
cluster {
  nodes: 8
  gpus_per_node: 1
  gpu { preset: "H100-SXM" }
  topology { name: "ring" torus { dims: [8] link { bandwidth: "50GB/s" latency: "500ns" } } }
  compare_topologies { name: "ft" fat_tree { radix: 8 levels: 2 link { bandwidth: "25GB/s" latency: "1us" } } }
}
workload { lengths { fixed: 1024 } global_batch: 8 max_length: 1024 }
)";
  const ResolvedScenario primary = load(text);
  EXPECT_EQ(primary.cluster.network_name(), "ring");
  const ResolvedScenario ft = load(text, {"cluster.network=ft"});
  EXPECT_EQ(ft.cluster.network_name(), "ft");
  ASSERT_EQ(ft.cluster.compare_topologies.size(), 1u);
  EXPECT_EQ(ft.cluster.compare_topologies[0].name, "ring");  // the one it replaced is compared now
  EXPECT_EQ(load(text, {"cluster.network=ring"}).cluster.network_name(), "ring");
  const ResolvedScenario simple = load(text, {"cluster.network=simple"});
  EXPECT_FALSE(simple.cluster.topology.has_value());
  EXPECT_EQ(simple.cluster.network_name(), "simple");
  EXPECT_DOUBLE_EQ(simple.cluster.inter_node.bandwidth.value, 50e9);  // the links of the topology it left
  EXPECT_THAT(error_of(text, {"cluster.network=rail"}),
              HasSubstr("cluster.network: no network is named 'rail' (networks: simple, ring, ft)"));
  EXPECT_THAT(error_of(replaced(text, "name: \"ft\"", "name: \"ring\"")), HasSubstr("two networks are named 'ring'"));
  EXPECT_EQ(load(kBase).cluster.network_name(), "simple");
}

TEST_F(ScenarioFile, FlexSpPresetIsAFieldNotAModelName) {
  const std::string gpt13b = replaced(kBase, "preset: \"llama2-7b\"", "preset: \"gpt-13b\"");
  // The model's name alone selects nothing.
  EXPECT_EQ(load(gpt13b).cost.flexsp_preset, nullptr);
  const ResolvedScenario r = load(gpt13b + "cost_model {\n  flexsp_preset: \"gpt-13b\"\n}\n");
  ASSERT_NE(r.cost.flexsp_preset, nullptr);
  EXPECT_EQ(r.cost.flexsp_preset->name, "gpt-13b");
  EXPECT_THAT(error_of(gpt13b + "cost_model {\n  flexsp_preset: \"gpt-14b\"\n}\n"),
              HasSubstr(":21: cost_model.flexsp_preset: unknown FlexSP preset \"gpt-14b\" (known: gpt-7b, gpt-13b, gpt-30b)"));
  EXPECT_THAT(error_of(std::string(kBase) + "cost_model {\n  flexsp_preset: \"gpt-13b\"\n}\n"),
              HasSubstr(":21: cost_model.flexsp_preset: FlexSP preset \"gpt-13b\" measured a model of 40 layers and "
                        "hidden size 5120, but the model has 32 layers and hidden size 4096"));
}

TEST_F(ScenarioFile, OverridesApplyBeforeValidationAndAreNamedInErrors) {
  const ResolvedScenario r = load(kBase, {"cluster.nodes=4", "cluster.gpu.preset=H100-SXM", "seed=99"});
  EXPECT_EQ(r.cluster.total_gpus(), 32u);
  EXPECT_EQ(r.cluster.gpu.name, "H100-SXM");
  EXPECT_EQ(r.workload.seed, 99u);
  EXPECT_EQ(r.proto.cluster().nodes(), 4u);

  EXPECT_EQ(error_of(kBase, {"cluster.nodes=0"}), file() + ": cluster.nodes: must be > 0, got 0 (set by --set cluster.nodes=0)");
  EXPECT_THAT(error_of(kBase, {"cluster.intra_node={bandwidth: \"fast\" latency: \"1us\"}"}),
              HasSubstr(": cluster.intra_node.bandwidth: "));
  EXPECT_THAT(error_of(kBase, {"cluster.intra_node={bandwidth: \"fast\" latency: \"1us\"}"}),
              HasSubstr("(set by --set cluster.intra_node={bandwidth: \"fast\" latency: \"1us\"})"));
  EXPECT_THAT(error_of(kBase, {"plan.packed_1f1b.pipeline_stagez=4"}),
              HasSubstr("--set plan.packed_1f1b.pipeline_stagez=4: plan.packed_1f1b has no field 'pipeline_stagez'"));
}

TEST(LoadScenario, MissingFileIsAnInputErrorNamingIt) {
  const auto dir = fresh_dir("missing");
  try {
    load_scenario(dir / "absent.textproto");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("absent.textproto"));
  }
}

TEST(ResolveScenario, WithoutAFileThereAreNoLines) {
  proto::Scenario s = parse_scenario_text(kBase, "mem");
  s.mutable_cluster()->set_nodes(0);
  try {
    resolve_scenario(s, "mem", ".");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "mem: cluster.nodes: must be > 0, got 0");
  }
  s.mutable_cluster()->set_nodes(1);
  EXPECT_EQ(resolve_scenario(s, "mem", ".").cluster.total_gpus(), 8u);
  EXPECT_THROW(parse_scenario_text("nonsense", "mem"), InputError);
}

// ---------------------------------------------------------------- shipped scenarios

TEST(EmbeddedShowcase, IsTheShippedFileAndResolves) {
  EXPECT_EQ(embedded_showcase_text(), read_file(EPPSIM_SOURCE_DIR "/scenarios/showcase.textproto"));
  const ResolvedScenario r = load_embedded_showcase();
  EXPECT_EQ(r.source, "<embedded showcase>");
  EXPECT_EQ(r.model.name, "llama2-7b");
  EXPECT_EQ(r.cluster.total_gpus(), 32u);
  EXPECT_EQ(r.cluster.gpu.name, "A800-80GB");
  EXPECT_EQ(r.plan.strategy, "epp");
  EXPECT_EQ(r.simulation.engine, "analytic");
  EXPECT_EQ(r.plan.memory_limit, Bytes(std::uint64_t{80} << 30));
  EXPECT_EQ(r.workload.lengths->name(), "longtail");
}

TEST(EmbeddedShowcase, TakesOverridesAndNamesItselfInErrors) {
  EXPECT_EQ(load_embedded_showcase({"cluster.nodes=8"}).cluster.total_gpus(), 64u);
  try {
    load_embedded_showcase({"workload.global_batch=0"});
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("<embedded showcase>: workload.global_batch: must be > 0, got 0 (set by --set"));
  }
}

TEST(ShippedScenarios, EveryTopLevelScenarioResolves) {
  const std::filesystem::path dir = EPPSIM_SOURCE_DIR "/scenarios";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    // NAME.expected.textproto files hold a scenario's expected results, not a scenario.
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".textproto" || name.ends_with(".expected.textproto")) continue;
    SCOPED_TRACE(entry.path().string());
    ++count;
    const ResolvedScenario r = load_scenario(entry.path());
    EXPECT_GT(r.cluster.total_gpus(), 0u);
    EXPECT_NE(r.cost.compute, nullptr);
    EXPECT_NE(r.workload.lengths, nullptr);
  }
  EXPECT_GE(count, 1);
}

}  // namespace
}  // namespace eppsim
