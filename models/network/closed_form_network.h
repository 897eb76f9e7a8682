#pragma once
// The closed-form network of the simple cluster: nodes of GPUs on a
// full-bandwidth NVLink fabric, one NIC per GPU into one non-blocking switch.
//
// A flow between two GPUs of one node uses NVLink (alpha_i, B_i), one between
// nodes the NICs (alpha_e, B_e). Nothing inside the fabric contends: a flow's
// rate is its class's bandwidth shared only at its ends, B / max(flows of its
// class leaving its source, flows of its class entering its destination) in
// the same round. Priced over collective_steps.h's algorithms
// (stepped_network.h), that gives the nccl-tests closed forms (n = group
// size, S = size_bytes as in schedule.proto, alpha and B those of the slowest
// class the ring crosses):
//   send/recv           alpha + S/B
//   ring all-reduce     2(n-1) (alpha + S/(n B))
//   ring reduce-scatter (n-1) (alpha + S/(n B))
//   ring all-gather     (n-1) (alpha + S/B)            (S = per-rank input)
//   broadcast           (n-1) alpha + S/B             (pipelined chain)
//   tree all-reduce     2 ceil(log2 n) alpha + 2 S/B
//   hierarchical all-reduce (g GPUs on each of k nodes):
//                       2 (g-1) (alpha_i + S/(g B_i)) + 2(k-1) (alpha_e + S/(g k B_e))
//   direct all-to-all   (n-1) alpha + the slowest GPU's (n-m)/n S/B_e through its
//                       NIC beside (m-1)/n S/B_i over NVLink (m: the group's
//                       GPUs on its node)
// Ring members are ordered by node, then rank; one channel.
#include <cstdint>
#include <span>
#include <vector>

#include "models/cluster_spec.h"
#include "models/network/stepped_network.h"

namespace eppsim {

class ClosedFormNetwork final : public SteppedNetwork {
 public:
  // `node_of_rank[r]` is rank r's node (the Schedule's placement).
  ClosedFormNetwork(LinkParams intra_node, LinkParams inter_node, std::vector<std::uint32_t> node_of_rank);

 protected:
  std::vector<FlowTiming> round_timings(std::span<const Flow> flows, std::uint32_t channels) const override;
  std::uint64_t ring_position(std::uint32_t rank) const override { return node_of_rank_.at(rank); }
  std::uint32_t node_of(std::uint32_t rank) const override { return node_of_rank_.at(rank); }
  std::uint32_t channels_of(std::uint32_t /*first_rank*/) const override { return 1; }

 private:
  LinkParams intra_;
  LinkParams inter_;
  std::vector<std::uint32_t> node_of_rank_;
};

}  // namespace eppsim
