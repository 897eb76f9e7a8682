#pragma once
// `packed-1f1b`, Megatron-LM-like: the global batch is split over data-parallel
// replicas (longest-processing-time first by estimated cost), each replica's
// sequences are packed best-fit-decreasing into micro-batches of at most
// `micro_batch_tokens` tokens, layers are split evenly over `pipeline_stages`
// stages, and each replica runs its micro-batches through a non-interleaved
// 1F1B pipeline. After the last backward, each stage's data-parallel group
// synchronises gradients (all-reduce for ZeRO-0/1, reduce-scatter for ZeRO-2),
// runs the optimizer on its shard and, for ZeRO-1/2, all-gathers the weights.
//
// Ranks are stage-major: rank = stage * data_parallel + replica, so with
// nodes of 8 GPUs the data-parallel groups sit inside nodes and the pipeline
// crosses them.
//
// Streams per rank: "compute" (compute and memory ops), "recv_prev" and
// "send_next" (activations), "recv_next" and "send_prev" (gradients), "comm"
// (collectives). Receives are posted ahead on their own streams, as NCCL
// pipelines do, so sends never wait on the peer's compute order.
#include "sim/plan/planner.h"

namespace eppsim {

class Packed1F1BPlanner final : public Planner {
 public:
  std::string name() const override { return "packed-1f1b"; }
  proto::Schedule plan(const ResolvedScenario& scenario, std::span<const std::uint64_t> sequence_lengths) const override;
};

// Layers of each of `stages` stages: as even as possible, the first stages take
// the remainder.
std::vector<std::uint32_t> split_layers(std::uint32_t layers, std::uint32_t stages);

// Micro-batch order of one stage of a 1F1B pipeline: true = forward of the next
// micro-batch, false = backward of the oldest one. Warm-up has
// min(stages - stage - 1, micro_batches) forwards.
std::vector<bool> one_f_one_b_order(std::uint32_t stage, std::uint32_t stages, std::uint32_t micro_batches);

}  // namespace eppsim
