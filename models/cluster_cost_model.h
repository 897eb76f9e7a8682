#pragma once
// The cost model of a cluster (models/cost_model.h), composed of three parts:
//   compute          a ComputeCostModel (compute_cost.h: roofline or calibrated)
//   network          a NetworkTimeModel bound to the ranks' placement (network_time_model.h:
//                    closed forms or routed over a topology)
//   HBM bandwidth    the GPU's, for optimizer steps: time = memory_traffic / bandwidth
// scenario/cost_model_factory.h builds one from a scenario; planners and engines
// share it.
#include <memory>

#include "models/compute_cost.h"
#include "models/cost_model.h"
#include "models/network_time_model.h"
#include "base/units.h"

namespace eppsim {

class ClusterCostModel final : public CostModel {
 public:
  ClusterCostModel(std::shared_ptr<const ComputeCostModel> compute, std::shared_ptr<const NetworkTimeModel> network,
                   BytesPerSecond hbm_bandwidth);

  // This rank's share of `work` (its layer part, split over `shards` GPUs): the
  // compute model's (models/compute_cost.h).
  ComputeCost compute_cost(const ComputeWork& work) const override;
  Seconds optimizer_time(Bytes memory_traffic) const override;
  const ComputeCostModel& compute() const { return *compute_; }
  const NetworkTimeModel& network() const override { return *network_; }

 private:
  std::shared_ptr<const ComputeCostModel> compute_;
  std::shared_ptr<const NetworkTimeModel> network_;
  BytesPerSecond hbm_bandwidth_;
};

}  // namespace eppsim
