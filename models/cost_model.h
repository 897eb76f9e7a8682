#pragma once
// The one cost model: what every op of a Schedule costs on a cluster. Planners
// (to decide) and engines (to time) use the same object, so a plan is scored
// by the model it was made with.
//
// A CostModel is bound to a placement: ranks 0..N-1 on the chips the Schedule
// places them on. It answers four questions:
//   compute_cost     a pass over a chunk's layers (or a part of each layer),
//                    this rank's share when the chunk is split over `shards`
//                    GPUs: its FLOPs, HBM traffic and time (compute_time)
//   optimizer_time   an optimizer step that moves `memory_traffic` through HBM
//   p2p_time         one message between two ranks, nothing else on the wire
//   collective_time  one collective over a group of ranks, nothing else on the wire
//                    (and collective_route: how it runs, as steps)
// The last two are its network's (network(), network_time_model.h).
// The answers are uncontended durations. Engines that model contention (the
// flow engine, shared endpoints) use the same routes and algorithms but decide
// themselves when a transfer ends.
//
// Implementation: models/cluster_cost_model.h composes a compute model
// (roofline or calibrated fits) with a network time model (the simple
// cluster's closed forms or routed over a topology); scenario/cost_model_factory.h
// builds it from a scenario's `cost_model` block.
#include <cstdint>
#include <span>

#include "models/chunk.h"
#include "models/comm_kind.h"
#include "models/network_time_model.h"
#include "base/units.h"

namespace eppsim {

// Which part of each layer a compute op runs (schedule.proto's LayerPart).
enum class LayerPart : std::uint8_t { Whole, PreAttention, Attention, PostAttention };

struct FlopCount {
  double gemm = 0.0;
  double attention = 0.0;
  double total() const { return gemm + attention; }
};

struct ComputeCost {
  FlopCount flops;
  Bytes memory_traffic;  // weights read + activations read and written
  Seconds time;
};

struct ComputeWork {
  Pass pass = Pass::Forward;
  ChunkWork chunk;
  LayerPart part = LayerPart::Whole;
  std::uint32_t shards = 1;  // GPUs sharing the chunk (SP x TP x CP); this rank does 1/shards
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual ComputeCost compute_cost(const ComputeWork& work) const = 0;
  Seconds compute_time(const ComputeWork& work) const { return compute_cost(work).time; }
  virtual Seconds optimizer_time(Bytes memory_traffic) const = 0;
  // The communication half: messages, collectives and how each collective
  // runs, over this placement (network_time_model.h).
  virtual const NetworkTimeModel& network() const = 0;

  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const {
    return network().p2p_time(src_rank, dst_rank, size);
  }
  Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                          Bytes size) const {
    return network().collective_time(kind, algorithm, ranks, size);
  }
  CollectiveRoute collective_route(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                                   Bytes size) const {
    return network().collective_route(kind, algorithm, ranks, size);
  }
  bool fitted_p2p(std::uint32_t src_rank, std::uint32_t dst_rank) const {
    return network().fitted_p2p(src_rank, dst_rank);
  }
  bool fitted_collective(CommKind kind, std::span<const std::uint32_t> ranks) const {
    return network().fitted_collective(kind, ranks);
  }
};

}  // namespace eppsim
