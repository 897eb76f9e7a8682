// The scenario's simulated faults: what resolution accepts and how it names
// what it rejects (field path and rule).
#include "scenario/scenario_faults.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kCluster = R"(name: "t"
model { preset: "llama2-7b" }
cluster {
  nodes: 2
  gpus_per_node: 2
  gpu { preset: "A100-80GB" }
  intra_node { bandwidth: "300GB/s" latency: "2us" }
  inter_node { bandwidth: "200Gbps" latency: "5us" }
  failures { nodes: 1 }
}
)";

ResolvedScenario resolve(const std::string& faults) {
  return resolve_simulation_part(parse_scenario(std::string(kCluster) + faults, "f.textproto", "."));
}

std::string error_of(const std::string& faults) {
  try {
    resolve(faults);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for:\n" << faults;
  return {};
}

TEST(ScenarioFaults, ResolvesEveryKindInScenarioOrder) {
  const auto s = resolve(R"(faults { at: "20ms" straggler { rank: 3 slowdown: 1.5 } }
faults { at: "1ms" link_degraded { link: "chip1-leaf0" bandwidth_factor: 0.25 } }
faults { at: "5ms" link_failure { link: "chip0-nodeswitch0" } }
faults { at: "0s" node_failure { node: 0 } }
)");
  ASSERT_EQ(s.simulation.faults.size(), 4u);
  EXPECT_EQ(s.simulation.faults[0].kind, FaultKind::Straggler);
  EXPECT_DOUBLE_EQ(s.simulation.faults[0].at.value, 0.02);
  EXPECT_EQ(s.simulation.faults[0].rank, 3u);
  EXPECT_DOUBLE_EQ(s.simulation.faults[0].factor, 1.5);
  EXPECT_EQ(s.simulation.faults[0].description(), "rank 3 computes 1.5x slower");
  EXPECT_EQ(s.simulation.faults[1].kind, FaultKind::LinkDegraded);
  EXPECT_EQ(s.simulation.faults[1].link.first, "chip1");
  EXPECT_EQ(s.simulation.faults[1].link.second, "leaf0");
  EXPECT_EQ(s.simulation.faults[1].description(), "link chip1-leaf0 at 25% of its bandwidth");
  EXPECT_EQ(s.simulation.faults[2].kind, FaultKind::LinkFailure);
  EXPECT_EQ(s.simulation.faults[2].path(), "faults[2]");
  EXPECT_EQ(s.simulation.faults[3].kind, FaultKind::NodeFailure);
  EXPECT_EQ(s.simulation.faults[3].at.value, 0.0);
}

TEST(ScenarioFaults, NamesTheFieldAndTheRule) {
  EXPECT_THAT(error_of("faults { at: \"1ms\" }\n"),
              HasSubstr("faults[0]: must set one fault: straggler, link_degraded, link_failure or node_failure"));
  EXPECT_THAT(error_of("faults { straggler { rank: 0 slowdown: 2 } }\n"), HasSubstr("faults[0].at: must be set"));
  EXPECT_THAT(error_of("faults { at: \"soon\" straggler { rank: 0 slowdown: 2 } }\n"), HasSubstr("faults[0].at: "));
  EXPECT_THAT(error_of("faults { at: \"-1ms\" straggler { rank: 0 slowdown: 2 } }\n"), HasSubstr("faults[0].at: "));
  EXPECT_THAT(error_of("faults { at: \"1e9s\" straggler { rank: 0 slowdown: 2 } }\n"),
              HasSubstr("faults[0].at: must be a time in [0 s, 1e+06 s]"));
  EXPECT_THAT(error_of("faults { at: \"0s\" straggler { rank: 0 slowdown: 1 } }\n"
                       "faults { at: \"0s\" straggler { rank: 0 slowdown: 0.5 } }\n"),
              HasSubstr("faults[1].straggler.slowdown: must be a finite factor >= 1"));
  EXPECT_THAT(error_of("faults { at: \"0s\" straggler { rank: 0 slowdown: inf } }\n"),
              HasSubstr("faults[0].straggler.slowdown: must be a finite factor >= 1"));
  EXPECT_THAT(error_of("faults { at: \"0s\" link_degraded { link: \"chip0-leaf0\" bandwidth_factor: 0 } }\n"),
              HasSubstr("faults[0].link_degraded.bandwidth_factor: must be in (0, 1]"));
  EXPECT_THAT(error_of("faults { at: \"0s\" link_degraded { link: \"chip0-leaf0\" bandwidth_factor: 1.5 } }\n"),
              HasSubstr("faults[0].link_degraded.bandwidth_factor: must be in (0, 1]"));
  EXPECT_THAT(error_of("faults { at: \"0s\" link_failure { link: \"chip0\" } }\n"),
              HasSubstr("faults[0].link_failure.link: must be \"A-B\""));
  EXPECT_THAT(error_of("faults { at: \"0s\" node_failure { node: 2 } }\n"),
              HasSubstr("faults[0].node_failure.node: node 2 does not exist (the cluster has 2 nodes)"));
  EXPECT_THAT(error_of("faults { at: \"0s\" node_failure { node: 1 } }\n"),
              HasSubstr("faults[0].node_failure.node: node 1 is already down before the run"));
  std::string many;
  for (int i = 0; i <= kMaxFaults; ++i) many += "faults { at: \"0s\" straggler { rank: 0 slowdown: 1 } }\n";
  EXPECT_THAT(error_of(many), HasSubstr("faults: at most 10000 faults, got 10001"));
  // The file is named too.
  EXPECT_THAT(error_of("faults { at: \"1ms\" }\n"), HasSubstr("f.textproto"));
}

}  // namespace
}  // namespace eppsim
