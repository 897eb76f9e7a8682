#include "models/topology/node_fabric.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace eppsim {

void NodeFabric::build(Topology& topology, const NodeFabricConfig& config) {
  if (topology.vertex_count() != topology.chips() || !topology.links().empty()) {
    throw std::logic_error("NodeFabric::build: call it first, on a topology holding only its chips");
  }
  kind_ = config.kind;
  chips_per_node_ = topology.chips_per_node();
  const std::uint32_t nodes = topology.nodes();
  first_link_ = 0;
  dims_.clear();
  strides_.clear();
  plus_link_.clear();
  links_per_node_ = 0;

  if (kind_ == NodeFabricKind::Mesh || kind_ == NodeFabricKind::Torus) {
    if (config.dims.empty()) {
      throw_topology_error(topology.name(), "node.dims", "required for a MESH or TORUS node (the chip grid)");
    }
    std::uint64_t product = 1;
    for (const auto d : config.dims) {
      if (d == 0) throw_topology_error(topology.name(), "node.dims", fmt::format("every size must be > 0, got {}", config.dims));
      product *= d;
    }
    if (product != chips_per_node_) {
      throw_topology_error(topology.name(), "node.dims",
                           fmt::format("{} holds {} chips, but a node has {} (gpus_per_node)", config.dims, product,
                                       chips_per_node_));
    }
    dims_ = config.dims;
    std::uint32_t stride = 1;
    for (const auto d : dims_) {
      strides_.push_back(stride);
      stride *= d;
    }
    const bool torus = kind_ == NodeFabricKind::Torus;
    plus_link_.assign(static_cast<std::size_t>(chips_per_node_) * dims_.size(), -1);
    std::int32_t next = 0;
    for (std::uint32_t local = 0; local < chips_per_node_; ++local) {
      for (std::uint32_t d = 0; d < dims_.size(); ++d) {
        const std::uint32_t x = (local / strides_[d]) % dims_[d];
        if (dims_[d] >= 2 && (torus || x + 1 < dims_[d])) plus_link_[local * dims_.size() + d] = next++;
      }
    }
    links_per_node_ = static_cast<std::uint32_t>(next);
  } else if (chips_per_node_ > 1) {
    links_per_node_ = chips_per_node_;
  }
  if (links_per_node_ > 0 && !(config.link.bandwidth.value > 0.0)) {
    throw_topology_error(topology.name(), "node.link.bandwidth", "must be > 0 (the chips of a node need links)");
  }

  if (has_node_switch()) {
    for (std::uint32_t node = 0; node < nodes; ++node) {
      const VertexId v = topology.add_vertex(VertexKind::NodeSwitch);
      if (node == 0) first_switch_ = v;
    }
  }
  topology.links_.reserve(static_cast<std::size_t>(nodes) * links_per_node_);
  Link link;
  link.bandwidth = config.link.bandwidth;
  link.latency = config.link.latency;
  link.medium = LinkMedium::Electrical;
  link.intra_node = true;
  for (std::uint32_t node = 0; node < nodes; ++node) {
    const VertexId base = node * chips_per_node_;
    if (kind_ == NodeFabricKind::Switched) {
      if (!has_node_switch()) continue;
      for (std::uint32_t local = 0; local < chips_per_node_; ++local) {
        link.a = base + local;
        link.b = node_switch(node);
        topology.add_link(link);
      }
      continue;
    }
    for (std::uint32_t local = 0; local < chips_per_node_; ++local) {
      for (std::uint32_t d = 0; d < dims_.size(); ++d) {
        if (plus_link(local, d) < 0) continue;
        const std::uint32_t x = (local / strides_[d]) % dims_[d];
        const std::uint32_t neighbour = x + 1 < dims_[d] ? local + strides_[d] : local - x * strides_[d];
        link.a = base + local;
        link.b = base + neighbour;
        topology.add_link(link);
      }
    }
  }
}

std::uint32_t NodeFabric::hops(std::uint32_t local_a, std::uint32_t local_b) const {
  if (local_a == local_b) return 0;
  if (kind_ == NodeFabricKind::Switched) return 2;
  std::uint32_t total = 0;
  for (std::uint32_t d = 0; d < dims_.size(); ++d) {
    const std::uint32_t n = dims_[d];
    const std::uint32_t xa = (local_a / strides_[d]) % n;
    const std::uint32_t xb = (local_b / strides_[d]) % n;
    if (kind_ == NodeFabricKind::Torus) {
      const std::uint32_t delta = (xb + n - xa) % n;
      total += 2 * delta <= n ? delta : n - delta;
    } else {
      total += xa < xb ? xb - xa : xa - xb;
    }
  }
  return total;
}

bool NodeFabric::route(const Topology& topology, VertexId a, VertexId b, std::vector<LinkId>* path) const {
  if (a == b) return true;
  const std::uint32_t node = a / chips_per_node_;
  const LinkId block = first_link_ + node * links_per_node_;
  const std::uint32_t la = a % chips_per_node_;
  const std::uint32_t lb = b % chips_per_node_;
  const std::size_t start = path->size();
  auto push = [&](LinkId id) {
    path->push_back(id);
    return !topology.link(id).failed;
  };
  bool ok = true;
  if (kind_ == NodeFabricKind::Switched) {
    ok = push(block + la) && push(block + lb);
  } else {
    std::uint32_t local = la;
    const bool torus = kind_ == NodeFabricKind::Torus;
    for (std::uint32_t d = 0; d < dims_.size() && ok; ++d) {
      const std::uint32_t n = dims_[d];
      const std::uint32_t s = strides_[d];
      std::uint32_t x = (local / s) % n;
      const std::uint32_t xb = (lb / s) % n;
      bool forward;
      std::uint32_t steps;
      if (torus) {
        const std::uint32_t delta = (xb + n - x) % n;
        forward = 2 * delta <= n;
        steps = forward ? delta : n - delta;
      } else {
        forward = xb >= x;
        steps = forward ? xb - x : x - xb;
      }
      for (std::uint32_t i = 0; i < steps && ok; ++i) {
        if (forward) {
          ok = push(block + static_cast<LinkId>(plus_link(local, d)));
          const std::uint32_t nx = (x + 1) % n;
          local = local - x * s + nx * s;
          x = nx;
        } else {
          const std::uint32_t px = (x + n - 1) % n;
          local = local - x * s + px * s;
          x = px;
          ok = push(block + static_cast<LinkId>(plus_link(local, d)));
        }
      }
    }
  }
  if (!ok) path->resize(start);
  return ok;
}

}  // namespace eppsim
