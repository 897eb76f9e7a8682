#include "models/network/stepped_network.h"

#include <algorithm>
#include <cmath>

namespace eppsim {
namespace {

constexpr std::uint32_t kDirectAllToAllMaxRanks = 256;
constexpr std::size_t kExactPhases = 256;
constexpr std::size_t kSampledPhases = 64;

}  // namespace

Seconds SteppedNetwork::p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const {
  if (src_rank == dst_rank) return Seconds(0.0);
  const Flow flow{src_rank, dst_rank};
  const FlowTiming timing = round_timings(std::span(&flow, 1), 1).front();
  if (std::isinf(timing.rate_Bps)) return Seconds(0.0);
  return Seconds(timing.latency_s + static_cast<double>(size.count) / timing.rate_Bps);
}

std::vector<std::uint32_t> SteppedNetwork::ring_order(std::span<const std::uint32_t> ranks) const {
  std::vector<std::uint32_t> members(ranks.begin(), ranks.end());
  std::sort(members.begin(), members.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::pair(ring_position(a), a) < std::pair(ring_position(b), b);
  });
  return members;
}

std::vector<std::uint32_t> SteppedNetwork::nodes_of(const std::vector<std::uint32_t>& members) const {
  std::vector<std::uint32_t> nodes(members.size());
  for (std::size_t m = 0; m < members.size(); ++m) nodes[m] = node_of(members[m]);
  return nodes;
}

double SteppedNetwork::phase_seconds(const CollectiveSteps& steps, const CollectivePhase& phase,
                                     const std::vector<std::uint32_t>& members) const {
  std::vector<Flow> flows;
  std::size_t chain_length = 0;
  for (const auto& ring : steps.layouts[phase.layout].rings) {
    const auto k = static_cast<std::uint32_t>(ring.size());
    chain_length = std::max<std::size_t>(chain_length, k);
    for (std::uint32_t i = 0; i < k; ++i) {
      if (phase.chain && i + 1 == k) continue;
      for (std::uint32_t shift : phase.shifts) flows.emplace_back(members[ring[i]], members[ring[(i + shift) % k]]);
    }
  }
  if (flows.empty()) return 0.0;
  const std::vector<FlowTiming> timings = round_timings(flows, steps.channels);
  if (phase.chain) {
    double latency = 0.0, rate = std::numeric_limits<double>::infinity();
    for (const FlowTiming& t : timings) {
      latency = std::max(latency, t.latency_s);
      rate = std::min(rate, t.rate_Bps);
    }
    return static_cast<double>(chain_length - 1) * latency + phase.bytes / rate;
  }
  double slowest = 0.0;
  for (const FlowTiming& t : timings) {
    if (!std::isinf(t.rate_Bps)) slowest = std::max(slowest, t.latency_s + phase.bytes / t.rate_Bps);
  }
  return static_cast<double>(phase.rounds) * slowest;
}

double SteppedNetwork::steps_seconds(const CollectiveSteps& steps, const std::vector<std::uint32_t>& members) const {
  const std::size_t count = steps.phases.size();
  double total = 0.0;
  if (count <= kExactPhases) {
    for (const CollectivePhase& phase : steps.phases) total += phase_seconds(steps, phase, members);
    return total;
  }
  for (std::size_t i = 0; i < kSampledPhases; ++i)
    total += phase_seconds(steps, steps.phases[i * (count - 1) / (kSampledPhases - 1)], members);
  return total * static_cast<double>(count) / static_cast<double>(kSampledPhases);
}

SteppedNetwork::Choice SteppedNetwork::choose(CommKind kind, CollectiveAlgorithm hint,
                                              const std::vector<std::uint32_t>& members,
                                              const std::vector<std::uint32_t>& node_of_member, double size) const {
  using A = CollectiveAlgorithm;
  const std::uint32_t channels = channels_of(members.front());
  const auto applies = [&](A algorithm) {
    if (algorithm == A::Direct && members.size() > kDirectAllToAllMaxRanks) return false;
    return algorithm_applies(kind, algorithm, node_of_member);
  };
  const auto priced = [&](A algorithm) {
    const CollectiveSteps steps = collective_steps(kind, algorithm, channels, node_of_member, size);
    return Choice{algorithm, steps.channels, steps_seconds(steps, members)};
  };
  if (hint != A::Auto) return priced(applies(hint) ? hint : A::Ring);
  Choice best = priced(A::Ring);
  for (A candidate : {A::Tree, A::Direct, A::Hierarchical}) {
    if (!applies(candidate)) continue;
    const Choice other = priced(candidate);
    if (other.seconds < best.seconds) best = other;
  }
  return best;
}

SteppedNetwork::Choice SteppedNetwork::choice(CommKind kind, CollectiveAlgorithm algorithm,
                                              std::span<const std::uint32_t> ranks, Bytes size) const {
  auto key = std::make_tuple(static_cast<int>(kind), static_cast<int>(algorithm), size.count,
                             std::vector<std::uint32_t>(ranks.begin(), ranks.end()));
  {
    const std::lock_guard lock(memo_mutex_);
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
  }
  const std::vector<std::uint32_t> members = ring_order(ranks);
  const Choice chosen = choose(kind, algorithm, members, nodes_of(members), static_cast<double>(size.count));
  const std::lock_guard lock(memo_mutex_);
  memo_.emplace(std::move(key), chosen);
  return chosen;
}

Seconds SteppedNetwork::collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                                        std::span<const std::uint32_t> ranks, Bytes size) const {
  if (ranks.size() <= 1) return Seconds(0.0);
  return Seconds(choice(kind, algorithm, ranks, size).seconds);
}

CollectiveRoute SteppedNetwork::collective_route(CommKind kind, CollectiveAlgorithm algorithm,
                                                 std::span<const std::uint32_t> ranks, Bytes size) const {
  CollectiveRoute route;
  route.members = ring_order(ranks);
  if (ranks.size() <= 1) return route;
  const Choice chosen = choice(kind, algorithm, ranks, size);
  route.steps = collective_steps(kind, chosen.algorithm, chosen.channels, nodes_of(route.members),
                                 static_cast<double>(size.count));
  return route;
}

}  // namespace eppsim
