#include "models/topology/torus.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

namespace eppsim {

TorusTopology::TorusTopology(const TopologyConfig& config)
    : Topology(config.name, config.nodes, config.chips_per_node), config_(std::get<TorusConfig>(config.network)) {
  const auto& c = config_;
  if (c.dims.empty() || c.dims.size() > 3) {
    throw_topology_error(name(), "torus.dims", fmt::format("must have 1, 2 or 3 sizes, got {}", c.dims));
  }
  std::uint64_t product = 1;
  for (const auto d : c.dims) {
    if (d == 0) throw_topology_error(name(), "torus.dims", fmt::format("every size must be > 0, got {}", c.dims));
    product *= d;
  }
  if (product != chips()) {
    throw_topology_error(name(), "torus.dims",
                         fmt::format("{} holds {} chips, but the cluster has {} ({} nodes x {} gpus_per_node)", c.dims,
                                     product, chips(), nodes(), chips_per_node()));
  }
  if (c.dims[0] % chips_per_node() != 0) {
    throw_topology_error(name(), "torus.dims",
                         fmt::format("the first size ({}) must be a multiple of gpus_per_node ({}): a node is that "
                                     "many consecutive chips along the first dimension",
                                     c.dims[0], chips_per_node()));
  }
  if (!c.optical_block.empty()) {
    if (c.optical_block.size() != c.dims.size()) {
      throw_topology_error(name(), "torus.optical_block",
                           fmt::format("must have as many sizes as dims ({}), got {}", c.dims, c.optical_block));
    }
    for (std::size_t i = 0; i < c.dims.size(); ++i) {
      if (c.optical_block[i] == 0 || c.dims[i] % c.optical_block[i] != 0) {
        throw_topology_error(name(), "torus.optical_block",
                             fmt::format("each size must divide the torus size: {} does not tile {}", c.optical_block,
                                         c.dims));
      }
    }
  }
  if (c.links_per_neighbor == 0) throw_topology_error(name(), "torus.links_per_neighbor", "must be > 0, got 0");
  if (!(c.link.bandwidth.value > 0.0)) throw_topology_error(name(), "torus.link.bandwidth", "must be > 0");

  std::uint32_t stride = 1;
  for (const auto d : c.dims) {
    strides_.push_back(stride);
    stride *= d;
  }
  std::uint64_t total = 0;
  for (const auto d : c.dims) total += d >= 2 ? static_cast<std::uint64_t>(chips()) * c.links_per_neighbor : 0;
  if (total >= 0xffffffffull) throw_topology_error(name(), "torus.dims", "too many links for 32-bit link ids");
  mutable_links().reserve(total);
  Link link;
  link.bandwidth = c.link.bandwidth;
  link.latency = c.link.latency;
  dim_base_.assign(c.dims.size(), 0);
  for (std::uint32_t dim = 0; dim < c.dims.size(); ++dim) {
    dim_base_[dim] = static_cast<LinkId>(links().size());
    const std::uint32_t n = c.dims[dim];
    if (n < 2) continue;
    const std::uint32_t s = strides_[dim];
    const std::uint32_t block = c.optical_block.empty() ? 0 : c.optical_block[dim];
    for (VertexId chip = 0; chip < chips(); ++chip) {
      const std::uint32_t x = (chip / s) % n;
      link.a = chip;
      link.b = x + 1 < n ? chip + s : chip - x * s;
      link.intra_node = node_of(link.a) == node_of(link.b);
      link.medium = block != 0 && x % block == block - 1 ? LinkMedium::OpticalCircuit : LinkMedium::Electrical;
      for (std::uint32_t p = 0; p < c.links_per_neighbor; ++p) add_link(link);
    }
  }
  finalize();
}

std::uint32_t TorusTopology::hops(VertexId src, VertexId dst) const {
  std::uint32_t total = 0;
  for (std::uint32_t dim = 0; dim < dimensions(); ++dim) {
    const std::uint32_t n = config_.dims[dim];
    const std::uint32_t delta = (coordinate(dst, dim) + n - coordinate(src, dim)) % n;
    total += 2 * delta <= n ? delta : n - delta;
  }
  return total;
}

void TorusTopology::route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const {
  path->clear();
  check_route_endpoints(src, dst);
  if (src == dst) return;
  const std::uint64_t h = ecmp_hash(src, dst, flow);
  const std::uint32_t lpn = config_.links_per_neighbor;
  bool ok = true;
  VertexId at = src;
  for (std::uint32_t dim = 0; dim < dimensions() && ok; ++dim) {
    const std::uint32_t n = config_.dims[dim];
    const std::uint32_t s = strides_[dim];
    std::uint32_t x = coordinate(at, dim);
    const std::uint32_t delta = (coordinate(dst, dim) + n - x) % n;
    const bool forward = 2 * delta <= n;
    const std::uint32_t steps = forward ? delta : n - delta;
    const std::uint64_t hd = mix64(h + dim);
    for (std::uint32_t i = 0; i < steps && ok; ++i) {
      // The + link of the lower chip of the hop.
      const std::uint32_t from_x = forward ? x : (x + n - 1) % n;
      const VertexId from = at - x * s + from_x * s;
      ok = false;
      for (std::uint32_t k = 0; k < lpn; ++k) {
        const LinkId id = plus_link(from, dim, static_cast<std::uint32_t>((hd + k) % lpn));
        if (!link(id).failed) {
          path->push_back(id);
          ok = true;
          break;
        }
      }
      const std::uint32_t next_x = forward ? (x + 1) % n : from_x;
      at = at - x * s + next_x * s;
      x = next_x;
    }
  }
  if (!ok) route_over_live_links(src, dst, flow, path);
}

BytesPerSecond TorusTopology::bisection_bandwidth() const {
  const std::uint32_t largest = *std::max_element(config_.dims.begin(), config_.dims.end());
  if (largest < 2) return BytesPerSecond(0.0);
  const double others = static_cast<double>(chips()) / largest;
  return BytesPerSecond(2.0 * others * config_.links_per_neighbor * config_.link.bandwidth.value);
}

NetworkInventory TorusTopology::inventory() const {
  NetworkInventory inv = Topology::inventory();
  inv.optical_switch_ports = 2 * inv.optical_circuits;
  return inv;
}

}  // namespace eppsim
