#include "models/cluster_cost_model.h"

#include <stdexcept>
#include <utility>

namespace eppsim {

ClusterCostModel::ClusterCostModel(std::shared_ptr<const ComputeCostModel> compute,
                                   std::shared_ptr<const NetworkTimeModel> network, BytesPerSecond hbm_bandwidth)
    : compute_(std::move(compute)), network_(std::move(network)), hbm_bandwidth_(hbm_bandwidth) {
  if (!compute_ || !network_) throw std::invalid_argument("ClusterCostModel: needs a compute model and a network");
}

ComputeCost ClusterCostModel::compute_cost(const ComputeWork& work) const {
  return compute_->cost(work);  // this rank's share of the part
}

Seconds ClusterCostModel::optimizer_time(Bytes memory_traffic) const {
  return transfer_time(memory_traffic, hbm_bandwidth_);
}

Seconds ClusterCostModel::p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const {
  return network_->p2p_time(src_rank, dst_rank, size);
}

Seconds ClusterCostModel::collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                                          std::span<const std::uint32_t> ranks, Bytes size) const {
  return network_->collective_time(kind, algorithm, ranks, size);
}

}  // namespace eppsim
