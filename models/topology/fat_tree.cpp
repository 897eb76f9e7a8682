#include "models/topology/fat_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace eppsim {

namespace {

// The largest divisor m of n with m * count <= limit (at least 1).
std::uint32_t largest_divisor_within(std::uint32_t n, std::uint32_t count, std::uint32_t limit) {
  for (std::uint32_t m = n; m > 1; --m) {
    if (n % m == 0 && static_cast<std::uint64_t>(m) * count <= limit) return m;
  }
  return 1;
}

bool live(const Topology& t, LinkId id) { return !t.link(id).failed; }

}  // namespace

std::pair<std::uint32_t, std::uint32_t> leaf_port_split(const std::string& topology_name, std::string_view field,
                                                        std::uint32_t radix, std::uint32_t oversubscription_down,
                                                        std::uint32_t oversubscription_up) {
  if (oversubscription_down == 0 || oversubscription_up == 0) {
    throw_topology_error(topology_name, field,
                         fmt::format("both sides must be > 0, got {}:{}", oversubscription_down, oversubscription_up));
  }
  if (oversubscription_down < oversubscription_up) {
    throw_topology_error(topology_name, field,
                         fmt::format("down:up must be at least 1:1, got {}:{}", oversubscription_down,
                                     oversubscription_up));
  }
  const std::uint64_t down = static_cast<std::uint64_t>(radix) * oversubscription_down /
                             (static_cast<std::uint64_t>(oversubscription_down) + oversubscription_up);
  const auto up = radix - static_cast<std::uint32_t>(down);
  if (down == 0 || up == 0) {
    throw_topology_error(topology_name, field,
                         fmt::format("{}:{} leaves a {}-port leaf {} down and {} up ports; both must be > 0",
                                     oversubscription_down, oversubscription_up, radix, down, up));
  }
  return {static_cast<std::uint32_t>(down), up};
}

std::int64_t pick_live_nic(const Topology& topology, LinkId base, std::uint32_t count, std::uint64_t hash) {
  for (std::uint32_t i = 0; i < count; ++i) {
    const LinkId id = base + static_cast<LinkId>((hash + i) % count);
    if (live(topology, id)) return id;
  }
  return -1;
}

// ---------------------------------------------------------------------------
// ClosFabric

void ClosFabric::plan(const std::string& topology_name, std::string_view field, std::uint32_t leaves,
                      std::uint32_t up, std::uint32_t radix, std::uint32_t levels,
                      std::vector<std::uint32_t> pod_sizes) {
  leaves_ = leaves;
  up_ = up;
  radix_ = radix;
  levels_ = levels;
  parallel_ = 1;
  pod_first_.clear();
  pod_of_leaf_.clear();
  if (leaves == 0) throw std::logic_error("ClosFabric::plan: no leaves");
  if (levels == 1) {
    if (leaves != 1) throw std::logic_error("ClosFabric::plan: one level holds one leaf");
    return;
  }
  if (levels == 2) {
    if (leaves > radix) {
      throw_topology_error(topology_name, field,
                           fmt::format("{} leaves need 3 levels: 2 levels of {}-port switches connect at most {} leaves",
                                       leaves, radix, radix));
    }
    parallel_ = largest_divisor_within(up, leaves, radix);
    return;
  }
  if (levels != 3) throw std::logic_error("ClosFabric::plan: levels must be 1, 2 or 3");
  const std::uint32_t half = radix / 2;
  if (up > half) {
    throw_topology_error(topology_name, field,
                         fmt::format("3 levels need leaf up-ports <= radix/2 = {}, got {}", half, up));
  }
  std::uint32_t first = 0;
  for (std::uint32_t p = 0; p < pod_sizes.size(); ++p) {
    if (pod_sizes[p] == 0 || pod_sizes[p] > half) throw std::logic_error("ClosFabric::plan: bad pod size");
    pod_first_.push_back(first);
    for (std::uint32_t i = 0; i < pod_sizes[p]; ++i) pod_of_leaf_.push_back(p);
    first += pod_sizes[p];
  }
  if (first != leaves) throw std::logic_error("ClosFabric::plan: pod sizes do not add up to the leaves");
  if (pod_sizes.size() > radix) {
    throw_topology_error(topology_name, field,
                         fmt::format("{} leaves make {} pods of at most {} leaves, but {}-port core switches reach at "
                                     "most {} pods",
                                     leaves, pod_sizes.size(), half, radix, radix));
  }
  parallel_ = largest_divisor_within(half, pods(), radix);
}

std::uint32_t ClosFabric::spines() const {
  if (levels_ == 2) return up_ / parallel_;
  if (levels_ == 3) return pods() * up_;
  return 0;
}

std::uint32_t ClosFabric::cores() const { return levels_ == 3 ? up_ * (radix_ / 2 / parallel_) : 0; }

std::uint64_t ClosFabric::links() const {
  if (levels_ == 1) return 0;
  std::uint64_t n = static_cast<std::uint64_t>(leaves_) * up_;
  if (levels_ == 3) n += static_cast<std::uint64_t>(spines()) * (radix_ / 2);
  return n;
}

void ClosFabric::add_spines(Topology& topology) {
  const std::uint32_t n = spines();
  for (std::uint32_t i = 0; i < n; ++i) {
    const VertexId v = topology.add_vertex(VertexKind::SpineSwitch);
    if (i == 0) first_spine_ = v;
  }
}

void ClosFabric::add_cores(Topology& topology) {
  const std::uint32_t n = cores();
  for (std::uint32_t i = 0; i < n; ++i) {
    const VertexId v = topology.add_vertex(VertexKind::CoreSwitch);
    if (i == 0) first_core_ = v;
  }
}

void ClosFabric::add_links(Topology& topology, VertexId first_leaf, const LinkParams& params) {
  Link link;
  link.bandwidth = params.bandwidth;
  link.latency = params.latency;
  link.medium = LinkMedium::Optical;
  leaf_up_base_ = static_cast<LinkId>(topology.links().size());
  if (levels_ == 1) return;
  for (std::uint32_t leaf = 0; leaf < leaves_; ++leaf) {
    for (std::uint32_t j = 0; j < up_; ++j) {
      link.a = first_leaf + leaf;
      link.b = levels_ == 2 ? first_spine_ + j / parallel_ : first_spine_ + pod_of_leaf_[leaf] * up_ + j;
      topology.add_link(link);
    }
  }
  agg_up_base_ = static_cast<LinkId>(topology.links().size());
  if (levels_ != 3) return;
  const std::uint32_t half = radix_ / 2;
  const std::uint32_t group = half / parallel_;
  for (std::uint32_t agg = 0; agg < spines(); ++agg) {
    const std::uint32_t a = agg % up_;
    for (std::uint32_t j = 0; j < half; ++j) {
      link.a = first_spine_ + agg;
      link.b = first_core_ + a * group + j / parallel_;
      topology.add_link(link);
    }
  }
}

bool ClosFabric::route(const Topology& topology, std::uint32_t leaf_a, std::uint32_t leaf_b, std::uint64_t hash,
                       std::vector<LinkId>* path) const {
  if (levels_ == 1 || leaf_a == leaf_b) return leaf_a == leaf_b;
  const std::uint64_t h1 = mix64(hash + 1);
  const std::uint64_t h2 = mix64(hash + 2);
  const std::uint64_t h3 = mix64(hash + 3);
  if (levels_ == 2) {
    for (std::uint32_t i = 0; i < up_; ++i) {
      const std::uint32_t j = static_cast<std::uint32_t>((h1 + i) % up_);
      const LinkId first = leaf_up_link(leaf_a, j);
      if (!live(topology, first)) continue;
      const std::uint32_t spine = j / parallel_;
      for (std::uint32_t r = 0; r < parallel_; ++r) {
        const LinkId second = leaf_up_link(leaf_b, spine * parallel_ + static_cast<std::uint32_t>((h2 + r) % parallel_));
        if (!live(topology, second)) continue;
        path->push_back(first);
        path->push_back(second);
        return true;
      }
    }
    return false;
  }
  const std::uint32_t pod_a = pod_of_leaf_[leaf_a];
  const std::uint32_t pod_b = pod_of_leaf_[leaf_b];
  const std::uint32_t half = radix_ / 2;
  for (std::uint32_t i = 0; i < up_; ++i) {
    const std::uint32_t a = static_cast<std::uint32_t>((h1 + i) % up_);
    const LinkId up1 = leaf_up_link(leaf_a, a);
    const LinkId down1 = leaf_up_link(leaf_b, a);
    if (!live(topology, up1) || !live(topology, down1)) continue;
    if (pod_a == pod_b) {
      path->push_back(up1);
      path->push_back(down1);
      return true;
    }
    for (std::uint32_t i2 = 0; i2 < half; ++i2) {
      const std::uint32_t j = static_cast<std::uint32_t>((h2 + i2) % half);
      const LinkId up2 = agg_up_link(pod_a * up_ + a, j);
      if (!live(topology, up2)) continue;
      const std::uint32_t core = j / parallel_;
      for (std::uint32_t r = 0; r < parallel_; ++r) {
        const LinkId down2 =
            agg_up_link(pod_b * up_ + a, core * parallel_ + static_cast<std::uint32_t>((h3 + r) % parallel_));
        if (!live(topology, down2)) continue;
        path->push_back(up1);
        path->push_back(up2);
        path->push_back(down2);
        path->push_back(down1);
        return true;
      }
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// FatTreeTopology

FatTreeTopology::FatTreeTopology(const TopologyConfig& config)
    : Topology(config.name, config.nodes, config.chips_per_node), config_(std::get<FatTreeConfig>(config.network)) {
  const auto& c = config_;
  if (c.radix < 2 || c.radix % 2 != 0) {
    throw_topology_error(name(), "fat_tree.radix", fmt::format("must be even and >= 2, got {}", c.radix));
  }
  if (c.levels != 2 && c.levels != 3) {
    throw_topology_error(name(), "fat_tree.levels", fmt::format("must be 2 or 3, got {}", c.levels));
  }
  if (c.nics_per_chip == 0) throw_topology_error(name(), "fat_tree.nics_per_chip", "must be > 0, got 0");
  if (!(c.link.bandwidth.value > 0.0)) throw_topology_error(name(), "fat_tree.link.bandwidth", "must be > 0");
  std::tie(down_, up_) =
      leaf_port_split(name(), "fat_tree.oversubscription", c.radix, c.oversubscription_down, c.oversubscription_up);
  const std::uint64_t ports = static_cast<std::uint64_t>(chips()) * c.nics_per_chip;
  const std::uint64_t leaves = (ports + down_ - 1) / down_;
  const std::uint32_t half = c.radix / 2;
  std::vector<std::uint32_t> pods;
  if (c.levels == 2 && leaves > c.radix) {
    throw_topology_error(name(), "fat_tree.levels",
                         fmt::format("{} chips x {} NICs need {} leaves of {} down-ports, but 2 levels of radix {} "
                                     "connect at most {} leaves ({} NICs); use 3 levels or a larger radix",
                                     chips(), c.nics_per_chip, leaves, down_, c.radix, c.radix,
                                     static_cast<std::uint64_t>(c.radix) * down_));
  }
  if (c.levels == 3) {
    const std::uint64_t max_leaves = static_cast<std::uint64_t>(c.radix) * half;
    if (leaves > max_leaves) {
      throw_topology_error(name(), "fat_tree.radix",
                           fmt::format("{} chips x {} NICs need {} leaves of {} down-ports, but 3 levels of radix {} "
                                       "connect at most {} leaves ({} NICs)",
                                       chips(), c.nics_per_chip, leaves, down_, c.radix, max_leaves,
                                       max_leaves * down_));
    }
    for (std::uint64_t left = leaves; left > 0; left -= std::min<std::uint64_t>(left, half)) {
      pods.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(left, half)));
    }
  }
  clos_.plan(name(), "fat_tree", static_cast<std::uint32_t>(leaves), up_, c.radix, c.levels, std::move(pods));

  fabric_.build(*this, config.node);
  for (std::uint32_t i = 0; i < leaves; ++i) {
    const VertexId v = add_vertex(VertexKind::LeafSwitch);
    if (i == 0) first_leaf_ = v;
  }
  clos_.add_spines(*this);
  clos_.add_cores(*this);

  nic_base_ = static_cast<LinkId>(links().size());
  Link link;
  link.bandwidth = c.link.bandwidth;
  link.latency = c.link.latency;
  link.medium = LinkMedium::Optical;
  mutable_links().reserve(links().size() + ports + clos_.links());
  for (VertexId chip = 0; chip < chips(); ++chip) {
    for (std::uint32_t nic = 0; nic < c.nics_per_chip; ++nic) {
      link.a = chip;
      link.b = first_leaf_ + leaf_of(chip, nic);
      add_link(link);
    }
  }
  clos_.add_links(*this, first_leaf_, c.link);
  finalize();
}

void FatTreeTopology::route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const {
  path->clear();
  check_route_endpoints(src, dst);
  if (src == dst) return;
  bool ok = false;
  if (node_of(src) == node_of(dst)) {
    ok = fabric_.route(*this, src, dst, path);
  } else {
    const std::uint64_t h = ecmp_hash(src, dst, flow);
    const std::uint32_t nics = config_.nics_per_chip;
    // The NIC pair with the lowest common level (same leaf, same pod, above),
    // ties broken by the hash; live NICs only.
    std::uint32_t best_cost = 4;
    std::uint32_t best_count = 0;
    std::uint32_t best_up = 0;
    std::uint32_t best_down = 0;
    const std::uint64_t start = mix64(h ^ 0x51);
    for (std::uint32_t i = 0; i < nics * nics; ++i) {
      const std::uint32_t k = static_cast<std::uint32_t>((start + i) % (static_cast<std::uint64_t>(nics) * nics));
      const std::uint32_t a = k / nics;
      const std::uint32_t b = k % nics;
      if (link(nic_link(src, a)).failed || link(nic_link(dst, b)).failed) continue;
      const std::uint32_t la = leaf_of(src, a);
      const std::uint32_t lb = leaf_of(dst, b);
      const std::uint32_t cost = la == lb ? 0 : (clos_.levels() == 3 && clos_.pod_of(la) == clos_.pod_of(lb)) ? 1 : 2;
      if (cost < best_cost) {
        best_cost = cost;
        best_up = a;
        best_down = b;
        ++best_count;
      }
    }
    if (best_count > 0) {
      path->push_back(nic_link(src, best_up));
      ok = clos_.route(*this, leaf_of(src, best_up), leaf_of(dst, best_down), h, path);
      path->push_back(nic_link(dst, best_down));
    }
  }
  if (!ok) route_over_live_links(src, dst, flow, path);
}

BytesPerSecond FatTreeTopology::bisection_bandwidth() const {
  const double nic_links = static_cast<double>(chips()) * config_.nics_per_chip;
  const double leaf_up = static_cast<double>(clos_.leaves()) * up_;
  const double crossing = clos_.leaves() == 1 ? nic_links : std::min(nic_links, leaf_up);
  return BytesPerSecond(crossing / 2.0 * config_.link.bandwidth.value);
}

NetworkInventory FatTreeTopology::inventory() const {
  NetworkInventory inv = Topology::inventory();
  inv.electrical_switches = static_cast<std::uint64_t>(clos_.leaves()) + clos_.spines() + clos_.cores();
  inv.electrical_switch_ports = inv.electrical_switches * config_.radix;
  return inv;
}

}  // namespace eppsim
