#pragma once
// The analytic engine's view of the network: one duration per transfer, in the
// Schedule's proto terms. Prices come from the cost model (models/cost_model.h);
// CostModelNetwork adapts one to this interface until the engine takes the
// CostModel itself (traces/op_cost.h).
#include <cstdint>
#include <span>

#include "models/cost_model.h"
#include "models/units.h"
#include "traces/schedule.pb.h"

namespace eppsim {

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  virtual Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const = 0;
  virtual Seconds collective_time(proto::CollectiveKind kind, proto::CollectiveAlgorithm algorithm,
                                  std::span<const std::uint32_t> ranks, Bytes size) const = 0;
};

// The cost model's p2p and collective times; `cost` must outlive this.
class CostModelNetwork final : public NetworkModel {
 public:
  explicit CostModelNetwork(const CostModel& cost) : cost_(cost) {}
  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const override;
  Seconds collective_time(proto::CollectiveKind kind, proto::CollectiveAlgorithm algorithm,
                          std::span<const std::uint32_t> ranks, Bytes size) const override;

 private:
  const CostModel& cost_;
};

}  // namespace eppsim
