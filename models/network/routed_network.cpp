#include "models/network/routed_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace eppsim {
namespace {

constexpr std::uint32_t kMaxChannels = 16;
constexpr std::uint32_t kAllToAllExactRanks = 256;
constexpr std::uint32_t kAllToAllSampledRounds = 64;

}  // namespace

std::uint64_t channel_flow_hash(VertexId src, VertexId dst, std::uint32_t channel) {
  std::uint64_t x = (static_cast<std::uint64_t>(src) << 32 | dst) ^ (static_cast<std::uint64_t>(channel) * 0x9E3779B97F4A7C15ull);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

namespace {

// Ring neighbours: consecutive chips in id order, the last back to the first.
std::vector<std::pair<VertexId, VertexId>> ring_flows(const std::vector<VertexId>& chips) {
  std::vector<std::pair<VertexId, VertexId>> flows;
  flows.reserve(chips.size());
  for (std::size_t i = 0; i < chips.size(); ++i) flows.emplace_back(chips[i], chips[(i + 1) % chips.size()]);
  return flows;
}

}  // namespace

RoutedNetwork::RoutedNetwork(std::shared_ptr<const Topology> topology, std::vector<VertexId> chip_of_rank)
    : owned_topology_(std::move(topology)), topology_(*owned_topology_), chip_of_rank_(std::move(chip_of_rank)) {}

std::uint32_t RoutedNetwork::channels_for(VertexId chip) const {
  std::uint32_t inter = 0;
  for (const auto& [neighbour, link] : topology_.neighbors(chip)) {
    if (!topology_.link(link).intra_node) ++inter;
  }
  return std::clamp<std::uint32_t>(inter, 1, kMaxChannels);
}

std::vector<RoutedNetwork::FlowShare> RoutedNetwork::share(std::span<const std::pair<VertexId, VertexId>> flows,
                                                               std::uint32_t channels) const {
  // Route every flow of every channel; count flows per (link, direction).
  std::vector<std::vector<LinkId>> paths(flows.size() * channels);
  std::vector<std::vector<bool>> forward(paths.size());
  std::unordered_map<std::uint64_t, std::uint32_t> load;
  for (std::uint32_t c = 0; c < channels; ++c) {
    for (std::size_t f = 0; f < flows.size(); ++f) {
      const auto [src, dst] = flows[f];
      auto& path = paths[c * flows.size() + f];
      auto& dirs = forward[c * flows.size() + f];
      if (src == dst) continue;
      topology_.route(src, dst, channel_flow_hash(src, dst, c), &path);
      VertexId at = src;
      for (auto id : path) {
        const auto& l = topology_.link(id);
        const bool ab = l.a == at;
        dirs.push_back(ab);
        at = ab ? l.b : l.a;
        ++load[(static_cast<std::uint64_t>(id) << 1) | (ab ? 1u : 0u)];
      }
    }
  }
  std::vector<FlowShare> shares(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    double latency = 0.0;
    double rate = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < paths[i].size(); ++k) {
      const auto id = paths[i][k];
      const auto& l = topology_.link(id);
      latency += l.latency.value;
      const auto n = load[(static_cast<std::uint64_t>(id) << 1) | (forward[i][k] ? 1u : 0u)];
      rate = std::min(rate, l.bandwidth.value / n);
    }
    shares[i] = FlowShare{latency, rate};
  }
  return shares;
}

double RoutedNetwork::step_time(std::span<const std::pair<VertexId, VertexId>> flows, std::uint32_t channels,
                                  double bytes) const {
  double slowest = 0.0;
  for (const auto& s : share(flows, channels)) {
    if (std::isinf(s.rate_Bps)) continue;  // a flow to itself
    slowest = std::max(slowest, s.latency_s + bytes / s.rate_Bps);
  }
  return slowest;
}

double RoutedNetwork::ring_time(CommKind kind, const std::vector<VertexId>& chips, double size) const {
  const double n = static_cast<double>(chips.size());
  const std::uint32_t channels = channels_for(chips.front());
  const auto flows = ring_flows(chips);
  const double per_channel = size / channels;
  switch (kind) {
    case CommKind::AllReduce: return 2.0 * (n - 1) * step_time(flows, channels, per_channel / n);
    case CommKind::ReduceScatter: return (n - 1) * step_time(flows, channels, per_channel / n);
    case CommKind::AllGather: return (n - 1) * step_time(flows, channels, per_channel);
    case CommKind::SendRecv:  // two ranks: a one-hop broadcast
    case CommKind::Broadcast: {
      // Pipelined chain: the data streams through n-1 hops at the slowest rate.
      double latency = 0.0, rate = std::numeric_limits<double>::infinity();
      for (const auto& s : share(std::span(flows).first(flows.size() - 1), channels)) {
        latency = std::max(latency, s.latency_s);
        rate = std::min(rate, s.rate_Bps);
      }
      return (n - 1) * latency + per_channel / rate;
    }
    case CommKind::AllToAll: return all_to_all_time(chips, size);
  }
  return all_to_all_time(chips, size);
}

double RoutedNetwork::tree_time(const std::vector<VertexId>& chips, double size) const {
  const std::uint32_t channels = channels_for(chips.front());
  const auto flows = ring_flows(chips);
  double latency = 0.0, rate = std::numeric_limits<double>::infinity();
  for (const auto& s : share(flows, channels)) {
    latency = std::max(latency, s.latency_s);
    rate = std::min(rate, s.rate_Bps);
  }
  const double depth = std::ceil(std::log2(static_cast<double>(chips.size())));
  return 2.0 * depth * latency + 2.0 * (size / channels) / rate;
}

double RoutedNetwork::hierarchical_time(const std::vector<VertexId>& chips, double size) const {
  // Group the chips by node; hierarchical applies when every node holds the same count g > 1.
  std::map<std::uint32_t, std::vector<VertexId>> by_node;
  for (auto c : chips) by_node[topology_.node_of(c)].push_back(c);
  const std::size_t g = by_node.begin()->second.size();
  if (by_node.size() < 2 || g < 2) return std::numeric_limits<double>::infinity();
  for (const auto& [node, members] : by_node) {
    if (members.size() != g) return std::numeric_limits<double>::infinity();
  }
  // Phase 1 and 3: every node's ring at once.
  std::vector<std::pair<VertexId, VertexId>> intra;
  for (const auto& [node, members] : by_node) {
    const auto ring = ring_flows(members);
    intra.insert(intra.end(), ring.begin(), ring.end());
  }
  const double intra_step = step_time(intra, 1, size / static_cast<double>(g));
  const double intra_phase = (static_cast<double>(g) - 1) * intra_step;
  // Phase 2: one ring per local index across the nodes, all at once, S/g each.
  std::vector<std::pair<VertexId, VertexId>> inter;
  const std::size_t k = by_node.size();
  std::vector<const std::vector<VertexId>*> nodes;
  for (const auto& [node, members] : by_node) nodes.push_back(&members);
  for (std::size_t local = 0; local < g; ++local) {
    for (std::size_t i = 0; i < k; ++i) inter.emplace_back((*nodes[i])[local], (*nodes[(i + 1) % k])[local]);
  }
  const double shard = size / static_cast<double>(g);
  const double inter_phase = 2.0 * (static_cast<double>(k) - 1) * step_time(inter, 1, shard / static_cast<double>(k));
  return 2.0 * intra_phase + inter_phase;
}

double RoutedNetwork::all_to_all_time(const std::vector<VertexId>& chips, double size) const {
  const auto n = static_cast<std::uint32_t>(chips.size());
  const double per_peer = size / n;
  std::vector<std::uint32_t> rounds;
  if (n <= kAllToAllExactRanks) {
    rounds.resize(n - 1);
    std::iota(rounds.begin(), rounds.end(), 1u);
  } else {
    for (std::uint32_t i = 0; i < kAllToAllSampledRounds; ++i) {
      rounds.push_back(1 + static_cast<std::uint32_t>(static_cast<std::uint64_t>(i) * (n - 2) / (kAllToAllSampledRounds - 1)));
    }
  }
  double total = 0.0;
  std::vector<std::pair<VertexId, VertexId>> flows(n);
  for (auto shift : rounds) {
    for (std::uint32_t i = 0; i < n; ++i) flows[i] = {chips[i], chips[(i + shift) % n]};
    total += step_time(flows, 1, per_peer);
  }
  return total * (static_cast<double>(n) - 1) / static_cast<double>(rounds.size());
}

double RoutedNetwork::direct_all_to_all_time(const std::vector<VertexId>& chips, double size) const {
  const auto n = static_cast<std::uint32_t>(chips.size());
  if (n > kAllToAllExactRanks) return all_to_all_time(chips, size);
  std::vector<std::pair<VertexId, VertexId>> flows;
  flows.reserve(static_cast<std::size_t>(n) * (n - 1));
  for (auto src : chips) {
    for (auto dst : chips) {
      if (src != dst) flows.emplace_back(src, dst);
    }
  }
  return step_time(flows, 1, size / n);
}

Seconds RoutedNetwork::p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const {
  const VertexId src = chip_of_rank_.at(src_rank), dst = chip_of_rank_.at(dst_rank);
  if (src == dst) return Seconds(0.0);
  const std::pair<VertexId, VertexId> flow{src, dst};
  return Seconds(step_time(std::span(&flow, 1), 1, static_cast<double>(size.count)));
}

std::vector<VertexId> RoutedNetwork::sorted_chips(std::span<const std::uint32_t> ranks) const {
  std::vector<VertexId> chips;
  chips.reserve(ranks.size());
  for (auto r : ranks) chips.push_back(chip_of_rank_.at(r));
  std::sort(chips.begin(), chips.end());
  return chips;
}

std::pair<RoutedNetwork::CollectiveChoice, double> RoutedNetwork::choose(CommKind kind,
                                                                         CollectiveAlgorithm algorithm,
                                                                         const std::vector<VertexId>& chips,
                                                                         double bytes) const {
  using A = CollectiveAlgorithm;
  const std::uint32_t channels = channels_for(chips.front());
  if (kind == CommKind::AllToAll) {
    switch (algorithm) {
      case A::Direct: {
        const bool direct = chips.size() <= kAllToAllExactRanks;
        return {{direct ? A::Direct : A::Ring, 1}, direct_all_to_all_time(chips, bytes)};
      }
      case A::Auto: {
        const double pairwise = all_to_all_time(chips, bytes), direct = direct_all_to_all_time(chips, bytes);
        if (direct < pairwise) return {{A::Direct, 1}, direct};
        return {{A::Ring, 1}, pairwise};
      }
      default: return {{A::Ring, 1}, all_to_all_time(chips, bytes)};
    }
  }
  if (kind != CommKind::AllReduce) return {{A::Ring, channels}, ring_time(kind, chips, bytes)};
  switch (algorithm) {
    case A::Ring:
    case A::Direct: return {{A::Ring, channels}, ring_time(kind, chips, bytes)};
    case A::Tree: return {{A::Tree, channels}, tree_time(chips, bytes)};
    case A::Hierarchical: {
      const double time = hierarchical_time(chips, bytes);
      if (std::isinf(time)) return {{A::Ring, channels}, ring_time(kind, chips, bytes)};
      return {{A::Hierarchical, 1}, time};
    }
    default: {
      // The first fastest of ring, tree, hierarchical.
      std::pair<CollectiveChoice, double> best{{A::Ring, channels}, ring_time(kind, chips, bytes)};
      if (const double tree = tree_time(chips, bytes); tree < best.second) best = {{A::Tree, channels}, tree};
      if (const double hier = hierarchical_time(chips, bytes); hier < best.second) best = {{A::Hierarchical, 1}, hier};
      return best;
    }
  }
}

RoutedNetwork::CollectiveChoice RoutedNetwork::collective_choice(CommKind kind, CollectiveAlgorithm algorithm,
                                                                 std::span<const std::uint32_t> ranks,
                                                                 Bytes size) const {
  if (ranks.size() <= 1) return {};
  return choose(kind, algorithm, sorted_chips(ranks), static_cast<double>(size.count)).first;
}

Seconds RoutedNetwork::collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                                         std::span<const std::uint32_t> ranks, Bytes size) const {
  if (ranks.size() <= 1) return Seconds(0.0);
  std::vector<std::uint32_t> key(ranks.begin(), ranks.end());
  const auto memo_key = std::make_tuple(static_cast<int>(kind), static_cast<int>(algorithm), size.count, key);
  if (const auto it = memo_.find(memo_key); it != memo_.end()) return Seconds(it->second);
  const double time = choose(kind, algorithm, sorted_chips(ranks), static_cast<double>(size.count)).second;
  memo_.emplace(memo_key, time);
  return Seconds(time);
}

}  // namespace eppsim
