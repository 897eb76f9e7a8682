#pragma once
// How long communication takes over a placement of ranks: the network half of
// the cost model (models/cost_model.h). Implementations: the simple cluster's
// closed forms (network/closed_form_network.h) and routing over a topology
// (network/routed_network.h), both pricing the collective algorithms of
// collective_steps.h (network/stepped_network.h); wrappers that apply
// measured fits (network/calibrated_network.h) or all-to-all efficiencies.
// (The dollar cost of a network is models/topology/network_cost.h.)
//
// A NetworkTimeModel is bound to a placement: ranks 0..N-1 on chips chosen when
// it was built. Both times are uncontended durations; `size` follows
// schedule.proto's size_bytes (send/recv: the message; all-reduce and
// reduce-scatter: the whole vector; all-gather: the per-rank input; all-to-all:
// the per-rank send buffer; broadcast: the message).
#include <cstdint>
#include <span>

#include "base/units.h"
#include "models/collective_steps.h"
#include "models/comm_kind.h"

namespace eppsim {

class NetworkTimeModel {
 public:
  virtual ~NetworkTimeModel() = default;
  // One message from `src_rank` to `dst_rank`, nothing else on the wire (0 to itself).
  virtual Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const = 0;
  // One collective over `ranks` (0 for fewer than two). SendRecv (two ranks)
  // is one message from ranks[0] to ranks[1].
  virtual Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                                  std::span<const std::uint32_t> ranks, Bytes size) const = 0;
  // How that collective runs: the algorithm collective_time prices it with
  // (the hint, Auto's fastest, or the ring when the hint does not apply), as
  // steps over the members in the network's order, for engines that run
  // every flow themselves (the flow engine). Empty steps for fewer than two ranks.
  virtual CollectiveRoute collective_route(CommKind kind, CollectiveAlgorithm algorithm,
                                           std::span<const std::uint32_t> ranks, Bytes size) const = 0;
  // Whether a measured fit prices this message / this collective whole (a
  // calibration's, network/calibrated_network.h), so that an engine that runs
  // the network itself (the flow engine) takes the fitted time instead of
  // running its flows. Models without fits: never.
  virtual bool fitted_p2p(std::uint32_t /*src_rank*/, std::uint32_t /*dst_rank*/) const { return false; }
  virtual bool fitted_collective(CommKind /*kind*/, std::span<const std::uint32_t> /*ranks*/) const { return false; }
};

}  // namespace eppsim
