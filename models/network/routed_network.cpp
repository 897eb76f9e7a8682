#include "models/network/routed_network.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace eppsim {
namespace {

constexpr std::uint32_t kMaxChannels = 16;

}  // namespace

RoutedNetwork::RoutedNetwork(std::shared_ptr<const Topology> topology, std::vector<VertexId> chip_of_rank)
    : topology_(std::move(topology)), chip_of_rank_(std::move(chip_of_rank)) {}

std::uint32_t RoutedNetwork::channels_of(std::uint32_t first_rank) const {
  std::uint32_t inter = 0;
  for (const auto& [neighbour, link] : topology_->neighbors(chip_of_rank_.at(first_rank))) {
    if (!topology_->link(link).intra_node) ++inter;
  }
  return std::clamp<std::uint32_t>(inter, 1, kMaxChannels);
}

std::vector<FlowTiming> RoutedNetwork::round_timings(std::span<const Flow> flows, std::uint32_t channels) const {
  // Route every flow of every channel; count flows per (link, direction).
  const Topology& topology = *topology_;
  std::vector<std::vector<LinkId>> paths(flows.size() * channels);
  std::vector<std::vector<bool>> forward(paths.size());
  std::unordered_map<std::uint64_t, std::uint32_t> load;
  for (std::uint32_t c = 0; c < channels; ++c) {
    for (std::size_t f = 0; f < flows.size(); ++f) {
      const VertexId src = chip_of_rank_.at(flows[f].first), dst = chip_of_rank_.at(flows[f].second);
      auto& path = paths[c * flows.size() + f];
      auto& dirs = forward[c * flows.size() + f];
      if (src == dst) continue;
      topology.route(src, dst, channel_flow_hash(src, dst, c), &path);
      VertexId at = src;
      for (auto id : path) {
        const auto& l = topology.link(id);
        const bool ab = l.a == at;
        dirs.push_back(ab);
        at = ab ? l.b : l.a;
        ++load[(static_cast<std::uint64_t>(id) << 1) | (ab ? 1u : 0u)];
      }
    }
  }
  // A flow's rate: the smallest share it gets on its path.
  std::vector<FlowTiming> timings(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    double latency = 0.0;
    double rate = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < paths[i].size(); ++k) {
      const auto id = paths[i][k];
      const auto& l = topology.link(id);
      latency += l.latency.value;
      const auto n = load[(static_cast<std::uint64_t>(id) << 1) | (forward[i][k] ? 1u : 0u)];
      rate = std::min(rate, l.bandwidth.value / n);
    }
    timings[i] = FlowTiming{latency, rate};
  }
  return timings;
}

}  // namespace eppsim
