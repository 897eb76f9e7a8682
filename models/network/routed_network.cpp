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
  // Route every flow of every channel; count flows per (link, direction). The
  // paths lie end to end in one array of (link << 1 | direction) keys, flow i's
  // from hops[starts[i]] to hops[starts[i + 1]]: a round of a DP ring over 100K+
  // ranks has millions of flows, and a vector per flow cost gigabytes.
  const Topology& topology = *topology_;
  const std::size_t count = flows.size() * channels;
  std::vector<std::uint64_t> hops;
  std::vector<std::size_t> starts;
  starts.reserve(count + 1);
  starts.push_back(0);
  std::unordered_map<std::uint64_t, std::uint32_t> load;
  std::vector<LinkId> path;
  for (std::uint32_t c = 0; c < channels; ++c) {
    for (std::size_t f = 0; f < flows.size(); ++f) {
      const VertexId src = chip_of_rank_.at(flows[f].first), dst = chip_of_rank_.at(flows[f].second);
      if (src != dst) {
        path.clear();
        topology.route(src, dst, channel_flow_hash(src, dst, c), &path);
        VertexId at = src;
        for (auto id : path) {
          const auto& l = topology.link(id);
          const bool ab = l.a == at;
          at = ab ? l.b : l.a;
          const std::uint64_t key = (static_cast<std::uint64_t>(id) << 1) | (ab ? 1u : 0u);
          hops.push_back(key);
          ++load[key];
        }
      }
      starts.push_back(hops.size());
    }
  }
  // A flow's rate: the smallest share it gets on its path.
  std::vector<FlowTiming> timings(count);
  for (std::size_t i = 0; i < count; ++i) {
    double latency = 0.0;
    double rate = std::numeric_limits<double>::infinity();
    for (std::size_t k = starts[i]; k < starts[i + 1]; ++k) {
      const auto& l = topology.link(static_cast<LinkId>(hops[k] >> 1));
      latency += l.latency.value;
      rate = std::min(rate, l.bandwidth.value / load[hops[k]]);
    }
    timings[i] = FlowTiming{latency, rate};
  }
  return timings;
}

}  // namespace eppsim
