#include "sim/engine/network_model.h"

#include "traces/op_cost.h"

namespace eppsim {

Seconds CostModelNetwork::p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const {
  return cost_.p2p_time(src_rank, dst_rank, size);
}

Seconds CostModelNetwork::collective_time(proto::CollectiveKind kind, proto::CollectiveAlgorithm algorithm,
                                          std::span<const std::uint32_t> ranks, Bytes size) const {
  return cost_.collective_time(to_model(kind), to_model(algorithm), ranks, size);
}

}  // namespace eppsim
