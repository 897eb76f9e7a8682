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
// Tensor and context parallelism (plan.packed_1f1b.tensor_parallel = tp,
// context_parallel = cp, default 1): each data-parallel replica of a stage is a
// group of tp*cp consecutive ranks, TP innermost:
//   rank = stage * (dp*tp*cp) + replica * (tp*cp) + c * tp + t.
// Every rank of the group runs every micro-batch: its compute ops carry the whole
// chunk's segments, split TENSOR_PARALLEL over its TP group and CONTEXT_PARALLEL
// over its CP group (shards = tp*cp; flops, traffic and estimated time are its
// share). Weights, gradients and optimizer states are split over tp
// (CP replicates them); activations, workspaces and boundary sends over tp*cp
// (Megatron SP keeps the boundary tensor sequence-sharded over TP; CP shards the
// sequence), each rank sending its shard to the same (c, t) rank of the next stage.
// Data-parallel groups are the ranks of a stage with the same (c, t).
//   TP (Megatron-LM with sequence parallelism): per layer and pass, attention and
//   MLP each all-gather the T/tp sequence shard before and reduce-scatter after:
//   2 x (all-gather + reduce-scatter) of T*h*e = the ring volume of 2 all-reduces
//   of T*h*e. Aggregated into ONE ALL_REDUCE per micro-batch and pass (forward,
//   backward, and recompute with full_recompute) over the TP group, size
//   2 * layers * T * h * e, on the compute stream right after the pass
//   (Megatron does not overlap it). The aggregation counts the ring latency once
//   per pass instead of 2 * layers times.
//   CP (ring attention, Megatron-Core with TransformerEngine's P2P ring): each
//   pass runs layer by layer, each layer as PRE_ATTENTION, ATTENTION and
//   POST_ATTENTION ops (backward: POST, ATTENTION, PRE). Beside the ATTENTION op,
//   on streams "cp_ring_send" and "cp_ring_recv", cp - 1 ring steps: each rank
//   sends its current K/V block to the next rank of its CP group's ring and
//   receives the previous rank's; a step forwards the block the last one received
//   (sizes: ring_attention_step_bytes, K+V per step forward and recompute, K/V and
//   dK/dV backward, 1/tp of the heads). The ring starts when the part before
//   attention is done, and the part after waits for the attention and the ring:
//   a layer exposes max(0, ring time - attention time). One ATTENTION op stands
//   for the rank's d blocks, so the last block's attention, which in the real
//   ring waits for the last step, is counted as overlapping it too: the closed
//   form this replaces charged (d-1) * max(0, step - attention / d), more for
//   short attention (a ComputeOp cannot carry 1/d of a layer's attention).
//
// Streams per rank: "compute" (compute and memory ops), "recv_prev" and
// "send_next" (activations), "recv_next" and "send_prev" (gradients), "comm"
// (collectives). Receives are posted ahead on their own streams, as NCCL
// pipelines do, so sends never wait on the peer's compute order.
#include "models/chunk.h"
#include "sim/plan/planner.h"

namespace eppsim {

// plan.packed_1f1b and plan.zero_stage, resolved and checked.
struct Packed1F1BOptions {
  std::uint32_t pipeline_stages = 1;
  std::uint64_t micro_batch_tokens = 0;
  std::uint32_t tensor_parallel = 1;   // tp (0 in the scenario means 1)
  std::uint32_t context_parallel = 1;  // cp (0 in the scenario means 1)
  bool full_recompute = false;
  std::uint32_t zero_stage = 0;        // 0 to 2
};

// Checks: pipeline_stages > 0 dividing the usable GPUs and at most the model's
// layers; micro_batch_tokens > 0; tp inside a node and dividing the heads;
// tp x cp x stages dividing the GPUs; ZeRO stage at most 2. InputError located
// by the scenario's FieldLocator.
Packed1F1BOptions resolve_packed_1f1b_options(const ResolvedScenario& scenario);

class Packed1F1BPlanner final : public Planner {
 public:
  explicit Packed1F1BPlanner(Packed1F1BOptions options) : options_(options) {}
  std::string name() const override { return "packed-1f1b"; }
  proto::Schedule plan(const PlanContext& scenario, std::span<const std::uint64_t> sequence_lengths) const override;

 private:
  Packed1F1BOptions options_;
};

// Layers of each of `stages` stages: as even as possible, the first stages take
// the remainder.
std::vector<std::uint32_t> split_layers(std::uint32_t layers, std::uint32_t stages);

// Micro-batch order of one stage of a 1F1B pipeline: true = forward of the next
// micro-batch, false = backward of the oldest one. Warm-up has
// min(stages - stage - 1, micro_batches) forwards.
std::vector<bool> one_f_one_b_order(std::uint32_t stage, std::uint32_t stages, std::uint32_t micro_batches);

// One pipeline stage's share of the model, shared by the pipeline planners.
struct StageShape {
  std::uint32_t first_layer = 0;
  std::uint32_t layer_count = 0;
  bool first = false;
  bool last = false;
  double params = 0.0;  // parameters held by the stage (embedding on the first, head on the last)
};
std::vector<StageShape> stage_shapes(const TransformerSpec& model, std::uint32_t stages);

class ScheduleBuilder;
// A pipeline rank's step end, after its last backward `last`: its gradients
// (`params` parameters at training precision) reduced over `group` of
// `group_size` ranks (all-reduce for ZeRO-0/1, reduce-scatter for ZeRO-2) on
// `comm_stream`, Adam on its shard (28 bytes of traffic and 12 FLOPs per
// parameter), and for ZeRO-1/2 the updated weights all-gathered.
void emit_gradient_step(ScheduleBuilder& builder, const PlanContext& scenario, std::uint32_t rank,
                        std::uint32_t compute_stream, std::uint32_t comm_stream, std::uint32_t group,
                        std::uint32_t group_size, const StageShape& shape, std::uint32_t stage, double params,
                        std::uint32_t zero_stage, std::uint32_t last);

}  // namespace eppsim
