#include "models/topology/rail_optimized.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace eppsim {

namespace {

// Pods of at most `half` leaves over `count` leaves.
std::vector<std::uint32_t> pods_of(std::uint32_t count, std::uint32_t half) {
  std::vector<std::uint32_t> pods;
  for (std::uint32_t left = count; left > 0; left -= std::min(left, half)) pods.push_back(std::min(left, half));
  return pods;
}

}  // namespace

RailOptimizedTopology::RailOptimizedTopology(const TopologyConfig& config)
    : Topology(config.name, config.nodes, config.chips_per_node),
      config_(std::get<RailOptimizedConfig>(config.network)) {
  const auto& c = config_;
  if (c.radix < 2 || c.radix % 2 != 0) {
    throw_topology_error(name(), "rail_optimized.radix", fmt::format("must be even and >= 2, got {}", c.radix));
  }
  if (c.scalable_unit_nodes == 0) {
    throw_topology_error(name(), "rail_optimized.scalable_unit_nodes", "must be > 0, got 0");
  }
  if (c.nics_per_chip == 0) throw_topology_error(name(), "rail_optimized.nics_per_chip", "must be > 0, got 0");
  if (!(c.link.bandwidth.value > 0.0)) throw_topology_error(name(), "rail_optimized.link.bandwidth", "must be > 0");
  std::tie(down_, up_) = leaf_port_split(name(), "rail_optimized.oversubscription", c.radix, c.oversubscription_down,
                                         c.oversubscription_up);
  const std::uint64_t leaf_ports = static_cast<std::uint64_t>(c.scalable_unit_nodes) * c.nics_per_chip;
  if (leaf_ports > down_) {
    throw_topology_error(name(), "rail_optimized.scalable_unit_nodes",
                         fmt::format("{} nodes x {} NICs per chip need {} down-ports per rail leaf, but a {}-port leaf "
                                     "at {}:{} has {}",
                                     c.scalable_unit_nodes, c.nics_per_chip, leaf_ports, c.radix, c.oversubscription_down,
                                     c.oversubscription_up, down_));
  }
  units_ = (nodes() + c.scalable_unit_nodes - 1) / c.scalable_unit_nodes;
  const std::uint32_t half = c.radix / 2;
  const std::uint32_t rails = chips_per_node();
  if (c.rail_only) {
    clos_.resize(rails);
    for (std::uint32_t r = 0; r < rails; ++r) {
      const std::uint32_t levels = units_ == 1 ? 1 : units_ <= c.radix ? 2 : 3;
      if (levels == 3 && units_ > static_cast<std::uint64_t>(c.radix) * half) {
        throw_topology_error(name(), "rail_optimized.radix",
                             fmt::format("{} scalable units need {} leaves per rail; 3 levels of radix {} connect at "
                                         "most {}",
                                         units_, units_, c.radix, c.radix * half));
      }
      clos_[r].plan(name(), "rail_optimized", units_, up_, c.radix, levels,
                    levels == 3 ? pods_of(units_, half) : std::vector<std::uint32_t>{});
    }
  } else {
    const std::uint64_t leaves = static_cast<std::uint64_t>(rails) * units_;
    std::uint32_t levels = leaves == 1 ? 1 : leaves <= c.radix ? 2 : 3;
    std::vector<std::uint32_t> pods;
    if (levels == 3) {
      const std::uint32_t pods_per_rail = (units_ + half - 1) / half;
      if (static_cast<std::uint64_t>(pods_per_rail) * rails > c.radix || up_ > half) {
        throw_topology_error(name(), "rail_optimized.radix",
                             fmt::format("{} rails x {} scalable units need {} rail-aligned pods of up to {} leaves "
                                         "(and leaf up-ports <= {}), but radix-{} core switches reach at most {} pods",
                                         rails, units_, static_cast<std::uint64_t>(pods_per_rail) * rails, half, half,
                                         c.radix, c.radix));
      }
      for (std::uint32_t r = 0; r < rails; ++r) {
        for (const auto p : pods_of(units_, half)) pods.push_back(p);
      }
    }
    clos_.resize(1);
    clos_[0].plan(name(), "rail_optimized", static_cast<std::uint32_t>(leaves), up_, c.radix, levels, std::move(pods));
  }

  fabric_.build(*this, config.node);
  for (std::uint32_t i = 0; i < leaves(); ++i) {
    const VertexId v = add_vertex(VertexKind::LeafSwitch);
    if (i == 0) first_leaf_ = v;
  }
  for (auto& clos : clos_) clos.add_spines(*this);
  for (auto& clos : clos_) clos.add_cores(*this);

  std::uint64_t total = links().size() + static_cast<std::uint64_t>(chips()) * c.nics_per_chip;
  for (const auto& clos : clos_) total += clos.links();
  mutable_links().reserve(total);
  nic_base_ = static_cast<LinkId>(links().size());
  Link link;
  link.bandwidth = c.link.bandwidth;
  link.latency = c.link.latency;
  link.medium = LinkMedium::Optical;
  for (VertexId chip = 0; chip < chips(); ++chip) {
    for (std::uint32_t nic = 0; nic < c.nics_per_chip; ++nic) {
      link.a = chip;
      link.b = first_leaf_ + leaf_of(chip);
      link.rail = static_cast<std::int32_t>(chip % chips_per_node());
      add_link(link);
    }
  }
  if (c.rail_only) {
    for (std::uint32_t r = 0; r < rails; ++r) {
      const std::size_t before = links().size();
      clos_[r].add_links(*this, first_leaf_ + r * units_, c.link);
      for (std::size_t id = before; id < links().size(); ++id) mutable_links()[id].rail = static_cast<std::int32_t>(r);
    }
  } else {
    clos_[0].add_links(*this, first_leaf_, c.link);
  }
  finalize();
}

bool RailOptimizedTopology::route_rail(VertexId src, VertexId dst, std::uint64_t h, std::vector<LinkId>* path) const {
  const std::uint32_t nics = config_.nics_per_chip;
  const std::int64_t up = pick_live_nic(*this, nic_link(src, 0), nics, mix64(h ^ 0x51));
  const std::int64_t down = pick_live_nic(*this, nic_link(dst, 0), nics, mix64(h ^ 0x52));
  if (up < 0 || down < 0) return false;
  std::uint32_t leaf_a = leaf_of(src);
  std::uint32_t leaf_b = leaf_of(dst);
  const ClosFabric* clos = &clos_[0];
  if (config_.rail_only) {
    const std::uint32_t rail = src % chips_per_node();
    clos = &clos_[rail];
    leaf_a -= rail * units_;
    leaf_b -= rail * units_;
  }
  path->push_back(static_cast<LinkId>(up));
  if (!clos->route(*this, leaf_a, leaf_b, h, path)) return false;
  path->push_back(static_cast<LinkId>(down));
  return true;
}

void RailOptimizedTopology::route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const {
  path->clear();
  check_route_endpoints(src, dst);
  if (src == dst) return;
  bool ok;
  if (node_of(src) == node_of(dst)) {
    ok = fabric_.route(*this, src, dst, path);
  } else {
    const std::uint64_t h = ecmp_hash(src, dst, flow);
    VertexId at = src;
    ok = true;
    if (config_.rail_only && src % chips_per_node() != dst % chips_per_node()) {
      at = node_of(src) * chips_per_node() + dst % chips_per_node();
      ok = fabric_.route(*this, src, at, path);
    }
    ok = ok && route_rail(at, dst, h, path);
  }
  if (!ok) route_over_live_links(src, dst, flow, path);
}

BytesPerSecond RailOptimizedTopology::bisection_bandwidth() const {
  double crossing = 0.0;
  const double per_leaf_nics = static_cast<double>(config_.nics_per_chip);
  for (const auto& clos : clos_) {
    // NIC links under this fabric's leaves.
    const double nic_links = static_cast<double>(chips()) * per_leaf_nics / static_cast<double>(clos_.size());
    const double leaf_up = static_cast<double>(clos.leaves()) * up_;
    crossing += clos.levels() == 1 ? nic_links : std::min(nic_links, leaf_up);
  }
  return BytesPerSecond(crossing / 2.0 * config_.link.bandwidth.value);
}

NetworkInventory RailOptimizedTopology::inventory() const {
  NetworkInventory inv = Topology::inventory();
  std::uint64_t switches = leaves();
  for (const auto& clos : clos_) switches += static_cast<std::uint64_t>(clos.spines()) + clos.cores();
  inv.electrical_switches = switches;
  inv.electrical_switch_ports = switches * config_.radix;
  return inv;
}

}  // namespace eppsim
