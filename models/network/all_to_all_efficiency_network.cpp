#include "models/network/all_to_all_efficiency_network.h"

#include <stdexcept>
#include <utility>

namespace eppsim {

AllToAllEfficiencyNetwork::AllToAllEfficiencyNetwork(std::shared_ptr<const NetworkTimeModel> network,
                                                     std::vector<AllToAllEfficiencyPoint> points)
    : network_(std::move(network)), points_(std::move(points)) {
  if (!network_) throw std::invalid_argument("AllToAllEfficiencyNetwork: needs a network");
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const AllToAllEfficiencyPoint& p = points_[i];
    if (p.degree < 2 || !(p.efficiency > 0.0 && p.efficiency <= 1.0))
      throw std::invalid_argument("AllToAllEfficiencyNetwork: a degree < 2 or an efficiency outside (0, 1]");
    for (std::size_t j = 0; j < i; ++j) {
      if (points_[j].degree == p.degree) throw std::invalid_argument("AllToAllEfficiencyNetwork: a repeated degree");
    }
  }
}

Seconds AllToAllEfficiencyNetwork::p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const {
  return network_->p2p_time(src_rank, dst_rank, size);
}

Seconds AllToAllEfficiencyNetwork::collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                                                   std::span<const std::uint32_t> ranks, Bytes size) const {
  const Seconds time = network_->collective_time(kind, algorithm, ranks, size);
  if (kind != CommKind::AllToAll) return time;
  return Seconds(time.value / efficiency(static_cast<std::uint32_t>(ranks.size())));
}

double AllToAllEfficiencyNetwork::efficiency(std::uint32_t degree) const {
  for (const AllToAllEfficiencyPoint& p : points_) {
    if (p.degree == degree) return p.efficiency;
  }
  return 1.0;
}

}  // namespace eppsim
