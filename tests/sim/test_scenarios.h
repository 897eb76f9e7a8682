#pragma once
// Small scenarios for the sim tests, parsed from text so that they go through
// the same validation as users' files.
#include <cstdint>
#include <string>
#include <vector>

#include <stdexcept>

#include <fmt/format.h>

#include "models/network/closed_form_network.h"
#include "base/errors.h"
#include "sim/engine/analytic_engine.h"
#include "sim/plan/planner.h"
#include "schedule/op_cost.h"
#include "schedule/program_ops.h"
#include "scenario/scenario.h"
#include "schedule/shared_compute.h"

namespace eppsim::testing {

// The shipped quickstart (scenarios/quickstart.textproto: packed 1F1B on 16
// A100s, Wikipedia lengths), the sim tests' everyday scenario.
inline ResolvedScenario load_quickstart(const std::vector<std::string>& overrides = {}) {
  return load_scenario(EPPSIM_SOURCE_DIR "/scenarios/quickstart.textproto", overrides);
}

// The text of a scenario on `nodes` x `gpus_per_node` A100-80GB with the sim
// tests' links (NVLink `intra_bandwidth`, 200 Gb/s NICs); `body` holds the
// name, seed, model, workload and plan, its first line on line 2.
inline std::string test_scenario_text(std::uint32_t nodes, std::uint32_t gpus_per_node, const std::string& body,
                                      const std::string& intra_bandwidth = "300GB/s") {
  return fmt::format(R"(
{}
    cluster {{
      nodes: {} gpus_per_node: {}
      gpu {{ preset: "A100-80GB" }}
      intra_node {{ bandwidth: "{}" latency: "2us" }}
      inter_node {{ bandwidth: "200Gbps" latency: "5us" }}
    }}
  )",
                     body, nodes, gpus_per_node, intra_bandwidth);
}

// That scenario resolved; `source` names the file in error messages.
inline ResolvedScenario test_scenario(std::uint32_t nodes, std::uint32_t gpus_per_node, const std::string& body,
                                      const std::string& source = "test.textproto",
                                      const std::string& intra_bandwidth = "300GB/s") {
  const std::string text = test_scenario_text(nodes, gpus_per_node, body, intra_bandwidth);
  return resolve_scenario(parse_scenario_text(text, source), source, ".");
}

// What `eppsim run` reports for the scenario `text`, read as "s.textproto"
// with `overrides`: the InputError of resolving it and building its
// strategy's planner, or "" when both succeed.
inline std::string planner_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    const ResolvedScenario scenario = resolve_full(parse_scenario(text, "s.textproto", ".", overrides));
    make_planner(scenario.plan.strategy, scenario);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The analytic engine's trace of `schedule` priced by the scenario's cost model
// (ScenarioCost::model, the default placement), endpoints shared on its nodes.
inline proto::Trace simulate(const ResolvedScenario& sc, const proto::Schedule& schedule) {
  std::vector<std::uint32_t> node_of_rank;
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) node_of_rank.push_back(sc.node_of_rank(r));
  AnalyticEngineOptions options;
  options.node_of_rank = node_of_rank;
  return run_analytic(schedule, *sc.cost.model, options);
}

// Its step time.
inline std::int64_t simulate_step_ns(const ResolvedScenario& sc, const proto::Schedule& schedule) {
  return simulate(sc, schedule).step_time_ns();
}

// Communication by the closed forms (models/network/closed_form_network.h) over one
// `link` for every pair (`ranks` ranks on one node); no compute: schedules run
// on it carry fixed durations (with_planner_estimates).
class UniformNetworkCost final : public CostModel {
 public:
  UniformNetworkCost(LinkParams link, std::uint32_t ranks) : network_(link, link, std::vector<std::uint32_t>(ranks, 0)) {}
  ComputeCost compute_cost(const ComputeWork&) const override {
    throw std::logic_error("UniformNetworkCost prices communication only; fix compute durations first");
  }
  Seconds optimizer_time(Bytes) const override {
    throw std::logic_error("UniformNetworkCost prices communication only; fix compute durations first");
  }
  const NetworkTimeModel& network() const override { return network_; }

 private:
  ClosedFormNetwork network_;
};

// `schedule` with every COMPUTE op fixed at the planner's estimate
// (estimated_duration_ns), as an imported trace fixes its durations.
inline proto::Schedule with_planner_estimates(proto::Schedule schedule) {
  for (auto& program : *schedule.mutable_programs()) {
    for (const OpView op : ops_of(program)) {
      if (!op.is_compute()) continue;
      set_duration(program, op.index(), proto::DURATION_FIXED, compute_of(schedule, op).estimated_duration_ns());
    }
  }
  return schedule;
}

// `nodes` x `gpus_per_node` A100-80GB, llama2-7b, fixed-length sequences.
inline ResolvedScenario fixed_length_scenario(std::uint32_t nodes, std::uint32_t gpus_per_node, std::uint32_t stages,
                                              std::uint32_t sequences, std::uint64_t length,
                                              std::uint64_t micro_batch_tokens, const std::string& extra_plan = "") {
  return test_scenario(nodes, gpus_per_node,
                       fmt::format(R"(
    name: "test"
    seed: 7
    model {{ preset: "llama2-7b" }}
    workload {{ lengths {{ fixed: {} }} global_batch: {} max_length: {} }}
    plan {{ strategy: "packed-1f1b" zero_stage: 1
            packed_1f1b {{ pipeline_stages: {} micro_batch_tokens: {} {} }} }}
  )",
                                   length, sequences, length, stages, micro_batch_tokens, extra_plan));
}

}  // namespace eppsim::testing
