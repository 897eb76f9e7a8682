#pragma once
// ZeRO communication per training step, per rank of a data-parallel (ZeRO) group
// of d ranks, for one parameter group of P parameters (before sharding): a layer,
// a bucket or a whole stage. Call it once per group you want as one collective
// (ZeRO-3 implementations gather layer by layer, prefetching the next layer
// during the current one; ZeRO-0/1/2 reduce in gradient buckets).
//
// Collectives (w = weight bytes per parameter, gr = gradient bytes per parameter):
//   ZeRO-0  all-reduce of gradients (P*gr), once per step after the last backward
//   ZeRO-1  reduce-scatter of gradients (P*gr), once per step after the last backward;
//           all-gather of updated weights (shard P*w/d), once after the optimizer
//   ZeRO-2  reduce-scatter of gradients after EVERY micro-batch's backward (only the
//           shard of the gradients is kept, so accumulation happens on shards);
//           all-gather of updated weights once after the optimizer
//   ZeRO-3  per micro-batch: all-gather of weights (shard P*w/d) before the forward,
//           again before the backward (the gathered weights are released after the
//           forward: DeepSpeed's and FSDP's default), and reduce-scatter of gradients
//           after the backward. No gather after the optimizer (each rank updates its
//           own shard). Zero3Gather::ForwardOnly keeps the gathered weights from the
//           forward to the backward instead (FSDP reshard_after_forward=false): one
//           gather per micro-batch, more memory.
//   Choice: gathers and reduce-scatters repeat per micro-batch, not once per step;
//   prefetching hides them behind compute but does not remove them. Recompute
//   reuses the weights gathered for the backward (it runs right before it).
//
// Sizes follow schedule.proto's size_bytes (all-reduce and reduce-scatter: the
// whole vector; all-gather: the per-rank shard). Bytes each rank sends per
// occurrence, ring algorithms: all-reduce 2(d-1)/d * S, reduce-scatter (d-1)/d * S,
// all-gather (d-1) * S. With d = 1 there is no collective.
#include <cstdint>
#include <string_view>
#include <vector>

#include "models/units.h"

namespace eppsim {

enum class ZeroCollectiveKind { AllReduce, ReduceScatter, AllGather };

enum class ZeroPhase {
  BeforeForward,   // of each micro-batch (ZeRO-3)
  BeforeBackward,  // of each micro-batch (ZeRO-3)
  AfterBackward,   // of each micro-batch (ZeRO-2/3) or of the step's last one (ZeRO-0/1)
  AfterOptimizer,  // once per step (ZeRO-1/2)
};

struct ZeroCollective {
  ZeroCollectiveKind kind = ZeroCollectiveKind::AllReduce;
  ZeroPhase phase = ZeroPhase::AfterBackward;
  std::string_view tensor;       // "gradients" or "weights"
  bool per_micro_batch = false;  // repeats every micro-batch; else once per step
  Bytes size;                    // the collective's size_bytes
  Bytes sent;                    // each rank sends per occurrence (ring)
};

enum class Zero3Gather {
  ForwardAndBackward,  // gather before forward and again before backward (default)
  ForwardOnly,         // gather before forward, keep until the backward
};

struct ZeroTrafficOptions {
  std::uint32_t stage = 0;                // 0..3
  std::uint32_t data_parallel = 1;        // ranks sharing (sharding) the states, >= 1
  std::uint32_t micro_batches = 1;        // per step, >= 1
  Zero3Gather zero3_gather = Zero3Gather::ForwardAndBackward;
  double weight_bytes_per_param = 2.0;    // bf16 weights gathered
  double gradient_bytes_per_param = 2.0;  // bf16 gradients reduced
};

struct ZeroStepTraffic {
  std::vector<ZeroCollective> collectives;  // in step order
  std::uint32_t micro_batches = 1;
  // ZeRO-3 with d > 1: the unsharded weight buffer one gather materialises (P*w),
  // live while the group's layers run (from the forward to the backward with
  // ForwardOnly), on top of model_state_bytes' shard; 0 otherwise.
  Bytes gathered_weights;

  // Bytes each rank sends over the step: per-micro-batch collectives count micro_batches times.
  Bytes sent_per_step() const;
  // Occurrences over the step.
  std::uint32_t collectives_per_step() const;
};

// Throws InputError for a stage > 3, data_parallel or micro_batches 0, a negative
// or non-finite parameter count, or byte sizes per parameter not finite and > 0.
ZeroStepTraffic zero_step_traffic(double params, const ZeroTrafficOptions& options);

}  // namespace eppsim
