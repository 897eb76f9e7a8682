// `eppsim topo` as a library: every shipped scenario with a cluster.topology
// is a topology study that must run, satisfy the report's invariants and, where
// scenarios/NAME.topology.expected.textproto exists, reproduce its expected values
// (fields of TopologyReport; "NAME:field" addresses the comparison NAME).
// railx_200k must also reproduce the shape of the RailX paper's claims.
#include "tests/sim/test_scenarios.h"
#include "sim/topo.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/proto_io.h"
#include "proto/report.pb.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;

fs::path source_path(const std::string& relative) { return fs::path(EPPSIM_SOURCE_DIR) / relative; }

std::vector<std::string> topology_scenarios() {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(source_path("scenarios"))) {
    const auto name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".textproto" ||
        name.find(".expected.") != std::string::npos || entry.path().parent_path().filename() == "studies" ||
        name == "sweep.textproto") {  // sweeps, not scenarios
      continue;
    }
    proto::Scenario scenario;
    read_message(entry.path(), &scenario);
    if (scenario.cluster().has_topology()) found.push_back(fs::relative(entry.path(), EPPSIM_SOURCE_DIR).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Each study runs once per test program (railx_200k takes seconds).
const proto::TopologyReport& study(const std::string& relative) {
  static std::map<std::string, proto::TopologyReport> cache;
  auto it = cache.find(relative);
  if (it == cache.end()) it = cache.emplace(relative, run_topology_study(load_scenario(source_path(relative), {}, ScenarioPart::Cluster))).first;
  return it->second;
}

const proto::TopologyReport* comparison(const proto::TopologyReport& report, const std::string& name) {
  for (const auto& c : report.comparisons()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

double report_field(const proto::TopologyReport& report, const std::string& path) {
  const proto::TopologyReport* target = &report;
  std::string field = path;
  if (const auto colon = path.find(':'); colon != std::string::npos) {
    target = comparison(report, path.substr(0, colon));
    if (target == nullptr) {
      ADD_FAILURE() << "expected value names no comparison: " << path;
      return NAN;
    }
    field = path.substr(colon + 1);
  }
  const auto* descriptor = target->GetDescriptor()->FindFieldByName(field);
  if (descriptor == nullptr || descriptor->is_repeated() ||
      descriptor->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) {
    ADD_FAILURE() << "expected value names no numeric TopologyReport field: " << path;
    return NAN;
  }
  return target->GetReflection()->GetDouble(*target, descriptor);
}

void check_invariants(const proto::TopologyReport& r, double chips) {
  SCOPED_TRACE(r.name());
  EXPECT_FALSE(r.name().empty());
  EXPECT_FALSE(r.kind().empty());
  EXPECT_EQ(r.chips(), chips);
  EXPECT_GT(r.nodes(), 0);
  EXPECT_GT(r.links(), 0);
  EXPECT_GT(r.cost_usd(), 0);
  EXPECT_GT(r.injection_bandwidth_bps(), 0);
  EXPECT_GT(r.bisection_bandwidth_bps(), 0);
  EXPECT_GT(r.allreduce_bandwidth_bps(), 0);
  EXPECT_GT(r.alltoall_bandwidth_bps(), 0);
  EXPECT_LE(r.alltoall_bandwidth_bps(), r.allreduce_bandwidth_bps() * (1 + 1e-12));
  EXPECT_NEAR(r.injection_bandwidth_bps(), r.injection_bandwidth_per_chip_bps() * r.live_chips(),
              1e-9 * r.injection_bandwidth_bps());
  EXPECT_NEAR(r.cost_per_injection_bps(), r.cost_usd() / r.injection_bandwidth_bps(), 1e-12 * r.cost_per_injection_bps());
  EXPECT_NEAR(r.cost_per_bisection_bps(), r.cost_usd() / r.bisection_bandwidth_bps(), 1e-12 * r.cost_per_bisection_bps());
  EXPECT_GE(r.diameter_hops(), r.inter_node_diameter_hops());
  EXPECT_GE(r.inter_node_diameter_hops(), 1);
  EXPECT_GT(r.cost_per_injection_vs_fat_tree(), 0);
  EXPECT_GT(r.cost_per_bisection_vs_fat_tree(), 0);
  EXPECT_GE(r.build_time_s(), 0);
  EXPECT_GT(r.fat_tree().cost_usd(), 0);
  EXPECT_EQ(r.prices().optical_switch_port_usd(), default_network_prices().optical_switch_port_usd);
}

class TopologyStudy : public ::testing::TestWithParam<std::string> {};

TEST_P(TopologyStudy, RunsAndMeetsItsExpectations) {
  const auto& report = study(GetParam());
  EXPECT_FALSE(report.scenario().empty());
  EXPECT_FALSE(report.eppsim_version().empty());
  check_invariants(report, report.chips());
  for (const auto& c : report.comparisons()) {
    check_invariants(c, report.chips());
    // One reference fat-tree for the whole study.
    EXPECT_EQ(c.fat_tree().port_bandwidth_bps(), report.fat_tree().port_bandwidth_bps()) << c.name();
    EXPECT_TRUE(c.comparisons().empty());
  }

  auto expected_path = source_path(GetParam());
  expected_path.replace_extension(".topology.expected.textproto");
  if (!fs::exists(expected_path)) return;
  proto::ExpectedReport expected;
  read_message(expected_path, &expected);
  ASSERT_GT(expected.values_size(), 0) << expected_path;
  for (const auto& value : expected.values()) {
    EXPECT_NEAR(report_field(report, value.field()), value.value(), value.relative_tolerance() * std::abs(value.value()))
        << GetParam() << ": " << value.field();
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, TopologyStudy, ::testing::ValuesIn(topology_scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(TopologyStudies, TheShippedOnesAreFound) {
  const auto found = topology_scenarios();
  for (const char* name : {"scenarios/railx_200k.textproto", "scenarios/topology_small.textproto",
                           "scenarios/railx_failures.textproto", "scenarios/fat_tree_64k.textproto"}) {
    EXPECT_NE(std::find(found.begin(), found.end(), name), found.end()) << name;
  }
}

// The RailX paper (railx.md 1): inter-node diameter 2-4 hops; cost per
// injection (All-Reduce) bandwidth under 10% of a fat-tree's, per bisection
// (All-to-All) bandwidth under 50%; 200K chips at 1.8 TB/s for about $1.3B.
TEST(RailX200K, ReproducesThePapersShape) {
  const auto& r = study("scenarios/railx_200k.textproto");
  EXPECT_EQ(r.kind(), "railx-all-to-all");
  EXPECT_EQ(r.chips(), 199712);
  EXPECT_DOUBLE_EQ(r.injection_bandwidth_per_chip_bps(), 900e9);  // 1.8 TB/s bidirectional
  EXPECT_GE(r.inter_node_diameter_hops(), 2);
  EXPECT_LE(r.inter_node_diameter_hops(), 4);
  EXPECT_LT(r.cost_per_injection_vs_fat_tree(), 0.10);
  EXPECT_LT(r.cost_per_bisection_vs_fat_tree(), 0.50);
  EXPECT_NEAR(r.cost_usd(), 1.3e9, 0.1e9);
  // All-reduce runs at the injection bandwidth: the same ratio.
  EXPECT_DOUBLE_EQ(r.allreduce_bandwidth_bps(), r.injection_bandwidth_per_chip_bps());
  EXPECT_EQ(r.inventory().electrical_switch_ports(), 0);

  const auto* rail = comparison(r, "rail-only");
  const auto* torus = comparison(r, "torus-3d");
  ASSERT_NE(rail, nullptr);
  ASSERT_NE(torus, nullptr);
  // Same chips and injection bandwidth everywhere.
  EXPECT_DOUBLE_EQ(rail->injection_bandwidth_per_chip_bps(), 900e9);
  EXPECT_DOUBLE_EQ(torus->injection_bandwidth_per_chip_bps(), 900e9);
  // The rail tree is "extremely expensive"; the torus has "insufficient
  // bisection bandwidth" (the paper's words for its baselines).
  EXPECT_GT(rail->cost_usd(), 10 * r.cost_usd());
  EXPECT_LT(r.cost_per_bisection_bps(), torus->cost_per_bisection_bps() / 10);
  EXPECT_LT(r.cost_per_alltoall_bps(), rail->cost_per_alltoall_bps());
  EXPECT_GT(torus->diameter_hops(), 4 * r.diameter_hops());
}

TEST(TopologySmall, RailXBeatsTheTreesPerUnitOfBandwidth) {
  const auto& r = study("scenarios/topology_small.textproto");
  ASSERT_EQ(r.comparisons_size(), 3);
  EXPECT_EQ(r.inter_node_diameter_hops(), 2);
  for (const auto& c : r.comparisons()) {
    EXPECT_EQ(c.injection_bandwidth_per_chip_bps(), r.injection_bandwidth_per_chip_bps()) << c.name();
    EXPECT_LT(r.cost_per_injection_bps(), c.cost_per_injection_bps()) << c.name();
    EXPECT_LT(r.cost_per_bisection_bps(), c.cost_per_bisection_bps()) << c.name();
  }
  // The built 2-level fat-tree costs about what the closed form says.
  const auto* ft = comparison(r, "fat-tree");
  ASSERT_NE(ft, nullptr);
  EXPECT_GT(ft->cost_per_injection_vs_fat_tree(), 0.99);
  EXPECT_LT(ft->cost_per_injection_vs_fat_tree(), 1.25);
  EXPECT_EQ(ft->fat_tree().levels(), 2);
}

TEST(RailXFailures, ReportsWhatWasLostAndRebuilt) {
  const auto& r = study("scenarios/railx_failures.textproto");
  ASSERT_TRUE(r.has_failures());
  const auto& f = r.failures();
  EXPECT_EQ(f.failed_nodes(), 1);
  EXPECT_EQ(f.chips_lost(), 8);
  EXPECT_EQ(r.live_chips(), 640);
  EXPECT_GT(f.injection_lost_bps(), 8 * 200e9);  // the node's chips, and ports left unpatched
  EXPECT_GT(f.bisection_lost_bps(), 0);
  EXPECT_EQ(f.rebuilt_rows_size(), 1);
  EXPECT_EQ(f.rebuilt_rows(0), 4);
  EXPECT_EQ(f.rebuilt_columns_size(), 1);
  EXPECT_GT(f.rail_links_lost(), 0);
  EXPECT_FALSE(f.notes().empty());
  // Still 2 inter-node hops across the rebuilt grid.
  EXPECT_EQ(r.inter_node_diameter_hops(), 2);
  ASSERT_TRUE(f.has_healthy());
  EXPECT_EQ(f.healthy().live_chips(), 648);
  EXPECT_DOUBLE_EQ(f.healthy().injection_bandwidth_bps() - r.injection_bandwidth_bps(), f.injection_lost_bps());
}

// Without cluster.topology, the simple cluster is measured.
TEST(TopologyStudies, TheSimpleClusterWithoutATopology) {
  const auto r = run_topology_study(testing::load_quickstart());
  EXPECT_EQ(r.kind(), "simple");
  EXPECT_EQ(r.chips(), 16);
  EXPECT_EQ(r.comparisons_size(), 0);
  EXPECT_EQ(r.diameter_hops(), 2);
  EXPECT_EQ(r.inter_node_diameter_hops(), 2);
  EXPECT_DOUBLE_EQ(r.injection_bandwidth_per_chip_bps(), 25e9);  // 200 Gb/s
  EXPECT_FALSE(r.has_failures());
}

// `eppsim topo` needs the cluster only: no model, workload or plan.
TEST(TopologyStudies, AScenarioWithOnlyACluster) {
  const std::string text = R"(name: "racks"
cluster {
  nodes: 4 gpus_per_node: 8
  gpu { preset: "H100-SXM" }
  intra_node { bandwidth: "450GB/s" latency: "1us" }
  topology { fat_tree { radix: 8 levels: 2 link { bandwidth: "400Gbps" latency: "1us" } } }
}
)";
  const auto r = run_topology_study(resolve_cluster_part(parse_scenario(text, "racks.textproto", ".")));
  EXPECT_EQ(r.scenario(), "racks");
  EXPECT_EQ(r.kind(), "fat-tree");
  EXPECT_EQ(r.chips(), 32);
  EXPECT_DOUBLE_EQ(r.injection_bandwidth_per_chip_bps(), 50e9);  // 400 Gb/s
  // A broken plan is no concern of topo's.
  const auto with_bad_plan = parse_scenario(text + "plan { strategy: \"magic\" zero_stage: 9 }\n", "racks.textproto", ".");
  EXPECT_EQ(run_topology_study(resolve_cluster_part(with_bad_plan)).chips(), 32);
  EXPECT_THROW(resolve_full(with_bad_plan), InputError);
}

// topology.json carries the fields of the output contract (docs/guide/running.md), as numbers.
TEST(TopologyJson, HasTheContractFields) {
  const auto& report = study("scenarios/topology_small.textproto");
  const fs::path dir = fs::temp_directory_path() / ("eppsim_topo_test_" + std::to_string(::getpid()));
  write_topology_report(report, dir);
  const std::string json = read_file(dir / "topology.json");
  fs::remove_all(dir);
  for (const char* field :
       {"chips", "nodes", "links", "diameter_hops", "inter_node_diameter_hops", "injection_bandwidth_Bps",
        "bisection_bandwidth_Bps", "allreduce_bandwidth_Bps", "alltoall_bandwidth_Bps", "cost_usd",
        "cost_per_injection_Bps", "cost_per_bisection_Bps", "build_time_s", "cost_per_injection_vs_fat_tree",
        "cost_per_bisection_vs_fat_tree"}) {
    const std::string key = std::string("\"") + field + "\": ";
    const auto at = json.find(key);
    ASSERT_NE(at, std::string::npos) << field;
    const char next = json[at + key.size()];
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(next)) || next == '-') << field << " is not a number";
  }
  proto::TopologyReport back;
  from_json(json, &back, "topology.json");
  EXPECT_EQ(back.SerializeAsString(), report.SerializeAsString());
}

TEST(TopologySummary, OneLinePerNetwork) {
  const auto& report = study("scenarios/topology_small.textproto");
  const auto text = topology_summary(report);
  for (const char* name : {"railx", "fat-tree", "rail-optimized", "torus-3d"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace eppsim
