#include "models/network/closed_form_network.h"

#include <algorithm>
#include <unordered_map>

namespace eppsim {

ClosedFormNetwork::ClosedFormNetwork(LinkParams intra_node, LinkParams inter_node, std::vector<std::uint32_t> node_of_rank)
    : intra_(intra_node), inter_(inter_node), node_of_rank_(std::move(node_of_rank)) {}

std::vector<FlowTiming> ClosedFormNetwork::round_timings(std::span<const Flow> flows, std::uint32_t channels) const {
  // Flows of each class leaving and entering each rank (key: rank * 2 + inter).
  std::unordered_map<std::uint64_t, std::uint32_t> leaving, entering;
  const auto key = [](std::uint32_t rank, bool inter) { return static_cast<std::uint64_t>(rank) * 2 + (inter ? 1 : 0); };
  std::vector<bool> inter(flows.size());
  for (std::size_t f = 0; f < flows.size(); ++f) {
    const auto [src, dst] = flows[f];
    if (src == dst) continue;
    inter[f] = node_of_rank_.at(src) != node_of_rank_.at(dst);
    leaving[key(src, inter[f])] += channels;
    entering[key(dst, inter[f])] += channels;
  }
  std::vector<FlowTiming> timings(flows.size() * channels);
  for (std::size_t f = 0; f < flows.size(); ++f) {
    const auto [src, dst] = flows[f];
    if (src == dst) continue;
    const LinkParams& link = inter[f] ? inter_ : intra_;
    const std::uint32_t sharing = std::max(leaving[key(src, inter[f])], entering[key(dst, inter[f])]);
    for (std::uint32_t c = 0; c < channels; ++c)
      timings[c * flows.size() + f] = FlowTiming{link.latency.value, link.bandwidth.value / sharing};
  }
  return timings;
}

}  // namespace eppsim
