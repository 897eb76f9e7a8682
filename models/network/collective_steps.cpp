#include "models/network/collective_steps.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace eppsim {
namespace {

StepLayout one_ring(std::uint32_t n) {
  StepLayout layout;
  layout.rings.emplace_back(n);
  std::iota(layout.rings.front().begin(), layout.rings.front().end(), 0u);
  return layout;
}

CollectivePhase phase(std::uint32_t layout, std::uint32_t shift, double bytes, std::uint32_t rounds) {
  CollectivePhase p;
  p.layout = layout;
  p.shifts = {shift};
  p.bytes = bytes;
  p.rounds = rounds;
  return p;
}

void hierarchical(CollectiveSteps& steps, std::span<const std::uint32_t> node_of_member, double size) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_node;
  for (std::uint32_t m = 0; m < node_of_member.size(); ++m) by_node[node_of_member[m]].push_back(m);
  const std::size_t g = by_node.begin()->second.size();
  bool equal = by_node.size() >= 2 && g >= 2;
  for (const auto& [node, members] : by_node) equal = equal && members.size() == g;
  if (!equal) throw std::invalid_argument("hierarchical all-reduce needs two or more nodes holding the same count (> 1) of members");
  StepLayout intra, inter;
  for (auto& [node, members] : by_node) intra.rings.push_back(members);
  inter.rings.resize(g);
  for (const auto& [node, members] : by_node) {
    for (std::size_t local = 0; local < g; ++local) inter.rings[local].push_back(members[local]);
  }
  const auto k = static_cast<std::uint32_t>(by_node.size());
  steps.layouts = {std::move(intra), std::move(inter)};
  const double shard = size / static_cast<double>(g);
  const auto g32 = static_cast<std::uint32_t>(g);
  steps.phases = {phase(0, 1, shard, g32 - 1), phase(1, 1, shard / k, 2 * (k - 1)), phase(0, 1, shard, g32 - 1)};
}

}  // namespace

CollectiveSteps collective_steps(CommKind kind, CollectiveAlgorithm algorithm, std::uint32_t channels,
                                 std::span<const std::uint32_t> node_of_member, double size) {
  if (algorithm == CollectiveAlgorithm::Auto) throw std::invalid_argument("collective_steps needs a concrete algorithm");
  CollectiveSteps steps;
  steps.algorithm = algorithm;
  // RoutedNetwork runs all-to-all and hierarchical all-reduce on one channel.
  const bool one_channel = kind == CommKind::AllToAll || algorithm == CollectiveAlgorithm::Hierarchical;
  steps.channels = one_channel ? 1 : std::max<std::uint32_t>(channels, 1);
  const auto n = static_cast<std::uint32_t>(node_of_member.size());
  if (n <= 1) return steps;
  const double per_channel = size / steps.channels;
  if (kind == CommKind::AllToAll) {
    if (algorithm != CollectiveAlgorithm::Ring && algorithm != CollectiveAlgorithm::Direct) {
      throw std::invalid_argument("all-to-all runs pairwise (Ring) or Direct");
    }
    steps.layouts = {one_ring(n)};
    const double per_peer = per_channel / n;
    if (algorithm == CollectiveAlgorithm::Direct) {
      steps.phases.push_back(phase(0, 1, per_peer, 1));
      for (std::uint32_t shift = 2; shift < n; ++shift) steps.phases.back().shifts.push_back(shift);
    } else {
      for (std::uint32_t shift = 1; shift < n; ++shift) steps.phases.push_back(phase(0, shift, per_peer, 1));
    }
    return steps;
  }
  if (algorithm == CollectiveAlgorithm::Hierarchical) {
    if (kind != CommKind::AllReduce) throw std::invalid_argument("hierarchical applies to all-reduce only");
    hierarchical(steps, node_of_member, size);
    return steps;
  }
  if (algorithm == CollectiveAlgorithm::Tree) {
    if (kind != CommKind::AllReduce) throw std::invalid_argument("tree applies to all-reduce only");
    steps.layouts = {one_ring(n)};
    const auto depth = static_cast<std::uint32_t>(std::ceil(std::log2(static_cast<double>(n))));
    if (depth > 1) steps.phases.push_back(phase(0, 1, 0.0, 2 * depth - 2));
    steps.phases.push_back(phase(0, 1, per_channel, 2));
    return steps;
  }
  if (algorithm != CollectiveAlgorithm::Ring) throw std::invalid_argument("this collective runs as a ring");
  steps.layouts = {one_ring(n)};
  switch (kind) {
    case CommKind::AllReduce: steps.phases.push_back(phase(0, 1, per_channel / n, 2 * (n - 1))); break;
    case CommKind::ReduceScatter: steps.phases.push_back(phase(0, 1, per_channel / n, n - 1)); break;
    case CommKind::AllGather: steps.phases.push_back(phase(0, 1, per_channel, n - 1)); break;
    case CommKind::SendRecv:  // two ranks: a one-hop broadcast
    case CommKind::Broadcast:
      steps.phases.push_back(phase(0, 1, per_channel, 1));
      steps.phases.back().chain = true;
      break;
    case CommKind::AllToAll: break;  // handled above
  }
  return steps;
}

}  // namespace eppsim
