#pragma once
// Small scenarios for the sim tests, parsed from text so that they go through
// the same validation as users' files.
#include <string>

#include <fmt/format.h>

#include "traces/scenario.h"

namespace eppsim::testing {

// `nodes` x `gpus_per_node` A100-80GB, llama2-7b, fixed-length sequences.
inline ResolvedScenario fixed_length_scenario(std::uint32_t nodes, std::uint32_t gpus_per_node, std::uint32_t stages,
                                              std::uint32_t sequences, std::uint64_t length,
                                              std::uint64_t micro_batch_tokens, const std::string& extra_plan = "") {
  const std::string text = fmt::format(R"(
    name: "test"
    seed: 7
    model {{ preset: "llama2-7b" }}
    cluster {{
      nodes: {} gpus_per_node: {}
      gpu {{ preset: "A100-80GB" }}
      intra_node {{ bandwidth: "300GB/s" latency: "2us" }}
      inter_node {{ bandwidth: "200Gbps" latency: "5us" }}
    }}
    workload {{ lengths {{ fixed: {} }} global_batch: {} max_length: {} }}
    plan {{ strategy: "packed-1f1b" zero_stage: 1
            packed_1f1b {{ pipeline_stages: {} micro_batch_tokens: {} {} }} }}
  )",
                                       nodes, gpus_per_node, length, sequences, length, stages, micro_batch_tokens,
                                       extra_plan);
  return resolve_scenario(parse_scenario_text(text, "test.textproto"), "test.textproto", ".");
}

}  // namespace eppsim::testing
