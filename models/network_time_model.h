#pragma once
// How long communication takes over a placement of ranks: the network half of
// the cost model (models/cost_model.h). Implementations: the simple cluster's
// closed forms (closed_form_network.h) and routing over a topology
// (routed_network.h). (The dollar cost of a network is
// models/topology/network_cost.h.)
//
// A NetworkTimeModel is bound to a placement: ranks 0..N-1 on chips chosen when
// it was built. Both answers are uncontended durations; `size` follows
// schedule.proto's size_bytes (send/recv: the message; all-reduce and
// reduce-scatter: the whole vector; all-gather: the per-rank input; all-to-all:
// the per-rank send buffer; broadcast: the message).
#include <cstdint>
#include <span>

#include "models/cost_model.h"
#include "base/units.h"

namespace eppsim {

class NetworkTimeModel {
 public:
  virtual ~NetworkTimeModel() = default;
  // One message from `src_rank` to `dst_rank`, nothing else on the wire (0 to itself).
  virtual Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const = 0;
  // One collective over `ranks` (0 for fewer than two).
  virtual Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                                  std::span<const std::uint32_t> ranks, Bytes size) const = 0;
  // Whether a measured fit prices this message / this collective whole (a
  // calibration's, models/network/calibrated_network.h), so that an engine
  // that runs the network itself (the flow engine) takes the fitted time
  // instead of running its flows. Models without fits: never.
  virtual bool fitted_p2p(std::uint32_t /*src_rank*/, std::uint32_t /*dst_rank*/) const { return false; }
  virtual bool fitted_collective(CommKind /*kind*/, std::span<const std::uint32_t> /*ranks*/) const { return false; }
};

}  // namespace eppsim
