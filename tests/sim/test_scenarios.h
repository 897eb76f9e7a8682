#pragma once
// Small scenarios for the sim tests, parsed from text so that they go through
// the same validation as users' files.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/closed_form_network.h"
#include "sim/engine/analytic_engine.h"
#include "sim/engine/compute_timer.h"
#include "sim/engine/network_model.h"
#include "traces/op_cost.h"
#include "traces/scenario.h"

namespace eppsim::testing {

// `nodes` x `gpus_per_node` A100-80GB with the sim tests' links (NVLink
// `intra_bandwidth`, 200 Gb/s NICs); `body` holds the name, seed, model,
// workload and plan; `source` names the file in error messages.
inline ResolvedScenario test_scenario(std::uint32_t nodes, std::uint32_t gpus_per_node, const std::string& body,
                                      const std::string& source = "test.textproto",
                                      const std::string& intra_bandwidth = "300GB/s") {
  const std::string text = fmt::format(R"(
    {}
    cluster {{
      nodes: {} gpus_per_node: {}
      gpu {{ preset: "A100-80GB" }}
      intra_node {{ bandwidth: "{}" latency: "2us" }}
      inter_node {{ bandwidth: "200Gbps" latency: "5us" }}
    }}
  )",
                                       body, nodes, gpus_per_node, intra_bandwidth);
  return resolve_scenario(parse_scenario_text(text, source), source, ".");
}

// The analytic engine's trace of `schedule` priced by the scenario's cost model
// (ResolvedScenario::cost, the default placement).
inline proto::Trace simulate(const ResolvedScenario& sc, const proto::Schedule& schedule) {
  return run_analytic(schedule, CostModelNetwork(*sc.cost), cost_model_timer(*sc.cost));
}

// Its step time.
inline std::int64_t simulate_step_ns(const ResolvedScenario& sc, const proto::Schedule& schedule) {
  return simulate(sc, schedule).step_time_ns();
}

// The closed forms (models/closed_form_network.h) over one `link` for every
// pair, in the engine's terms: `ranks` ranks on one node.
class UniformNetwork final : public NetworkModel {
 public:
  UniformNetwork(LinkParams link, std::uint32_t ranks) : network_(link, link, std::vector<std::uint32_t>(ranks, 0)) {}
  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const override {
    return network_.p2p_time(src_rank, dst_rank, size);
  }
  Seconds collective_time(proto::CollectiveKind kind, proto::CollectiveAlgorithm algorithm,
                          std::span<const std::uint32_t> ranks, Bytes size) const override {
    return network_.collective_time(to_model(kind), to_model(algorithm), ranks, size);
  }

 private:
  ClosedFormNetwork network_;
};

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
