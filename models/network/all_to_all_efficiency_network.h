#pragma once
// All-to-all efficiency per degree (cost_model.all_to_all_efficiency): a
// NetworkTimeModel wrapped so that an all-to-all over d ranks takes the wrapped
// network's time divided by efficiency(d); degrees without an entry, and every
// other kind of communication, keep the wrapped network's time.
//
// Why: the networks price an all-to-all at the links' bandwidth, but NCCL's
// all-to-all reaches a fraction of it that falls with the degree (FlexSP
// measured {2: 119.5, 4: 104, 8: 96.5, 16: 10.3, 32: 5.94} GB/s on its cluster;
// docs/systems.md converts such a table into efficiencies).
// scenario/cost_model_factory.h wraps the closed-form or routed network in it,
// below a calibration's collective fits (a fit measured the real library, so
// its all-to-alls are not derated again). The flow engine builds its own
// flows for collectives and does not apply it.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "models/network_time_model.h"

namespace eppsim {

struct AllToAllEfficiencyPoint {
  std::uint32_t degree = 0;  // >= 2
  double efficiency = 1.0;   // (0, 1]
};

class AllToAllEfficiencyNetwork final : public NetworkTimeModel {
 public:
  // `points` as validated by the scenario (degrees >= 2, none repeated,
  // efficiencies in (0, 1]); std::invalid_argument otherwise, and for a null network.
  AllToAllEfficiencyNetwork(std::shared_ptr<const NetworkTimeModel> network, std::vector<AllToAllEfficiencyPoint> points);

  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const override;
  Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                          Bytes size) const override;
  // The wrapped model's: the efficiency slows the collective, not its algorithm.
  CollectiveRoute collective_route(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                                   Bytes size) const override {
    return network_->collective_route(kind, algorithm, ranks, size);
  }
  bool fitted_p2p(std::uint32_t src_rank, std::uint32_t dst_rank) const override {
    return network_->fitted_p2p(src_rank, dst_rank);
  }
  bool fitted_collective(CommKind kind, std::span<const std::uint32_t> ranks) const override {
    return network_->fitted_collective(kind, ranks);
  }

  // efficiency(degree): the listed value, 1 for a degree not listed.
  double efficiency(std::uint32_t degree) const;

 private:
  std::shared_ptr<const NetworkTimeModel> network_;
  std::vector<AllToAllEfficiencyPoint> points_;
};

}  // namespace eppsim
