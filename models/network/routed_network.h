#pragma once
// Communication time on a real topology: every transfer is routed over the
// links the placement actually uses, and each collective is priced from the
// load its own flows put on those links.
//
// A flow's rate is the smallest share it gets on its path: for each link and
// direction, bandwidth / (flows of the collective crossing it that way). Its
// time for `b` bytes is the path latency (sum of link latencies) + b / rate.
// Collectives are priced over collective_steps.h's algorithms, round by round
// (stepped_network.h): a round's flows are routed together, so a collective's
// flows share the links they cross. Rings and trees run as NCCL's do, over C
// parallel channels (C = the live inter-node links of the group's first chip,
// at most 16: its NICs or rails), each carrying 1/C of the data on flows
// hashed onto different equal-cost paths (channel_flow_hash). Ring order
// follows the chips' ids (node-major), so neighbours in the ring are
// neighbours in the machine, as NCCL's topology-aware rings are.
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "models/topology/topology.h"
#include "models/network/stepped_network.h"

namespace eppsim {

class RoutedNetwork final : public SteppedNetwork {
 public:
  // `chip_of_rank[r]`: the chip rank r runs on. The network shares the topology.
  RoutedNetwork(std::shared_ptr<const Topology> topology, std::vector<VertexId> chip_of_rank);

 protected:
  std::vector<FlowTiming> round_timings(std::span<const Flow> flows, std::uint32_t channels) const override;
  std::uint64_t ring_position(std::uint32_t rank) const override { return chip_of_rank_.at(rank); }
  std::uint32_t node_of(std::uint32_t rank) const override { return topology_->node_of(chip_of_rank_.at(rank)); }
  std::uint32_t channels_of(std::uint32_t first_rank) const override;

 private:
  std::shared_ptr<const Topology> topology_;
  std::vector<VertexId> chip_of_rank_;
};

}  // namespace eppsim
