#pragma once
// The closed-form network cost of the simple cluster (nodes of GPUs on a
// full-bandwidth NVLink fabric, one NIC per GPU into one non-blocking switch).
//
// Closed forms (alpha = link latency, B = link bandwidth per direction, n =
// group size, S = size_bytes as defined in schedule.proto), nccl-tests style:
//   send/recv           alpha + S/B
//   ring all-reduce     2(n-1) alpha + 2(n-1)/n * S/B        (reduce-scatter + all-gather)
//   ring reduce-scatter (n-1) alpha + (n-1)/n * S/B           (S = whole vector)
//   ring all-gather     (n-1) alpha + (n-1) * S/B             (S = per-rank input)
//   broadcast           (n-1) alpha + S/B                     (pipelined chain)
//   direct all-to-all   (n-1) alpha + (n-1)/n * S/B           (S = per-rank send buffer)
//   tree all-reduce     2 ceil(log2 n) alpha + 2 * S/B         (pipelined reduce + broadcast trees)
//   hierarchical (g GPUs on each of k nodes): intra-node reduce-scatter, k-node
//     ring all-reduce of S/g on each of the g NICs in parallel, intra-node
//     all-gather:  2[(g-1) a_i + (g-1)/g S/B_i] + 2(k-1) a_e + 2(k-1)/k (S/g)/B_e
//   hierarchical reduce-scatter: intra-node ring over S, then k-node rings over S/g
//   hierarchical all-gather: k-node rings over S, then intra-node ring over k*S
//   all-to-all spanning nodes, with m_min the fewest group ranks on one node: each
//     GPU sends over NVLink and its NIC at once,
//     (n-1) a_e + max((m_min-1)/n * S/B_i, (n-m_min)/n * S/B_e)
// A group inside one node uses NVLink (B_i, a_i); a group spanning nodes is
// bounded by the NICs (B_e, a_e). ALGORITHM_AUTO takes the cheapest algorithm
// that applies, as a tuned NCCL would. Hints that do not apply (tree for other
// kinds than all-reduce, hierarchical for uneven groups) fall back to the ring.
#include <cstdint>
#include <span>
#include <vector>

#include "models/cluster_spec.h"
#include "base/units.h"
#include "models/network_time_model.h"

namespace eppsim {

class ClosedFormNetwork final : public NetworkTimeModel {
 public:
  // `node_of_rank[r]` is rank r's node (the Schedule's placement).
  ClosedFormNetwork(LinkParams intra_node, LinkParams inter_node, std::vector<std::uint32_t> node_of_rank);

  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const override;
  Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                          std::span<const std::uint32_t> ranks, Bytes size) const override;

 private:
  LinkParams intra_;
  LinkParams inter_;
  std::vector<std::uint32_t> node_of_rank_;
};

// The closed forms themselves, for one uniform link (alpha, B) and group size n.
Seconds ring_collective_time(CommKind kind, std::uint32_t n, Bytes size, LinkParams link);
Seconds tree_allreduce_time(std::uint32_t n, Bytes size, LinkParams link);
Seconds hierarchical_allreduce_time(std::uint32_t gpus_per_node, std::uint32_t nodes, Bytes size, LinkParams intra,
                                    LinkParams inter);
// ALL_REDUCE, REDUCE_SCATTER or ALL_GATHER over g GPUs on each of k nodes.
Seconds hierarchical_collective_time(CommKind kind, std::uint32_t gpus_per_node, std::uint32_t nodes,
                                     Bytes size, LinkParams intra, LinkParams inter);

}  // namespace eppsim
