#include "models/collective_steps.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

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

// The members of each node, by node id; empty unless hierarchical applies
// (two or more nodes, each holding the same count g > 1).
std::map<std::uint32_t, std::vector<std::uint32_t>> even_nodes(std::span<const std::uint32_t> node_of_member) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_node;
  for (std::uint32_t m = 0; m < node_of_member.size(); ++m) by_node[node_of_member[m]].push_back(m);
  if (by_node.size() < 2) return {};
  const std::size_t g = by_node.begin()->second.size();
  if (g < 2) return {};
  for (const auto& [node, members] : by_node) {
    if (members.size() != g) return {};
  }
  return by_node;
}

// Layout 0: a ring per node; layout 1: a ring per local index across the nodes.
void hierarchical(CollectiveSteps& steps, CommKind kind, std::span<const std::uint32_t> node_of_member, double size) {
  auto by_node = even_nodes(node_of_member);
  const std::size_t g = by_node.begin()->second.size();
  StepLayout intra, inter;
  inter.rings.resize(g);
  for (auto& [node, members] : by_node) {
    for (std::size_t local = 0; local < g; ++local) inter.rings[local].push_back(members[local]);
    intra.rings.push_back(std::move(members));
  }
  steps.layouts = {std::move(intra), std::move(inter)};
  const auto k = static_cast<std::uint32_t>(by_node.size());
  const auto g32 = static_cast<std::uint32_t>(g);
  const double shard = size / static_cast<double>(g);
  switch (kind) {
    case CommKind::AllReduce:
      steps.phases = {phase(0, 1, shard, g32 - 1), phase(1, 1, shard / k, 2 * (k - 1)), phase(0, 1, shard, g32 - 1)};
      break;
    case CommKind::ReduceScatter: steps.phases = {phase(0, 1, shard, g32 - 1), phase(1, 1, shard / k, k - 1)}; break;
    case CommKind::AllGather: steps.phases = {phase(1, 1, size, k - 1), phase(0, 1, size * k, g32 - 1)}; break;
    default: break;  // algorithm_applies rejected the others
  }
}

}  // namespace

bool algorithm_applies(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> node_of_member) {
  using A = CollectiveAlgorithm;
  switch (algorithm) {
    case A::Auto: return false;
    case A::Ring: return true;
    case A::Tree: return kind == CommKind::AllReduce;
    case A::Direct: return kind == CommKind::AllToAll;
    case A::Hierarchical:
      return (kind == CommKind::AllReduce || kind == CommKind::ReduceScatter || kind == CommKind::AllGather) &&
             !even_nodes(node_of_member).empty();
  }
  return false;
}

CollectiveSteps collective_steps(CommKind kind, CollectiveAlgorithm algorithm, std::uint32_t channels,
                                 std::span<const std::uint32_t> node_of_member, double size) {
  if (!algorithm_applies(kind, algorithm, node_of_member)) {
    throw std::invalid_argument(fmt::format("collective_steps: algorithm {} does not apply to {} over these {} members",
                                            static_cast<int>(algorithm), comm_kind_name(kind), node_of_member.size()));
  }
  CollectiveSteps steps;
  steps.algorithm = algorithm;
  const bool one_channel = kind == CommKind::AllToAll || algorithm == CollectiveAlgorithm::Hierarchical;
  steps.channels = one_channel ? 1 : std::max<std::uint32_t>(channels, 1);
  const auto n = static_cast<std::uint32_t>(node_of_member.size());
  if (n <= 1) return steps;
  if (algorithm == CollectiveAlgorithm::Hierarchical) {
    hierarchical(steps, kind, node_of_member, size);
    return steps;
  }
  steps.layouts = {one_ring(n)};
  const double per_channel = size / steps.channels;
  if (kind == CommKind::AllToAll) {
    const double per_peer = per_channel / n;
    if (algorithm == CollectiveAlgorithm::Direct) {
      if (n > 2) steps.phases.push_back(phase(0, 1, 0.0, n - 2));
      steps.phases.push_back(phase(0, 1, per_peer, 1));
      for (std::uint32_t shift = 2; shift < n; ++shift) steps.phases.back().shifts.push_back(shift);
    } else {
      for (std::uint32_t shift = 1; shift < n; ++shift) steps.phases.push_back(phase(0, shift, per_peer, 1));
    }
    return steps;
  }
  if (algorithm == CollectiveAlgorithm::Tree) {
    const auto depth = static_cast<std::uint32_t>(std::ceil(std::log2(static_cast<double>(n))));
    if (depth > 1) steps.phases.push_back(phase(0, 1, 0.0, 2 * depth - 2));
    steps.phases.push_back(phase(0, 1, per_channel, 2));
    return steps;
  }
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
