#include "scenario/scenario_parts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/ranges.h>

#include "models/gpu_spec.h"
#include "base/units.h"

namespace eppsim::scenario_parts {
namespace {

GpuSpec resolve_gpu(const proto::Gpu& g, const FieldLocator& where) {
  GpuSpec gpu;
  if (!g.preset().empty()) {
    const GpuSpec* preset = find_gpu_preset(g.preset());
    if (preset == nullptr) {
      where.fail("cluster.gpu.preset",
                 fmt::format("unknown preset {} (known: {})", quote_string(g.preset()),
                             join_names(gpu_presets(), [](const GpuSpec& s) { return s.name; })));
    }
    gpu = *preset;
  } else {
    gpu.name = "custom";
    const std::pair<std::string_view, const std::string*> required[] = {
        {"cluster.gpu.peak_flops", &g.peak_flops()},
        {"cluster.gpu.memory", &g.memory()},
        {"cluster.gpu.memory_bandwidth", &g.memory_bandwidth()},
        {"cluster.gpu.nvlink_bandwidth", &g.nvlink_bandwidth()},
    };
    for (const auto& [path, value] : required) {
      if (value->empty())
        where.fail(path, fmt::format("must be set when cluster.gpu.preset is not (known presets: {})",
                                     join_names(gpu_presets(), [](const GpuSpec& s) { return s.name; })));
    }
  }
  if (!g.peak_flops().empty()) {
    gpu.peak_bf16 = parse_unit(where, "cluster.gpu.peak_flops", g.peak_flops(), parse_flops);
    require_positive(where, "cluster.gpu.peak_flops", gpu.peak_bf16, g.peak_flops());
    require_at_least(where, "cluster.gpu.peak_flops", gpu.peak_bf16.value, limits::kMinPeakFlops, "FLOP/s", g.peak_flops());
  }
  if (!g.memory().empty()) {
    gpu.memory = parse_unit(where, "cluster.gpu.memory", g.memory(), parse_bytes);
    if (gpu.memory.count == 0) where.fail("cluster.gpu.memory", fmt::format("must be > 0, got {}", quote_string(g.memory())));
  }
  if (!g.memory_bandwidth().empty()) {
    gpu.memory_bandwidth = parse_unit(where, "cluster.gpu.memory_bandwidth", g.memory_bandwidth(), parse_bandwidth);
    require_positive(where, "cluster.gpu.memory_bandwidth", gpu.memory_bandwidth, g.memory_bandwidth());
    require_at_least(where, "cluster.gpu.memory_bandwidth", gpu.memory_bandwidth.value, limits::kMinBandwidthBytesPerSecond,
                     "B/s", g.memory_bandwidth());
  }
  if (!g.nvlink_bandwidth().empty()) {
    gpu.nvlink_bandwidth = parse_unit(where, "cluster.gpu.nvlink_bandwidth", g.nvlink_bandwidth(), parse_bandwidth);
    require_positive(where, "cluster.gpu.nvlink_bandwidth", gpu.nvlink_bandwidth, g.nvlink_bandwidth());
    require_at_least(where, "cluster.gpu.nvlink_bandwidth", gpu.nvlink_bandwidth.value, limits::kMinBandwidthBytesPerSecond,
                     "B/s", g.nvlink_bandwidth());
  }
  return gpu;
}

LinkParams resolve_link(const proto::LinkSpec& link, std::string_view name, const FieldLocator& where) {
  const std::string bandwidth_path = fmt::format("cluster.{}.bandwidth", name);
  const std::string latency_path = fmt::format("cluster.{}.latency", name);
  if (link.bandwidth().empty()) where.fail(bandwidth_path, "must be set, e.g. \"400Gbps\" or \"50GB/s\"");
  if (link.latency().empty()) where.fail(latency_path, "must be set, e.g. \"1.5us\"");
  LinkParams params;
  params.bandwidth = parse_unit(where, bandwidth_path, link.bandwidth(), parse_bandwidth);
  require_positive(where, bandwidth_path, params.bandwidth, link.bandwidth());
  params.latency = parse_unit(where, latency_path, link.latency(), parse_seconds);
  if (!(params.latency.value >= 0.0)) where.fail(latency_path, fmt::format("must be >= 0, got {}", quote_string(link.latency())));
  if (!(params.latency.value <= limits::kMaxLatencySeconds)) {
    where.fail(latency_path, fmt::format("must be <= {} s (the bound of base/input_limits.h), got {}",
                                         limits::kMaxLatencySeconds, quote_string(link.latency())));
  }
  require_at_least(where, bandwidth_path, params.bandwidth.value, limits::kMinBandwidthBytesPerSecond, "B/s",
                   link.bandwidth());
  return params;
}


// ---------------------------------------------------------------- topology

// "2:1" -> {2, 1}; empty -> {1, 1}.
std::pair<std::uint32_t, std::uint32_t> resolve_ratio(const std::string& text, std::string_view path,
                                                      const FieldLocator& where) {
  if (text.empty()) return {1, 1};
  const auto colon = text.find(':');
  unsigned long down = 0, up = 0;
  std::size_t used_down = 0, used_up = 0;
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    down = std::stoul(text.substr(0, colon), &used_down);
    up = std::stoul(text.substr(colon + 1), &used_up);
  } catch (const std::exception&) {
    used_down = 0;
  }
  if (colon == std::string::npos || used_down != colon || used_up != text.size() - colon - 1 || down == 0 || up == 0 ||
      down > 1024 || up > 1024) {
    where.fail(path, fmt::format("must be a ratio of positive integers DOWN:UP such as \"2:1\", got {}", quote_string(text)));
  }
  return {static_cast<std::uint32_t>(down), static_cast<std::uint32_t>(up)};
}

// A topology link; falls back to `fallback` (a cluster link) when unset.
LinkParams resolve_topology_link(const proto::LinkParams& link, const std::string& path,
                                 const std::optional<LinkParams>& fallback, const FieldLocator& where) {
  if (link.bandwidth().empty() && link.latency().empty() && fallback) return *fallback;
  proto::LinkSpec spec;
  spec.set_bandwidth(link.bandwidth());
  spec.set_latency(link.latency());
  return resolve_link(spec, path, where);
}

std::vector<std::uint32_t> positive_dims(const google::protobuf::RepeatedField<std::uint32_t>& dims,
                                         const std::string& path, const FieldLocator& where) {
  std::vector<std::uint32_t> out(dims.begin(), dims.end());
  for (auto d : out) {
    if (d == 0) where.fail(path, "every dimension must be > 0, got 0");
  }
  return out;
}

std::uint64_t product(const std::vector<std::uint32_t>& dims) {
  std::uint64_t p = 1;
  for (auto d : dims) p *= d;
  return p;
}

TopologyConfig resolve_topology(const proto::Topology& t, const std::string& path, const ClusterSpec& cluster,
                                const std::optional<LinkParams>& intra_fallback,
                                const std::optional<LinkParams>& inter_fallback, const FieldLocator& where) {
  TopologyConfig config;
  config.nodes = cluster.nodes;
  config.chips_per_node = cluster.gpus_per_node;
  const std::uint64_t chips = std::uint64_t{cluster.nodes} * cluster.gpus_per_node;

  const auto& node = t.node();
  switch (node.kind()) {
    case proto::NODE_FABRIC_KIND_UNSPECIFIED:
    case proto::SWITCHED: config.node.kind = NodeFabricKind::Switched; break;
    case proto::MESH: config.node.kind = NodeFabricKind::Mesh; break;
    case proto::TORUS: config.node.kind = NodeFabricKind::Torus; break;
    default: where.fail(path + ".node.kind", fmt::format("unknown kind {}", static_cast<int>(node.kind())));
  }
  if (config.node.kind != NodeFabricKind::Switched) {
    config.node.dims = positive_dims(node.dims(), path + ".node.dims", where);
    if (config.node.dims.empty() || product(config.node.dims) != cluster.gpus_per_node) {
      where.fail(path + ".node.dims",
                 fmt::format("a MESH or TORUS node needs dims whose product is cluster.gpus_per_node ({}), got [{}]",
                             cluster.gpus_per_node, fmt::join(config.node.dims, ", ")));
    }
  } else if (node.dims_size() > 0) {
    where.fail(path + ".node.dims", "only MESH and TORUS nodes have dims");
  }
  // A node of one chip has no fabric to describe: its link may be left out.
  const bool no_fabric = cluster.gpus_per_node == 1 && node.link().bandwidth().empty() && node.link().latency().empty();
  if (!no_fabric || intra_fallback) {
    config.node.link = resolve_topology_link(node.link(), path.substr(std::string("cluster.").size()) + ".node.link",
                                             intra_fallback, where);
  }

  const std::string rel = path.substr(std::string("cluster.").size());
  switch (t.network_case()) {
    case proto::Topology::kFatTree: {
      const auto& f = t.fat_tree();
      FatTreeConfig c;
      if (f.radix() < 4 || f.radix() % 2 != 0)
        where.fail(path + ".fat_tree.radix", fmt::format("must be even and >= 4, got {}", f.radix()));
      require_at_most(where, path + ".fat_tree.radix", f.radix(), limits::kMaxSwitchRadix);
      require_at_most(where, path + ".fat_tree.nics_per_chip", f.nics_per_chip(), limits::kMaxLinksPerChip);
      c.radix = f.radix();
      c.levels = f.levels() == 0 ? 3 : f.levels();
      if (c.levels != 2 && c.levels != 3) where.fail(path + ".fat_tree.levels", fmt::format("must be 2 or 3, got {}", f.levels()));
      std::tie(c.oversubscription_down, c.oversubscription_up) =
          resolve_ratio(f.oversubscription(), path + ".fat_tree.oversubscription", where);
      c.nics_per_chip = f.nics_per_chip() == 0 ? 1 : f.nics_per_chip();
      c.link = resolve_topology_link(f.link(), rel + ".fat_tree.link", inter_fallback, where);
      config.network = c;
      config.name = t.name().empty() ? "fat-tree" : t.name();
      break;
    }
    case proto::Topology::kRailOptimized: {
      const auto& r = t.rail_optimized();
      RailOptimizedConfig c;
      if (r.radix() < 4 || r.radix() % 2 != 0)
        where.fail(path + ".rail_optimized.radix", fmt::format("must be even and >= 4, got {}", r.radix()));
      require_at_most(where, path + ".rail_optimized.radix", r.radix(), limits::kMaxSwitchRadix);
      require_at_most(where, path + ".rail_optimized.nics_per_chip", r.nics_per_chip(), limits::kMaxLinksPerChip);
      c.radix = r.radix();
      if (r.scalable_unit_nodes() == 0) where.fail(path + ".rail_optimized.scalable_unit_nodes", "must be > 0, got 0");
      c.scalable_unit_nodes = r.scalable_unit_nodes();
      std::tie(c.oversubscription_down, c.oversubscription_up) =
          resolve_ratio(r.oversubscription(), path + ".rail_optimized.oversubscription", where);
      c.rail_only = r.rail_only();
      c.nics_per_chip = r.nics_per_chip() == 0 ? 1 : r.nics_per_chip();
      c.link = resolve_topology_link(r.link(), rel + ".rail_optimized.link", inter_fallback, where);
      config.network = c;
      config.name = t.name().empty() ? (c.rail_only ? "rail-only" : "rail-optimized") : t.name();
      break;
    }
    case proto::Topology::kTorus: {
      const auto& tor = t.torus();
      TorusConfig c;
      c.dims = positive_dims(tor.dims(), path + ".torus.dims", where);
      if (c.dims.empty() || c.dims.size() > 3)
        where.fail(path + ".torus.dims", fmt::format("must have 1, 2 or 3 dimensions, got {}", c.dims.size()));
      if (product(c.dims) != chips) {
        where.fail(path + ".torus.dims", fmt::format("the product of the dims must be the {} chips (nodes x gpus_per_node), got {}",
                                                     chips, product(c.dims)));
      }
      if (cluster.gpus_per_node > 0 && c.dims[0] % cluster.gpus_per_node != 0) {
        where.fail(path + ".torus.dims", fmt::format("the first dimension ({}) must be a multiple of gpus_per_node ({}): "
                                                     "a node is gpus_per_node chips along it",
                                                     c.dims[0], cluster.gpus_per_node));
      }
      c.optical_block = positive_dims(tor.optical_block(), path + ".torus.optical_block", where);
      if (!c.optical_block.empty()) {
        if (c.optical_block.size() != c.dims.size())
          where.fail(path + ".torus.optical_block", "must have as many dimensions as dims");
        for (std::size_t i = 0; i < c.dims.size(); ++i) {
          if (c.dims[i] % c.optical_block[i] != 0)
            where.fail(path + ".torus.optical_block",
                       fmt::format("must divide dims in every dimension, got {} for {}", c.optical_block[i], c.dims[i]));
        }
      }
      require_at_most(where, path + ".torus.links_per_neighbor", tor.links_per_neighbor(), limits::kMaxLinksPerChip);
      c.links_per_neighbor = tor.links_per_neighbor() == 0 ? 1 : tor.links_per_neighbor();
      c.link = resolve_topology_link(tor.link(), rel + ".torus.link", inter_fallback, where);
      config.network = c;
      config.name = t.name().empty() ? "torus" : t.name();
      break;
    }
    case proto::Topology::kRailx: {
      const auto& x = t.railx();
      RailXConfig c;
      if (x.nx() == 0 || x.ny() == 0) where.fail(path + ".railx.nx", "nx and ny must be > 0");
      if (std::uint64_t{x.nx()} * x.ny() != cluster.nodes) {
        where.fail(path + ".railx.nx", fmt::format("nx x ny must equal cluster.nodes ({}), got {} x {}", cluster.nodes,
                                                   x.nx(), x.ny()));
      }
      c.nx = x.nx();
      c.ny = x.ny();
      c.mode = x.mode() == proto::RAIL_RING ? RailMode::Ring : RailMode::AllToAll;
      require_at_most(where, path + ".railx.ports_per_chip_x", x.ports_per_chip_x(), limits::kMaxLinksPerChip);
      require_at_most(where, path + ".railx.ports_per_chip_y", x.ports_per_chip_y(), limits::kMaxLinksPerChip);
      require_at_most(where, path + ".railx.ocs_radix", x.ocs_radix(), limits::kMaxSwitchRadix);
      c.ports_per_chip_x = x.ports_per_chip_x() == 0 ? 1 : x.ports_per_chip_x();
      c.ports_per_chip_y = x.ports_per_chip_y() == 0 ? 1 : x.ports_per_chip_y();
      c.rails_x = x.rails_x();
      c.rails_y = x.rails_y();
      c.link = resolve_topology_link(x.link(), rel + ".railx.link", inter_fallback, where);
      c.ocs_radix = x.ocs_radix() == 0 ? 300 : x.ocs_radix();
      config.network = c;
      config.name = t.name().empty() ? (c.mode == RailMode::Ring ? "railx-ring" : "railx-all-to-all") : t.name();
      break;
    }
    case proto::Topology::NETWORK_NOT_SET:
      where.fail(path, "must set one network: fat_tree, rail_optimized, torus or railx");
  }
  return config;
}

}  // namespace

FailureConfig resolve_failures(const proto::Failures& f, const ClusterSpec& cluster, const FieldLocator& where) {
  FailureConfig failures;
  for (auto n : f.nodes()) {
    if (n >= cluster.nodes)
      where.fail("cluster.failures.nodes", fmt::format("node {} does not exist (the cluster has {} nodes)", n, cluster.nodes));
    failures.nodes.push_back(n);
  }
  for (const auto& link : f.links()) {
    const auto dash = link.find('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == link.size()) {
      where.fail("cluster.failures.links",
                 fmt::format("must be \"A-B\" with the two vertex names of topology.json, e.g. \"chip3-leaf0\", got {}",
                             quote_string(link)));
    }
    failures.links.emplace_back(link.substr(0, dash), link.substr(dash + 1));
  }
  return failures;
}

namespace {

NetworkPrices resolve_prices(const proto::Prices& p, const FieldLocator& where) {
  NetworkPrices prices = default_network_prices();
  const std::tuple<std::string_view, double, double*> fields[] = {
      {"cluster.prices.transceiver_usd", p.transceiver_usd(), &prices.transceiver_usd},
      {"cluster.prices.fibre_usd", p.fibre_usd(), &prices.fibre_usd},
      {"cluster.prices.electrical_switch_port_usd", p.electrical_switch_port_usd(), &prices.electrical_switch_port_usd},
      {"cluster.prices.optical_switch_port_usd", p.optical_switch_port_usd(), &prices.optical_switch_port_usd},
      {"cluster.prices.copper_link_usd", p.copper_link_usd(), &prices.copper_link_usd},
  };
  for (const auto& [path, value, target] : fields) {
    if (!(value >= 0.0) || !std::isfinite(value)) where.fail(path, fmt::format("must be a price >= 0, got {}", value));
    if (value > 0.0) *target = value;
  }
  return prices;
}

// cluster.capital. Amortisation default, 5 years: Amazon's useful
// life of servers from 2025 (Microsoft and Alphabet use 6; their annual reports).
ClusterEconomics resolve_economics(const proto::Capital& p, const GpuSpec& gpu, const FieldLocator& where) {
  ClusterEconomics out;
  out.gpu_usd = gpu.price_usd;
  const std::tuple<std::string_view, double, double*> prices[] = {
      {"cluster.capital.gpu_usd", p.gpu_usd(), &out.gpu_usd},
      {"cluster.capital.node_usd", p.node_usd(), &out.node_usd},
  };
  for (const auto& [path, value, target] : prices) {
    if (!(value >= 0.0) || !std::isfinite(value)) where.fail(path, fmt::format("must be a price >= 0, got {}", value));
    if (value > 0.0) *target = value;
  }
  if (p.amortisation_years() != 0.0) {
    if (!(p.amortisation_years() > 0.0) || !std::isfinite(p.amortisation_years()) || p.amortisation_years() > 100.0)
      where.fail("cluster.capital.amortisation_years", fmt::format("must be in (0, 100] years, got {}", p.amortisation_years()));
    out.amortisation_years = p.amortisation_years();
  }
  if (p.utilisation() != 0.0) {
    if (!(p.utilisation() > 0.0) || p.utilisation() > 1.0)
      where.fail("cluster.capital.utilisation", fmt::format("must be in (0, 1], got {}", p.utilisation()));
    out.utilisation = p.utilisation();
  }
  return out;
}

// cluster.network: the named network becomes the topology the run uses; the
// one it replaces joins the compared networks, first.
void select_network(const std::string& name, ScenarioCluster& cluster, const FieldLocator& where) {
  std::vector<std::string> names{std::string(kSimpleNetworkName)};
  if (cluster.topology) names.push_back(cluster.topology->name);
  for (const auto& other : cluster.compare_topologies) names.push_back(other.name);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) != names.begin() + static_cast<std::ptrdiff_t>(i)) {
      where.fail("cluster.compare_topologies",
                 fmt::format("two networks are named '{}'; networks are chosen by name (cluster.network), so give "
                             "each its own", names[i]));
    }
  }
  if (name.empty() || (cluster.topology && name == cluster.topology->name) || (!cluster.topology && name == kSimpleNetworkName))
    return;
  std::optional<TopologyConfig> chosen;
  if (name != kSimpleNetworkName) {
    const auto it = std::find_if(cluster.compare_topologies.begin(), cluster.compare_topologies.end(),
                                 [&](const TopologyConfig& t) { return t.name == name; });
    if (it == cluster.compare_topologies.end())
      where.fail("cluster.network", fmt::format("no network is named '{}' (networks: {})", name, fmt::join(names, ", ")));
    chosen = std::move(*it);
    cluster.compare_topologies.erase(it);
  }
  if (cluster.topology) cluster.compare_topologies.insert(cluster.compare_topologies.begin(), std::move(*cluster.topology));
  cluster.topology = std::move(chosen);
}

}  // namespace

ClusterSpec resolve_cluster(const proto::Cluster& c, const FieldLocator& where) {
  ClusterSpec cluster;
  if (c.nodes() == 0) where.fail("cluster.nodes", "must be > 0, got 0");
  if (c.gpus_per_node() == 0) where.fail("cluster.gpus_per_node", "must be > 0, got 0");
  require_at_most(where, "cluster.nodes", c.nodes(), limits::kMaxNodes);
  require_at_most(where, "cluster.gpus_per_node", c.gpus_per_node(), limits::kMaxGpusPerNode);
  const std::uint64_t total = std::uint64_t{c.nodes()} * c.gpus_per_node();
  if (total > limits::kMaxRanks) {
    where.fail("cluster.nodes", fmt::format("nodes x gpus_per_node must be <= {} GPUs (the bound of "
                                            "base/input_limits.h), got {} x {} = {}",
                                            limits::kMaxRanks, c.nodes(), c.gpus_per_node(), total));
  }
  cluster.nodes = c.nodes();
  cluster.gpus_per_node = c.gpus_per_node();
  cluster.gpu = resolve_gpu(c.gpu(), where);
  // With a topology, the simple links are optional: the topology's node fabric
  // and network links stand in for them.
  const bool has_topology = c.has_topology();
  const auto has_link = [](const proto::LinkSpec& l) { return !l.bandwidth().empty() || !l.latency().empty(); };
  if (!has_topology || has_link(c.intra_node())) cluster.intra_node = resolve_link(c.intra_node(), "intra_node", where);
  if (!has_topology || has_link(c.inter_node())) cluster.inter_node = resolve_link(c.inter_node(), "inter_node", where);
  return cluster;
}


// The topology, the networks to compare and the prices; fills the simple
// cluster's links from the topology where the scenario left them out.
void resolve_network(const proto::Cluster& c, ResolvedScenario* resolved, const FieldLocator& where) {
  auto& cluster = resolved->cluster;
  const auto has_link = [](const proto::LinkSpec& l) { return !l.bandwidth().empty() || !l.latency().empty(); };
  const std::optional<LinkParams> intra = has_link(c.intra_node()) ? std::optional(cluster.intra_node) : std::nullopt;
  const std::optional<LinkParams> inter = has_link(c.inter_node()) ? std::optional(cluster.inter_node) : std::nullopt;
  const FailureConfig failures = resolve_failures(c.failures(), cluster, where);
  std::vector<bool> failed(cluster.nodes, false);
  for (auto n : failures.nodes) failed[n] = true;
  for (std::uint32_t n = 0; n < cluster.nodes; ++n) {
    if (!failed[n]) resolved->cluster.live_nodes.push_back(n);
  }
  if (resolved->cluster.live_nodes.empty()) where.fail("cluster.failures.nodes", "every node has failed");
  if (c.has_topology()) {
    TopologyConfig config = resolve_topology(c.topology(), "cluster.topology", cluster, intra, inter, where);
    config.failures = failures;
    if (!intra) cluster.intra_node = config.node.link;
    if (!inter) {
      cluster.inter_node = std::visit(
          [](const auto& network) -> LinkParams {
            if constexpr (std::is_same_v<std::decay_t<decltype(network)>, SimpleNetworkConfig>) {
              return network.inter_node;
            } else {
              return network.link;
            }
          },
          config.network);
    }
    resolved->cluster.topology = std::move(config);
  }
  for (const auto& other : c.compare_topologies()) {
    TopologyConfig config = resolve_topology(other, "cluster.compare_topologies", cluster, cluster.intra_node,
                                             cluster.inter_node, where);
    config.failures = failures;
    resolved->cluster.compare_topologies.push_back(std::move(config));
  }
  select_network(c.network(), resolved->cluster, where);
  resolved->cluster.prices = resolve_prices(c.prices(), where);
  resolved->cluster.economics = resolve_economics(c.capital(), cluster.gpu, where);
}

}  // namespace eppsim::scenario_parts
