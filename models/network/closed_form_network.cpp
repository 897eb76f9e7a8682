#include "models/network/closed_form_network.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace eppsim {

ClosedFormNetwork::ClosedFormNetwork(LinkParams intra_node, LinkParams inter_node,
                                           std::vector<std::uint32_t> node_of_rank)
    : intra_(intra_node), inter_(inter_node), node_of_rank_(std::move(node_of_rank)) {}

Seconds ClosedFormNetwork::p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const {
  if (src_rank == dst_rank) return Seconds(0.0);
  const auto& link = node_of_rank_.at(src_rank) == node_of_rank_.at(dst_rank) ? intra_ : inter_;
  return link.latency + transfer_time(size, link.bandwidth);
}

Seconds ring_collective_time(CommKind kind, std::uint32_t n, Bytes size, LinkParams link) {
  if (n <= 1) return Seconds(0.0);
  const double steps = n - 1;
  const Seconds full = transfer_time(size, link.bandwidth);
  switch (kind) {
    case CommKind::AllReduce:
      return link.latency * (2 * steps) + full * (2 * steps / n);
    case CommKind::ReduceScatter:
    case CommKind::AllToAll:
      return link.latency * steps + full * (steps / n);
    case CommKind::AllGather:
      return link.latency * steps + full * steps;
    case CommKind::SendRecv:  // two ranks: a one-hop broadcast
    case CommKind::Broadcast:
      return link.latency * steps + full;
  }
  throw std::invalid_argument(fmt::format("ring_collective_time: unknown collective kind {}", static_cast<int>(kind)));
}

Seconds tree_allreduce_time(std::uint32_t n, Bytes size, LinkParams link) {
  if (n <= 1) return Seconds(0.0);
  return link.latency * (2.0 * std::ceil(std::log2(static_cast<double>(n)))) + transfer_time(size, link.bandwidth) * 2.0;
}

Seconds hierarchical_allreduce_time(std::uint32_t gpus_per_node, std::uint32_t nodes, Bytes size, LinkParams intra,
                                    LinkParams inter) {
  const Seconds intra_phase = ring_collective_time(CommKind::ReduceScatter, gpus_per_node, size, intra);
  const Bytes per_nic(size.count / std::max<std::uint32_t>(gpus_per_node, 1));
  return intra_phase * 2.0 + ring_collective_time(CommKind::AllReduce, nodes, per_nic, inter);
}

Seconds hierarchical_collective_time(CommKind kind, std::uint32_t gpus_per_node, std::uint32_t nodes,
                                     Bytes size, LinkParams intra, LinkParams inter) {
  const std::uint32_t g = std::max<std::uint32_t>(gpus_per_node, 1);
  switch (kind) {
    case CommKind::AllReduce:
      return hierarchical_allreduce_time(g, nodes, size, intra, inter);
    case CommKind::ReduceScatter:
      // Inside the node over the whole vector, then across nodes over each GPU's 1/g.
      return ring_collective_time(CommKind::ReduceScatter, g, size, intra) +
             ring_collective_time(CommKind::ReduceScatter, nodes, Bytes(size.count / g), inter);
    case CommKind::AllGather:
      // Across nodes among same-index GPUs, then inside the node over k inputs.
      return ring_collective_time(CommKind::AllGather, nodes, size, inter) +
             ring_collective_time(CommKind::AllGather, g, Bytes(size.count * nodes), intra);
    default:
      throw std::invalid_argument(
          fmt::format("hierarchical_collective_time: unsupported collective kind {}", static_cast<int>(kind)));
  }
}

Seconds ClosedFormNetwork::collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                                              std::span<const std::uint32_t> ranks, Bytes size) const {
  const auto n = static_cast<std::uint32_t>(ranks.size());
  if (n <= 1) return Seconds(0.0);
  std::map<std::uint32_t, std::uint32_t> per_node;
  for (auto r : ranks) ++per_node[node_of_rank_.at(r)];
  const bool one_node = per_node.size() == 1;
  const LinkParams& bottleneck = one_node ? intra_ : inter_;
  // Hierarchical applies when every node holds the same number (> 1) of the group's ranks.
  const std::uint32_t g = per_node.begin()->second;
  const bool uniform = std::all_of(per_node.begin(), per_node.end(), [&](const auto& kv) { return kv.second == g; });
  const bool hierarchical_applies = !one_node && uniform && g > 1 &&
                                    (kind == CommKind::AllReduce || kind == CommKind::ReduceScatter || kind == CommKind::AllGather);
  const auto nodes = static_cast<std::uint32_t>(per_node.size());
  if (kind == CommKind::AllToAll && !one_node) {
    // Direct all-to-all: a GPU with m of the group's n ranks on its node sends
    // (m-1)/n of its buffer over NVLink and (n-m)/n through its NIC, both at
    // once; the GPU on the least-filled node finishes last.
    std::uint32_t fewest = n;
    for (const auto& [node, count] : per_node) fewest = std::min(fewest, count);
    const double share_intra = static_cast<double>(fewest - 1) / n;
    const double share_inter = static_cast<double>(n - fewest) / n;
    const double bytes = static_cast<double>(size.count);
    const Seconds transfer(std::max(share_intra * bytes / intra_.bandwidth.value, share_inter * bytes / inter_.bandwidth.value));
    return inter_.latency * static_cast<double>(n - 1) + transfer;
  }

  switch (algorithm) {
    case CollectiveAlgorithm::Ring:
    case CollectiveAlgorithm::Direct:
      return ring_collective_time(kind, n, size, bottleneck);
    case CollectiveAlgorithm::Tree:
      if (kind == CommKind::AllReduce) return tree_allreduce_time(n, size, bottleneck);
      return ring_collective_time(kind, n, size, bottleneck);
    case CollectiveAlgorithm::Hierarchical:
      if (hierarchical_applies) return hierarchical_collective_time(kind, g, nodes, size, intra_, inter_);
      return ring_collective_time(kind, n, size, bottleneck);
    case CollectiveAlgorithm::Auto: {
      Seconds best = ring_collective_time(kind, n, size, bottleneck);
      if (kind == CommKind::AllReduce) best = std::min(best, tree_allreduce_time(n, size, bottleneck));
      if (hierarchical_applies) best = std::min(best, hierarchical_collective_time(kind, g, nodes, size, intra_, inter_));
      return best;
    }
  }
  throw std::invalid_argument(fmt::format("collective_time: unknown algorithm {}", static_cast<int>(algorithm)));
}

}  // namespace eppsim
