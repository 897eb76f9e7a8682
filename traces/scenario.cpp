#include "traces/scenario.h"

#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <tuple>
#include <type_traits>
#include <variant>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include "models/errors.h"
#include "models/flexsp_preset.h"
#include "models/gpu_spec.h"
#include "models/units.h"
#include "traces/cost_model_factory.h"
#include "traces/proto_io.h"
#include "traces/text_parse.h"

namespace eppsim {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;

constexpr std::string_view kDefaultStrategy = "packed-1f1b";
constexpr std::string_view kDefaultEngine = "analytic";
// Engines this build can run, and engines that exist in eppsim's design but
// are not built yet (named so that the error can say so).
constexpr std::string_view kAvailableEngines[] = {"analytic"};
constexpr std::string_view kPlannedEngines[] = {"flow"};

template <typename Range, typename Name>
std::string join_names(const Range& range, Name name) {
  std::string joined;
  for (const auto& item : range) {
    if (!joined.empty()) joined += ", ";
    joined += name(item);
  }
  return joined;
}

std::string join(std::span<const std::string_view> names) {
  return join_names(names, [](std::string_view n) { return std::string(n); });
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t dot = path.find('.', begin);
    parts.push_back(path.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    if (dot == std::string_view::npos) return parts;
    begin = dot + 1;
  }
}

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// `path` is `prefix` or lies below it ("a.b" covers "a.b" and "a.b.c", not "a.bc").
bool covers(std::string_view prefix, std::string_view path) {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '.');
}

struct ParsedOverride {
  std::string assignment;  // as given: "FIELD=VALUE"
  std::string field;       // the dotted path, trimmed
};

// Where each field of a scenario came from, so that a broken rule can name the
// file, the line, the field path and, for a value given by --set, the override.
class FieldLocator {
 public:
  FieldLocator(std::string source, const ParseInfoTree* tree, std::vector<ParsedOverride> overrides)
      : source_(std::move(source)), tree_(tree), overrides_(std::move(overrides)) {}

  const std::string& source() const { return source_; }

  // "file:LINE: path: rule" (LINE of the field, or of its nearest written
  // ancestor), "file: path: rule" when no line is known, with the override
  // named when --set gave the value.
  [[noreturn]] void fail(std::string_view path, std::string_view rule) const {
    for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
      if (covers(it->field, path))
        throw InputError(fmt::format("{}: {}: {} (set by --set {})", source_, path, rule, it->assignment));
    }
    if (const int line = line_of(path); line > 0) throw InputError(fmt::format("{}:{}: {}: {}", source_, line, path, rule));
    throw InputError(fmt::format("{}: {}: {}", source_, path, rule));
  }

 private:
  // 1-based line of the deepest component of `path` that the parser saw; 0 if none.
  int line_of(std::string_view path) const {
    const ParseInfoTree* tree = tree_;
    const Descriptor* descriptor = proto::Scenario::descriptor();
    int line = 0;
    for (std::string_view name : split_path(path)) {
      if (tree == nullptr || descriptor == nullptr) break;
      const FieldDescriptor* field = descriptor->FindFieldByName(std::string(name));
      if (field == nullptr) break;
      const int index = field->is_repeated() ? 0 : -1;
      const auto location = tree->GetLocation(field, index);
      if (location.line < 0) break;
      line = location.line + 1;
      if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) break;
      tree = tree->GetTreeForNested(field, index);
      descriptor = field->message_type();
    }
    return line;
  }

  std::string source_;
  const ParseInfoTree* tree_;
  std::vector<ParsedOverride> overrides_;
};

// A double-quoted string literal, valid both in messages and in text format.
std::string quote_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

// Parses a unit string with `parse`, turning the unit parser's error into one
// that names the field.
template <typename Parse>
auto parse_unit(const FieldLocator& where, std::string_view path, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const InputError& e) {
    where.fail(path, e.what());
  }
}

template <typename Quantity>
void require_positive(const FieldLocator& where, std::string_view path, Quantity quantity, const std::string& text) {
  if (!(quantity.value > 0.0)) where.fail(path, fmt::format("must be > 0, got {}", quote_string(text)));
}

// ---------------------------------------------------------------- model

std::string preset_names(std::span<const TransformerSpec> presets) {
  return join_names(presets, [](const TransformerSpec& s) { return s.name; });
}

TransformerSpec resolve_model(const proto::Model& m, const FieldLocator& where) {
  TransformerSpec spec;
  const bool has_preset = !m.preset().empty();
  if (has_preset) {
    const TransformerSpec* preset = find_model_preset(m.preset());
    if (preset == nullptr)
      where.fail("model.preset", fmt::format("unknown preset {} (known: {})", quote_string(m.preset()),
                                             preset_names(model_presets())));
    spec = *preset;
  } else {
    spec.name = "custom";
    const std::pair<std::string_view, std::uint32_t> required[] = {
        {"model.layers", m.layers()},
        {"model.hidden_size", m.hidden_size()},
        {"model.attention_heads", m.attention_heads()},
        {"model.ffn_hidden_size", m.ffn_hidden_size()},
        {"model.vocab_size", m.vocab_size()},
    };
    for (const auto& [path, value] : required) {
      if (value == 0)
        where.fail(path, fmt::format("must be > 0 when model.preset is not set (known presets: {}), got 0",
                                     preset_names(model_presets())));
    }
    spec.kv_heads = m.attention_heads();  // multi-head attention unless kv_heads says otherwise
  }
  if (m.layers() != 0) spec.layers = m.layers();
  if (m.hidden_size() != 0) spec.hidden_size = m.hidden_size();
  if (m.attention_heads() != 0) spec.attention_heads = m.attention_heads();
  if (m.kv_heads() != 0) spec.kv_heads = m.kv_heads();
  if (m.ffn_hidden_size() != 0) spec.ffn_hidden_size = m.ffn_hidden_size();
  if (m.vocab_size() != 0) spec.vocab_size = m.vocab_size();
  switch (m.ffn_kind()) {
    case proto::FFN_KIND_UNSPECIFIED: break;
    case proto::SWIGLU: spec.ffn_kind = FfnKind::SwiGlu; break;
    case proto::GELU: spec.ffn_kind = FfnKind::Gelu; break;
    default: where.fail("model.ffn_kind", fmt::format("unknown value {} (known: SWIGLU, GELU)", static_cast<int>(m.ffn_kind())));
  }
  if (m.position_embeddings() != 0) spec.position_embeddings = m.position_embeddings();
  if (m.tied_embeddings()) spec.tied_embeddings = true;
  if (m.bytes_per_element() != 0) {
    if (m.bytes_per_element() != 1 && m.bytes_per_element() != 2 && m.bytes_per_element() != 4)
      where.fail("model.bytes_per_element", fmt::format("must be 1, 2 or 4 (0 means 2), got {}", m.bytes_per_element()));
    spec.bytes_per_element = m.bytes_per_element();
  }
  if (spec.attention_heads == 0) where.fail("model.attention_heads", "must be > 0, got 0");
  if (spec.kv_heads == 0) where.fail("model.kv_heads", "must be > 0, got 0");
  if (spec.hidden_size % spec.attention_heads != 0)
    where.fail("model.hidden_size", fmt::format("must be divisible by model.attention_heads ({}), got {}",
                                                spec.attention_heads, spec.hidden_size));
  if (spec.attention_heads % spec.kv_heads != 0)
    where.fail("model.kv_heads", fmt::format("must divide model.attention_heads ({}), got {}", spec.attention_heads,
                                             spec.kv_heads));
  return spec;
}

// ---------------------------------------------------------------- cluster

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
  }
  if (!g.memory().empty()) {
    gpu.memory = parse_unit(where, "cluster.gpu.memory", g.memory(), parse_bytes);
    if (gpu.memory.count == 0) where.fail("cluster.gpu.memory", fmt::format("must be > 0, got {}", quote_string(g.memory())));
  }
  if (!g.memory_bandwidth().empty()) {
    gpu.memory_bandwidth = parse_unit(where, "cluster.gpu.memory_bandwidth", g.memory_bandwidth(), parse_bandwidth);
    require_positive(where, "cluster.gpu.memory_bandwidth", gpu.memory_bandwidth, g.memory_bandwidth());
  }
  if (!g.nvlink_bandwidth().empty()) {
    gpu.nvlink_bandwidth = parse_unit(where, "cluster.gpu.nvlink_bandwidth", g.nvlink_bandwidth(), parse_bandwidth);
    require_positive(where, "cluster.gpu.nvlink_bandwidth", gpu.nvlink_bandwidth, g.nvlink_bandwidth());
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
  config.node.link = resolve_topology_link(node.link(), path.substr(std::string("cluster.").size()) + ".node.link",
                                           intra_fallback, where);

  const std::string rel = path.substr(std::string("cluster.").size());
  switch (t.network_case()) {
    case proto::Topology::kFatTree: {
      const auto& f = t.fat_tree();
      FatTreeConfig c;
      if (f.radix() < 4 || f.radix() % 2 != 0)
        where.fail(path + ".fat_tree.radix", fmt::format("must be even and >= 4, got {}", f.radix()));
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
      if (c.dims.size() != 2 && c.dims.size() != 3)
        where.fail(path + ".torus.dims", fmt::format("must have 2 or 3 dimensions, got {}", c.dims.size()));
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

ClusterSpec resolve_cluster(const proto::Cluster& c, const FieldLocator& where) {
  ClusterSpec cluster;
  if (c.nodes() == 0) where.fail("cluster.nodes", "must be > 0, got 0");
  if (c.gpus_per_node() == 0) where.fail("cluster.gpus_per_node", "must be > 0, got 0");
  const std::uint64_t total = std::uint64_t{c.nodes()} * c.gpus_per_node();
  if (total > std::numeric_limits<std::uint32_t>::max())
    where.fail("cluster.nodes", fmt::format("nodes x gpus_per_node must fit in 32 bits, got {}", total));
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
    if (!failed[n]) resolved->live_nodes.push_back(n);
  }
  if (resolved->live_nodes.empty()) where.fail("cluster.failures.nodes", "every node has failed");
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
    resolved->topology = std::move(config);
  }
  for (const auto& other : c.compare_topologies()) {
    TopologyConfig config = resolve_topology(other, "cluster.compare_topologies", cluster, cluster.intra_node,
                                             cluster.inter_node, where);
    config.failures = failures;
    resolved->compare_topologies.push_back(std::move(config));
  }
  resolved->prices = resolve_prices(c.prices(), where);
}

// ---------------------------------------------------------------- workload

std::shared_ptr<const LengthDistribution> resolve_lengths(const proto::LengthSource& lengths,
                                                          const std::filesystem::path& base_dir,
                                                          const FieldLocator& where) {
  if (!lengths.jsonl_field().empty() && lengths.source_case() != proto::LengthSource::kFile)
    where.fail("workload.lengths.jsonl_field", "only applies to a file source (workload.lengths.file)");
  switch (lengths.source_case()) {
    case proto::LengthSource::kDistribution:
      try {
        return std::make_shared<QuantileDistribution>(embedded_distribution(lengths.distribution()));
      } catch (const InputError& e) {
        where.fail("workload.lengths.distribution", e.what());
      }
    case proto::LengthSource::kFile: {
      if (lengths.file().empty()) where.fail("workload.lengths.file", "must not be empty");
      std::filesystem::path file(lengths.file());
      if (file.is_relative()) file = base_dir / file;
      std::error_code error;
      if (!std::filesystem::is_regular_file(file, error)) {
        where.fail("workload.lengths.file", fmt::format("no such file {} (relative paths resolve against {})",
                                                        file.string(), base_dir.string()));
      }
      std::vector<std::uint64_t> values;
      try {
        values = load_lengths_file(file, lengths.jsonl_field().empty() ? "length" : lengths.jsonl_field());
      } catch (const InputError& e) {
        where.fail("workload.lengths.file", e.what());
      }
      if (values.empty()) where.fail("workload.lengths.file", fmt::format("{} holds no lengths", file.string()));
      return std::make_shared<EmpiricalListDistribution>(lengths.file(), std::move(values));
    }
    case proto::LengthSource::kFixed:
      if (lengths.fixed() == 0) where.fail("workload.lengths.fixed", "must be > 0, got 0");
      return std::make_shared<FixedLengthDistribution>(lengths.fixed());
    case proto::LengthSource::SOURCE_NOT_SET: break;
  }
  where.fail("workload.lengths", "set one of distribution (e.g. \"wikipedia\"), file or fixed");
}

OverMaxLength resolve_over_max_length(proto::OverMaxLength value, const FieldLocator& where) {
  switch (value) {
    case proto::OVER_MAX_LENGTH_UNSPECIFIED:
    case proto::TRUNCATE: return OverMaxLength::Truncate;
    case proto::DROP: return OverMaxLength::Drop;
    default: break;
  }
  where.fail("workload.over_max_length", fmt::format("unknown value {} (known: TRUNCATE, DROP)", static_cast<int>(value)));
}

// ---------------------------------------------------------------- plan

void check_packed_1f1b(const proto::Scenario& scenario, const ResolvedScenario& resolved, const FieldLocator& where) {
  const proto::Packed1F1BOptions& options = scenario.plan().packed_1f1b();
  const std::uint32_t stages = options.pipeline_stages();
  const std::uint32_t gpus = resolved.usable_gpus();
  if (stages == 0) where.fail("plan.packed_1f1b.pipeline_stages", "must be > 0, got 0");
  if (gpus % stages != 0) {
    where.fail("plan.packed_1f1b.pipeline_stages",
               fmt::format("must divide the cluster's {} GPUs (cluster.nodes {}{} x cluster.gpus_per_node {}), got {}", gpus,
                           resolved.cluster.nodes,
                           resolved.live_nodes.size() == resolved.cluster.nodes
                               ? std::string()
                               : fmt::format(" less {} failed", resolved.cluster.nodes - resolved.live_nodes.size()),
                           resolved.cluster.gpus_per_node, stages));
  }
  if (stages > resolved.model.layers) {
    where.fail("plan.packed_1f1b.pipeline_stages",
               fmt::format("must be <= the model's {} layers, got {}", resolved.model.layers, stages));
  }
  if (options.micro_batch_tokens() == 0) where.fail("plan.packed_1f1b.micro_batch_tokens", "must be > 0, got 0");
  const std::uint32_t tp = (options.tensor_parallel() > 0 ? options.tensor_parallel() : 1u);
  const std::uint32_t cp = (options.context_parallel() > 0 ? options.context_parallel() : 1u);
  if (tp > resolved.cluster.gpus_per_node) {
    where.fail("plan.packed_1f1b.tensor_parallel",
               fmt::format("must be <= cluster.gpus_per_node {} (TP stays inside a node), got {}",
                           resolved.cluster.gpus_per_node, tp));
  }
  if (resolved.model.attention_heads % tp != 0) {
    where.fail("plan.packed_1f1b.tensor_parallel",
               fmt::format("must divide the model's {} attention heads, got {}", resolved.model.attention_heads, tp));
  }
  if (gpus % (static_cast<std::uint64_t>(tp) * cp * stages) != 0) {
    where.fail("plan.packed_1f1b.context_parallel",
               fmt::format("tensor_parallel x context_parallel x pipeline_stages ({} x {} x {}) must divide the {} GPUs",
                           tp, cp, stages, gpus));
  }
}

// Seq1F1B: defaults pipeline_stages = live nodes, sp_degree = gpus_per_node,
// slices = 4, chunk_tokens = ceil(max_length / slices), checkpointed_layers = 0.
void check_seq1f1b(const proto::Scenario& scenario, const ResolvedScenario& resolved, const FieldLocator& where) {
  const proto::Seq1F1BOptions& options = scenario.plan().seq1f1b();
  const std::uint32_t gpus = resolved.usable_gpus();
  const std::uint32_t stages =
      options.pipeline_stages() > 0 ? options.pipeline_stages() : static_cast<std::uint32_t>(resolved.live_nodes.size());
  const std::uint32_t sp = options.sp_degree() > 0 ? options.sp_degree() : resolved.cluster.gpus_per_node;
  if (stages > resolved.model.layers) {
    where.fail("plan.seq1f1b.pipeline_stages",
               fmt::format("must be <= the model's {} layers, got {}", resolved.model.layers, stages));
  }
  if (sp > resolved.cluster.gpus_per_node) {
    where.fail("plan.seq1f1b.sp_degree",
               fmt::format("must be <= cluster.gpus_per_node {} (SP stays inside a node), got {}",
                           resolved.cluster.gpus_per_node, sp));
  }
  if (resolved.cluster.gpus_per_node % sp != 0) {
    where.fail("plan.seq1f1b.sp_degree",
               fmt::format("must divide cluster.gpus_per_node {}, got {}", resolved.cluster.gpus_per_node, sp));
  }
  if (resolved.model.attention_heads % sp != 0 || resolved.model.kv_heads % sp != 0) {
    where.fail("plan.seq1f1b.sp_degree", fmt::format("must divide the model's {} attention heads and {} KV heads, got {}",
                                                     resolved.model.attention_heads, resolved.model.kv_heads, sp));
  }
  if (gpus % (static_cast<std::uint64_t>(stages) * sp) != 0) {
    where.fail("plan.seq1f1b.pipeline_stages",
               fmt::format("pipeline_stages x sp_degree ({} x {}) must divide the {} GPUs", stages, sp, gpus));
  }
  const std::uint32_t min_layers = resolved.model.layers / stages;
  if (options.checkpointed_layers() > min_layers) {
    where.fail("plan.seq1f1b.checkpointed_layers",
               fmt::format("must be <= the {} layers of the smallest stage, got {}", min_layers,
                           options.checkpointed_layers()));
  }
  if (scenario.plan().zero_stage() > 2) {
    where.fail("plan.zero_stage", fmt::format("seq1f1b supports ZeRO stages 0 to 2, got {}", scenario.plan().zero_stage()));
  }
}

void check_epp(const proto::Scenario& scenario, const ResolvedScenario& resolved, const FieldLocator& where) {
  // Every option has a default, so a scenario written for another strategy runs this one.
  const proto::EppOptions& options = scenario.plan().epp();
  const std::uint32_t gpus = resolved.usable_gpus();
  const std::uint32_t stages =
      options.pipeline_stages() > 0 ? options.pipeline_stages() : static_cast<std::uint32_t>(resolved.live_nodes.size());
  const std::uint32_t sp = options.sp_degree() > 0 ? options.sp_degree() : resolved.cluster.gpus_per_node;
  if (stages > resolved.model.layers) {
    where.fail("plan.epp.pipeline_stages", fmt::format("must be <= the model's {} layers, got {}", resolved.model.layers, stages));
  }
  if (sp > resolved.cluster.gpus_per_node || resolved.cluster.gpus_per_node % sp != 0) {
    where.fail("plan.epp.sp_degree", fmt::format("must divide cluster.gpus_per_node {} (SP stays inside a node), got {}",
                                                 resolved.cluster.gpus_per_node, sp));
  }
  if (resolved.model.attention_heads % sp != 0 || resolved.model.kv_heads % sp != 0) {
    where.fail("plan.epp.sp_degree", fmt::format("must divide the model's {} attention heads and {} KV heads, got {}",
                                                 resolved.model.attention_heads, resolved.model.kv_heads, sp));
  }
  if (gpus % (static_cast<std::uint64_t>(stages) * sp) != 0) {
    where.fail("plan.epp.pipeline_stages",
               fmt::format("pipeline_stages x sp_degree ({} x {}) must divide the {} GPUs", stages, sp, gpus));
  }
  for (int i = 0; i < options.slice_counts_size(); ++i) {
    const auto k = options.slice_counts(i);
    if (k == 0 || k > 1024) {
      where.fail(fmt::format("plan.epp.slice_counts[{}]", i), fmt::format("must be in [1, 1024], got {}", k));
    }
  }
  const double gap = options.checkpoint_gap();
  if (!(gap >= 0.0 && gap < 1.0)) {
    where.fail("plan.epp.checkpoint_gap", fmt::format("must be in [0, 1) (0 means the default 0.02), got {}", gap));
  }
  const double limit = options.solver_time_limit_s();
  if (!(limit >= 0.0) || !std::isfinite(limit)) {
    where.fail("plan.epp.solver_time_limit_s", fmt::format("must be >= 0 (0 means the default 10 s), got {}", limit));
  }
  if (scenario.plan().zero_stage() > 2) {
    where.fail("plan.zero_stage", fmt::format("epp supports ZeRO stages 0 to 2, got {}", scenario.plan().zero_stage()));
  }
}

void check_ulysses_adaptive(const proto::Scenario& scenario, const ResolvedScenario&, const FieldLocator& where) {
  // The degree is chosen per batch; sp_degree is ignored.
  const double fill = scenario.plan().ulysses().packing_fill();
  if (!(fill >= 0.0 && fill <= 1.0)) {
    where.fail("plan.ulysses.packing_fill", fmt::format("must be in (0, 1] (0 means the default 0.9), got {}", fill));
  }
}

void check_ulysses(const proto::Scenario& scenario, const ResolvedScenario& resolved, const FieldLocator& where) {
  // Every option has a default, so a scenario written for another strategy runs this one.
  const proto::UlyssesOptions& options = scenario.plan().ulysses();
  const std::uint32_t gpus = resolved.usable_gpus();
  const std::uint32_t degree = options.sp_degree() == 0 ? resolved.cluster.gpus_per_node : options.sp_degree();
  if ((degree & (degree - 1)) != 0 || gpus % degree != 0) {
    where.fail("plan.ulysses.sp_degree",
               fmt::format("must be a power of two dividing the cluster's {} GPUs (0 means gpus_per_node), got {}", gpus,
                           degree));
  }
  if (resolved.model.attention_heads % degree != 0 || resolved.model.kv_heads % degree != 0) {
    where.fail("plan.ulysses.sp_degree", fmt::format("must divide the model's {} attention heads and {} KV heads, got {}",
                                                     resolved.model.attention_heads, resolved.model.kv_heads, degree));
  }
  check_ulysses_adaptive(scenario, resolved, where);
}

void check_flexsp(const proto::Scenario& scenario, const ResolvedScenario& resolved, const FieldLocator& where) {
  const proto::FlexSPOptions& options = scenario.plan().flexsp();
  const double limit = options.solver_time_limit_s();
  if (!(limit >= 0.0) || !std::isfinite(limit)) {
    where.fail("plan.flexsp.solver_time_limit_s", fmt::format("must be >= 0 (0 means the default 10 s), got {}", limit));
  }
  const double gap = options.relative_gap();
  if (!(gap >= 0.0 && gap < 1.0)) {
    where.fail("plan.flexsp.relative_gap", fmt::format("must be in [0, 1) (0 means the default 0.01), got {}", gap));
  }
  if (options.solver_node_limit() > 10'000'000) {
    where.fail("plan.flexsp.solver_node_limit",
               fmt::format("must be <= 10000000 (0 means the default 500), got {}", options.solver_node_limit()));
  }
  if (options.max_buckets() > 4096) {
    where.fail("plan.flexsp.max_buckets", fmt::format("must be <= 4096 (0 means the default 16), got {}", options.max_buckets()));
  }
  if (options.extra_micro_batch_counts() > 64) {
    where.fail("plan.flexsp.extra_micro_batch_counts",
               fmt::format("must be <= 64 (0 means the default 4), got {}", options.extra_micro_batch_counts()));
  }
  const std::uint32_t gpus = resolved.usable_gpus();
  if (gpus != 1 && gpus % 2 != 0) {
    where.fail("cluster.nodes", fmt::format("flexsp needs an even number of GPUs (power-of-two SP groups), got {}", gpus));
  }
}

// The strategies a scenario may name, each with the rules of its options.
// A new planner adds one line here.
struct StrategyRules {
  std::string_view name;
  void (*check)(const proto::Scenario&, const ResolvedScenario&, const FieldLocator&);
};
constexpr StrategyRules kStrategies[] = {
    {"packed-1f1b", check_packed_1f1b},
    {"ulysses", check_ulysses},
    {"ulysses-adaptive", check_ulysses_adaptive},
    {"seq1f1b", check_seq1f1b},
    {"flexsp", check_flexsp},
    {"epp", check_epp},
    {"epp-no-ckpt", check_epp},
    {"epp-full-ckpt", check_epp},
    {"epp-even-split", check_epp},
    {"epp-flex", check_epp},
};

const StrategyRules& resolve_strategy(const std::string& strategy, const FieldLocator& where) {
  for (const StrategyRules& rules : kStrategies) {
    if (rules.name == strategy) return rules;
  }
  where.fail("plan.strategy", fmt::format("unknown strategy {} (known: {})", quote_string(strategy),
                                          join_names(kStrategies, [](const StrategyRules& r) { return std::string(r.name); })));
}

// ---------------------------------------------------------------- cost model

CalibratedFit resolve_fit(const proto::ComputeFit& fit, std::string_view path, const FieldLocator& where) {
  const std::pair<std::string_view, double> coefficients[] = {
      {"alpha1_s_per_token2", fit.alpha1_s_per_token2()},
      {"alpha2_s_per_token", fit.alpha2_s_per_token()},
      {"beta_s", fit.beta_s()},
  };
  bool any_positive = false;
  for (const auto& [name, value] : coefficients) {
    if (!(value >= 0.0) || !std::isfinite(value))
      where.fail(fmt::format("{}.{}", path, name), fmt::format("must be finite and >= 0, got {}", value));
    any_positive = any_positive || value > 0.0;
  }
  if (!any_positive)
    where.fail(path, "needs at least one positive coefficient (alpha1_s_per_token2, alpha2_s_per_token, beta_s)");
  return CalibratedFit{fit.alpha1_s_per_token2(), fit.alpha2_s_per_token(), fit.beta_s()};
}

double resolve_efficiency(double value, double fallback, std::string_view path, const FieldLocator& where) {
  if (value == 0.0) return fallback;
  if (!(value > 0.0 && value <= 1.0))
    where.fail(path, fmt::format("must be in (0, 1] (0 means the default {}), got {}", fallback, value));
  return value;
}

// Which FlexSP model's measured constants apply (cost_model.flexsp_preset);
// nullptr when none is named.
const FlexSpModel* resolve_flexsp_preset(const std::string& name, const TransformerSpec& model,
                                         const FieldLocator& where) {
  if (name.empty()) return nullptr;
  const FlexSpModel* preset = find_flexsp_model(name);
  if (preset == nullptr) {
    where.fail("cost_model.flexsp_preset",
               fmt::format("unknown FlexSP preset {} (known: {})", quote_string(name),
                           join_names(flexsp_models(), [](const FlexSpModel& m) { return std::string(m.name); })));
  }
  if (preset->layers != model.layers || preset->hidden_size != model.hidden_size) {
    where.fail("cost_model.flexsp_preset",
               fmt::format("FlexSP preset {} measured a model of {} layers and hidden size {}, but the model has {} "
                           "layers and hidden size {}",
                           quote_string(name), preset->layers, preset->hidden_size, model.layers, model.hidden_size));
  }
  return preset;
}

// The cost model's parts (compute model, network pricing, FlexSP preset) and
// the shared CostModel for the default placement (traces/cost_model_factory.h).
void resolve_cost_model(const proto::Scenario& scenario, ResolvedScenario* resolved, const FieldLocator& where) {
  const proto::CostModel& cost = scenario.cost_model();
  const AnalyticEfficiency defaults;
  AnalyticEfficiency efficiency;
  efficiency.gemm = resolve_efficiency(cost.gemm_efficiency(), defaults.gemm, "cost_model.gemm_efficiency", where);
  efficiency.attention =
      resolve_efficiency(cost.attention_efficiency(), defaults.attention, "cost_model.attention_efficiency", where);
  proto::CostModel::Compute compute = cost.compute();
  if (compute == proto::CostModel::COMPUTE_DEFAULT)
    compute = cost.has_calibration() ? proto::CostModel::CALIBRATED : proto::CostModel::ROOFLINE;
  if (compute != proto::CostModel::ROOFLINE && compute != proto::CostModel::CALIBRATED)
    where.fail("cost_model.compute", fmt::format("unknown value {} (known: ROOFLINE, CALIBRATED)", static_cast<int>(compute)));
  if (compute == proto::CostModel::CALIBRATED) {
    if (!cost.has_calibration())
      where.fail("cost_model.compute", "CALIBRATED needs cost_model.calibration (per-layer forward and backward fits)");
    const CalibratedFit forward = resolve_fit(cost.calibration().forward(), "cost_model.calibration.forward", where);
    const CalibratedFit backward = resolve_fit(cost.calibration().backward(), "cost_model.calibration.backward", where);
    resolved->compute_cost =
        std::make_shared<CalibratedComputeCost>(resolved->model, resolved->cluster.gpu, forward, backward, efficiency);
  } else {
    resolved->compute_cost = std::make_shared<AnalyticComputeCost>(resolved->model, resolved->cluster.gpu, efficiency);
  }

  proto::CostModel::Network network = cost.network();
  if (network == proto::CostModel::NETWORK_DEFAULT)
    network = resolved->topology ? proto::CostModel::ROUTED : proto::CostModel::CLOSED_FORM;
  if (network != proto::CostModel::CLOSED_FORM && network != proto::CostModel::ROUTED)
    where.fail("cost_model.network", fmt::format("unknown value {} (known: CLOSED_FORM, ROUTED)", static_cast<int>(network)));
  if (network == proto::CostModel::ROUTED && !resolved->topology)
    where.fail("cost_model.network", "ROUTED needs cluster.topology (the links to route over); use CLOSED_FORM");
  resolved->network_pricing = network == proto::CostModel::ROUTED ? NetworkPricing::Routed : NetworkPricing::ClosedForm;

  resolved->flexsp_preset = resolve_flexsp_preset(cost.flexsp_preset(), resolved->model, where);
  resolved->cost = make_cost_model(*resolved, default_placement(*resolved, resolved->usable_gpus()));
}

std::string resolve_engine(const std::string& engine, const FieldLocator& where) {
  const std::string name = engine.empty() ? std::string(kDefaultEngine) : engine;
  for (std::string_view available : kAvailableEngines) {
    if (available == name) return name;
  }
  for (std::string_view planned : kPlannedEngines) {
    if (planned == name)
      where.fail("simulation.engine", fmt::format("engine {} is not available in this build (available: {})",
                                                  quote_string(name), join(kAvailableEngines)));
  }
  where.fail("simulation.engine", fmt::format("unknown engine {} (available: {})", quote_string(name), join(kAvailableEngines)));
}

// ---------------------------------------------------------------- resolution

ResolvedScenario resolve(const proto::Scenario& scenario, const FieldLocator& where,
                         const std::filesystem::path& base_dir) {
  ResolvedScenario resolved;
  resolved.proto = scenario;
  resolved.source = where.source();
  resolved.seed = scenario.seed();

  resolved.model = resolve_model(scenario.model(), where);
  resolved.cluster = resolve_cluster(scenario.cluster(), where);
  resolve_network(scenario.cluster(), &resolved, where);

  const proto::Workload& workload = scenario.workload();
  resolved.lengths = resolve_lengths(workload.lengths(), base_dir, where);
  if (workload.global_batch() == 0) where.fail("workload.global_batch", "must be > 0, got 0");
  resolved.global_batch = workload.global_batch();
  if (workload.max_length() == 0) where.fail("workload.max_length", "must be > 0, got 0");
  resolved.max_length = workload.max_length();
  resolved.over_max_length = resolve_over_max_length(workload.over_max_length(), where);

  const proto::Plan& plan = scenario.plan();
  resolved.strategy = plan.strategy().empty() ? std::string(kDefaultStrategy) : plan.strategy();
  const StrategyRules& strategy = resolve_strategy(resolved.strategy, where);
  if (plan.zero_stage() > 3) where.fail("plan.zero_stage", fmt::format("must be 0, 1, 2 or 3, got {}", plan.zero_stage()));
  double fraction = plan.memory_fraction();
  if (fraction == 0.0) fraction = 1.0;
  if (!(fraction > 0.0 && fraction <= 1.0))
    where.fail("plan.memory_fraction", fmt::format("must be in (0, 1] (0 means the default 1.0), got {}", fraction));
  const Bytes memory = resolved.cluster.gpu.memory;
  resolved.memory_limit =
      fraction == 1.0 ? memory : Bytes(static_cast<std::uint64_t>(std::floor(static_cast<double>(memory.count) * fraction)));
  strategy.check(scenario, resolved, where);

  resolve_cost_model(scenario, &resolved, where);
  resolved.engine = resolve_engine(scenario.simulation().engine(), where);
  return resolved;
}

// ---------------------------------------------------------------- overrides

std::string field_names(const Descriptor* descriptor) {
  std::string names;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    if (!names.empty()) names += ", ";
    names += descriptor->field(i)->name();
  }
  return names;
}

std::string enum_names(const FieldDescriptor* field) {
  std::string names;
  const auto* type = field->enum_type();
  for (int i = 0; i < type->value_count(); ++i) {
    if (!names.empty()) names += ", ";
    names += type->value(i)->name();
  }
  return names;
}

std::string type_name(const FieldDescriptor* field) {
  if (field->is_map()) return "map";
  std::string name = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ? field->message_type()->name()
                     : field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM  ? field->enum_type()->name()
                                                                           : field->type_name();
  return field->is_repeated() ? "repeated " + name : name;
}

bool is_quoted(std::string_view value) {
  return value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front();
}

// True when `message` has nothing set except, at each level, the next field of
// `path` (so a VALUE cannot smuggle in other fields with "} other { ...").
bool only_path_is_set(const Message& message, std::span<const FieldDescriptor* const> path) {
  std::vector<const FieldDescriptor*> set;
  message.GetReflection()->ListFields(message, &set);
  if (!message.GetReflection()->GetUnknownFields(message).empty()) return false;
  for (const FieldDescriptor* field : set) {
    if (field != path.front()) return false;
  }
  if (path.size() == 1 || set.empty()) return true;
  return only_path_is_set(message.GetReflection()->GetMessage(message, path.front()), path.subspan(1));
}

ParsedOverride apply_override_impl(proto::Scenario* scenario, std::string_view assignment) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string_view::npos)
    throw InputError(fmt::format("--set {}: expected FIELD=VALUE, e.g. plan.packed_1f1b.pipeline_stages=4", assignment));
  const std::string_view field_path = trim(assignment.substr(0, equals));
  const std::string_view value = trim(assignment.substr(equals + 1));
  if (field_path.empty()) throw InputError(fmt::format("--set {}: the FIELD before '=' is empty", assignment));

  // Walk the descriptors first: nothing changes unless the whole override is good.
  std::vector<const FieldDescriptor*> path;
  const Descriptor* descriptor = proto::Scenario::descriptor();
  std::string walked;
  const std::vector<std::string_view> parts = split_path(field_path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (descriptor == nullptr) {
      const FieldDescriptor* parent = path.back();
      throw InputError(fmt::format("--set {}: {} is a {} field and has no field '{}'", assignment, walked,
                                   type_name(parent), parts[i]));
    }
    const FieldDescriptor* field = parts[i].empty() ? nullptr : descriptor->FindFieldByName(std::string(parts[i]));
    if (field == nullptr) {
      throw InputError(fmt::format("--set {}: {} has no field '{}' (fields: {})", assignment,
                                   walked.empty() ? std::string("the scenario") : walked, parts[i],
                                   field_names(descriptor)));
    }
    if (!walked.empty()) walked += '.';
    walked += field->name();
    path.push_back(field);
    const bool last = i + 1 == parts.size();
    if (!last && field->is_repeated()) {
      throw InputError(fmt::format("--set {}: {} is a {} field; set it whole (--set {}=[...])", assignment, walked,
                                   type_name(field), walked));
    }
    descriptor = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ? field->message_type() : nullptr;
  }
  const FieldDescriptor* leaf = path.back();

  // Text format for "a { b { leaf: VALUE } }"; a bare string gets its quotes.
  std::string literal(value);
  if (leaf->cpp_type() == FieldDescriptor::CPPTYPE_STRING && !leaf->is_repeated() && !is_quoted(value))
    literal = quote_string(value);
  if (leaf->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && value.empty()) literal = "{}";
  std::string snippet;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) snippet += path[i]->name() + " { ";
  snippet += fmt::format("{}: {}", leaf->name(), literal);
  for (std::size_t i = 0; i + 1 < path.size(); ++i) snippet += " }";

  proto::Scenario update;
  if (const auto error = try_parse_text(snippet, &update)) {
    std::string hint;
    if (leaf->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) hint = fmt::format(" (values: {})", enum_names(leaf));
    if (leaf->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !leaf->is_repeated())
      hint = fmt::format(" (a message: VALUE is {{ field: value ... }})");
    throw InputError(fmt::format("--set {}: {} ({}): {}{}", assignment, walked, type_name(leaf), error->message, hint));
  }
  if (!only_path_is_set(update, path))
    throw InputError(fmt::format("--set {}: VALUE must be a single {} value for {}", assignment, type_name(leaf), walked));

  // Replace, not merge: clear the leaf, then merge the update (which holds only it).
  Message* target = scenario;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) target = target->GetReflection()->MutableMessage(target, path[i]);
  target->GetReflection()->ClearField(target, leaf);
  scenario->MergeFrom(update);
  return ParsedOverride{std::string(assignment), walked};
}

ResolvedScenario load_text(std::string_view text, const std::string& source, const std::filesystem::path& base_dir,
                           const std::vector<std::string>& overrides) {
  proto::Scenario scenario;
  ParseInfoTree locations;
  parse_text_strict(text, &scenario, source, &locations);
  std::vector<ParsedOverride> applied;
  applied.reserve(overrides.size());
  for (const std::string& assignment : overrides) applied.push_back(apply_override_impl(&scenario, assignment));
  const FieldLocator where(source, &locations, std::move(applied));
  return resolve(scenario, where, base_dir);
}

}  // namespace

proto::Scenario parse_scenario_text(std::string_view text, std::string_view source) {
  proto::Scenario scenario;
  parse_text_strict(text, &scenario, source);
  return scenario;
}

void apply_override(proto::Scenario* scenario, std::string_view assignment) { apply_override_impl(scenario, assignment); }

ResolvedScenario resolve_scenario(const proto::Scenario& scenario, std::string_view source,
                                  const std::filesystem::path& base_dir) {
  const FieldLocator where(std::string(source), nullptr, {});
  return resolve(scenario, where, base_dir);
}

ResolvedScenario load_scenario(const std::filesystem::path& path, const std::vector<std::string>& overrides) {
  const std::string text = read_file(path);
  std::filesystem::path base_dir = path.parent_path();
  if (base_dir.empty()) base_dir = ".";
  return load_text(text, path.string(), base_dir, overrides);
}

TopologyConfig network_of(const ResolvedScenario& scenario) {
  if (scenario.topology) return *scenario.topology;
  TopologyConfig config;
  config.name = "simple";
  config.nodes = scenario.cluster.nodes;
  config.chips_per_node = scenario.cluster.gpus_per_node;
  config.node.kind = NodeFabricKind::Switched;
  config.node.link = scenario.cluster.intra_node;
  config.network = SimpleNetworkConfig{scenario.cluster.inter_node};
  config.failures = resolve_failures(scenario.proto.cluster().failures(), scenario.cluster,
                                     FieldLocator(scenario.source, nullptr, {}));
  return config;
}

ResolvedScenario load_embedded_quickstart(const std::vector<std::string>& overrides) {
  return load_text(embedded_quickstart_text(), "<embedded quickstart>", ".", overrides);
}

}  // namespace eppsim
