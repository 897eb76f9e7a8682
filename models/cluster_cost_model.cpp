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

}  // namespace eppsim
