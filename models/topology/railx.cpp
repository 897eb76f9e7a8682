#include "models/topology/railx.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "base/errors.h"

namespace eppsim {

namespace {
constexpr const char* kDimName[2] = {"x", "y"};
}  // namespace

std::string RailXFailureReport::summary() const {
  std::string out;
  if (failed_nodes.empty() && failed_links == 0) return "no failures\n";
  if (!failed_nodes.empty()) out += fmt::format("failed nodes: {}\n", fmt::join(failed_nodes, ", "));
  for (std::size_t i = 0; i < rebuilt_rows.size(); ++i) {
    out += fmt::format("rebuilt row {} over its {} live nodes\n", rebuilt_rows[i], row_sizes[i]);
  }
  for (std::size_t i = 0; i < rebuilt_columns.size(); ++i) {
    out += fmt::format("rebuilt column {} over its {} live nodes\n", rebuilt_columns[i], column_sizes[i]);
  }
  if (failed_links > 0) out += fmt::format("failed rail links: {}\n", failed_links);
  out += fmt::format("rail links lost: {} ({} per direction); injection bandwidth lost: {}\n", rail_links_lost,
                     format_bandwidth(rail_bandwidth_lost), format_bandwidth(injection_bandwidth_lost));
  return out;
}

RailXTopology::RailXTopology(const TopologyConfig& config)
    : Topology(config.name, config.nodes, config.chips_per_node), config_(std::get<RailXConfig>(config.network)) {
  const auto& c = config_;
  if (c.nx == 0 || c.ny == 0) {
    throw_topology_error(name(), c.nx == 0 ? "railx.nx" : "railx.ny", "must be > 0, got 0");
  }
  if (static_cast<std::uint64_t>(c.nx) * c.ny != nodes()) {
    throw_topology_error(name(), "railx.nx",
                         fmt::format("the grid nx x ny = {} x {} = {} nodes must equal the cluster's {} nodes", c.nx,
                                     c.ny, static_cast<std::uint64_t>(c.nx) * c.ny, nodes()));
  }
  if (c.ocs_radix == 0) throw_topology_error(name(), "railx.ocs_radix", "must be > 0, got 0");
  ports_per_chip_[0] = c.ports_per_chip_x;
  ports_per_chip_[1] = c.ports_per_chip_y;
  const std::uint32_t given[2] = {c.rails_x, c.rails_y};
  const std::uint32_t line_nodes[2] = {c.nx, c.ny};
  for (int dim = 0; dim < 2; ++dim) {
    const std::string field = fmt::format("railx.rails_{}", kDimName[dim]);
    const std::uint64_t ports = static_cast<std::uint64_t>(chips_per_node()) * ports_per_chip_[dim];
    const std::uint64_t rails = given[dim] != 0 ? given[dim] : ports / 2;
    if (2 * rails > ports) {
      throw_topology_error(name(), field,
                           fmt::format("{} rails need {} ports per node, but {} chips x ports_per_chip_{} = {} give {}",
                                       rails, 2 * rails, chips_per_node(), kDimName[dim], ports_per_chip_[dim], ports));
    }
    if (line_nodes[dim] > 1 && rails == 0) {
      throw_topology_error(name(), fmt::format("railx.ports_per_chip_{}", kDimName[dim]),
                           fmt::format("a node needs at least 2 {} ports (one rail) to join its {} neighbours; it has {}",
                                       kDimName[dim], dim == 0 ? "row" : "column", ports));
    }
    if (c.mode == RailMode::AllToAll && line_nodes[dim] > 2 * rails + 1) {
      throw_topology_error(
          name(), field,
          fmt::format("all-to-all over {} nodes per {} needs {} rails (a decomposition of K_n needs n <= 2*rails+1), "
                      "got {}",
                      line_nodes[dim], dim == 0 ? "row (nx)" : "column (ny)", line_nodes[dim] / 2, rails));
    }
    rails_[dim] = static_cast<std::uint32_t>(rails);
  }
  if ((rails_[0] > 0 || rails_[1] > 0) && !(c.link.bandwidth.value > 0.0)) {
    throw_topology_error(name(), "railx.link.bandwidth", "must be > 0");
  }
  std::vector<bool> failed(nodes(), false);
  for (const auto node : config.failures.nodes) {
    if (node >= nodes()) {
      throw InputError(fmt::format("topology '{}': failures.nodes: node {} does not exist ({} nodes)", name(), node,
                                   nodes()));
    }
    if (!failed[node]) failed_nodes_list_.push_back(node);
    failed[node] = true;
  }
  std::sort(failed_nodes_list_.begin(), failed_nodes_list_.end());

  fabric_.build(*this, config.node);
  healthy_rail_links_ = static_cast<std::uint64_t>(plan_for(0, c.nx).links) * c.ny +
                        static_cast<std::uint64_t>(plan_for(1, c.ny).links) * c.nx;
  mutable_links().reserve(links().size() + healthy_rail_links_);
  first_rail_link_ = static_cast<LinkId>(links().size());
  lines_[0].resize(c.ny);
  lines_[1].resize(c.nx);
  for (std::uint32_t y = 0; y < c.ny; ++y) build_line(0, y, lines_[0][y], failed);
  for (std::uint32_t x = 0; x < c.nx; ++x) build_line(1, x, lines_[1][x], failed);
  rail_links_ = links().size() - first_rail_link_;
  finalize();
  // Failed nodes are dropped from the rails above; their own fabric fails too
  // (build_topology marks them again with the failed links: idempotent).
  if (!failed_nodes_list_.empty()) {
    for (const auto node : failed_nodes_list_) mark_node_failed(node);
    finalize();
  }
}

const RailXTopology::Plan& RailXTopology::plan_for(std::uint32_t dim, std::uint32_t n) {
  auto it = plans_[dim].find(n);
  if (it != plans_[dim].end()) return it->second;
  Plan p;
  p.n = n;
  p.rails = rails_[dim];
  p.rail_cycle.assign(p.rails, 0);
  p.rail_offset.assign(p.rails, 0);
  std::vector<std::uint32_t> rail_links(p.rails, 0);
  if (n >= 2) {
    if (config_.mode == RailMode::Ring) {
      p.cycles.emplace_back(n);
      for (std::uint32_t i = 0; i < n; ++i) p.cycles[0][i] = i;
      p.cycle_count = 1;
      p.needed = 1;
      std::fill(rail_links.begin(), rail_links.end(), n);
    } else {
      HamiltonianDecomposition d = complete_graph_decomposition(n);
      const std::string err = verify_decomposition(n, d);
      if (!err.empty()) throw std::logic_error(fmt::format("RailX: decomposition of K_{} is broken: {}", n, err));
      p.cycle_count = static_cast<std::uint32_t>(d.cycles.size());
      p.needed = n / 2;
      if (p.needed > p.rails) throw std::logic_error("RailX: more nodes per line than the rails can decompose");
      for (std::uint32_t r = 0; r < p.rails; ++r) {
        std::int32_t cycle;
        if (r < p.cycle_count) {
          cycle = static_cast<std::int32_t>(r);
        } else if (r < p.needed || p.cycle_count == 0) {
          cycle = -1;  // the matching (and, for n = 2, every spare rail)
        } else {
          cycle = static_cast<std::int32_t>((r - p.needed) % p.cycle_count);
        }
        p.rail_cycle[r] = cycle;
        rail_links[r] = n;  // a cycle's n circuits, or two for each of a matching's n / 2 pairs
      }
      p.cycles = std::move(d.cycles);
      p.matching = std::move(d.matching);
      if (n % 2 == 0 && n >= 4) p.table = PairRailTable(HamiltonianDecomposition{n, p.cycles, p.matching});
    }
    p.position.assign(static_cast<std::size_t>(p.cycles.size()) * n, 0);
    for (std::uint32_t cyc = 0; cyc < p.cycles.size(); ++cyc) {
      for (std::uint32_t i = 0; i < n; ++i) p.position[cyc * n + p.cycles[cyc][i]] = i;
    }
    p.match_index.assign(n, 0);
    for (std::uint32_t j = 0; j < p.matching.size(); ++j) {
      p.match_index[p.matching[j].first] = j;
      p.match_index[p.matching[j].second] = j;
    }
  }
  for (std::uint32_t r = 0; r < p.rails; ++r) {
    p.rail_offset[r] = p.links;
    p.links += rail_links[r];
  }
  return plans_[dim].emplace(n, std::move(p)).first->second;
}

void RailXTopology::build_line(std::uint32_t dim, std::uint32_t index, Line& line, const std::vector<bool>& failed) {
  const std::uint32_t length = dim == 0 ? config_.nx : config_.ny;
  auto node_of_coord = [&](std::uint32_t coord) { return dim == 0 ? node_at(coord, index) : node_at(index, coord); };
  line.position.assign(length, -1);
  for (std::uint32_t coord = 0; coord < length; ++coord) {
    if (failed[node_of_coord(coord)]) continue;
    line.position[coord] = static_cast<std::int32_t>(line.members.size());
    line.members.push_back(coord);
  }
  const Plan& plan = plan_for(dim, static_cast<std::uint32_t>(line.members.size()));
  line.plan = &plan;
  line.base = static_cast<LinkId>(links().size());
  const std::uint32_t n = plan.n;
  const std::uint32_t ppc = ports_per_chip_[dim];
  const std::uint32_t cpn = chips_per_node();
  Link link;
  link.bandwidth = config_.link.bandwidth;
  link.latency = config_.link.latency;
  link.medium = LinkMedium::OpticalCircuit;
  for (std::uint32_t r = 0; r < plan.rails; ++r) {
    link.rail = static_cast<std::int32_t>(dim == 0 ? r : rails_[0] + r);
    const VertexId east = railx_port_chip(r, 1, ppc);
    const VertexId west = railx_port_chip(r, 0, ppc);
    const std::uint32_t count = plan.rail_offset.size() > r + 1 ? plan.rail_offset[r + 1] - plan.rail_offset[r]
                                                                : plan.links - plan.rail_offset[r];
    for (std::uint32_t j = 0; j < count; ++j) {
      std::uint32_t pa, pb;
      if (plan.rail_cycle[r] >= 0) {
        const auto& cycle = plan.cycles[static_cast<std::size_t>(plan.rail_cycle[r])];
        pa = cycle[j];
        pb = cycle[(j + 1) % n];
      } else if (j % 2 == 0) {
        pa = plan.matching[j / 2].first;
        pb = plan.matching[j / 2].second;
      } else {
        pa = plan.matching[j / 2].second;
        pb = plan.matching[j / 2].first;
      }
      link.a = node_of_coord(line.members[pa]) * cpn + east;
      link.b = node_of_coord(line.members[pb]) * cpn + west;
      add_link(link);
    }
  }
}

void RailXTopology::joining_rails(const Plan& plan, std::uint32_t a, std::uint32_t b,
                                  std::vector<std::uint32_t>* rails) const {
  rails->clear();
  if (plan.n == 2) {
    for (std::uint32_t r = 0; r < plan.rails; ++r) rails->push_back(r);
    return;
  }
  const std::uint32_t q = plan.n % 2 == 1 ? walecki_rail(plan.n, a, b) : plan.table.rail(a, b);
  if (q >= plan.cycle_count) {
    rails->push_back(plan.cycle_count);  // the matching's rail
    return;
  }
  rails->push_back(q);
  for (std::uint32_t r = plan.needed + q; r < plan.rails; r += plan.cycle_count) rails->push_back(r);
}

LinkId RailXTopology::rail_link(const Line& line, std::uint32_t rail, std::uint32_t a, std::uint32_t b) const {
  const Plan& plan = *line.plan;
  const std::int32_t cycle = plan.rail_cycle[rail];
  std::uint32_t index;
  if (cycle < 0) {
    // The pair's circuit leaving a's east port: 2j from the pair's first vertex, 2j + 1 from its second.
    const std::uint32_t j = plan.match_index[a];
    index = 2 * j + (plan.matching[j].first == a ? 0 : 1);
  } else {
    const std::uint32_t n = plan.n;
    const std::uint32_t pa = plan.position[static_cast<std::size_t>(cycle) * n + a];
    const std::uint32_t pb = plan.position[static_cast<std::size_t>(cycle) * n + b];
    index = (pa + 1) % n == pb ? pa : pb;
  }
  return line.base + plan.rail_offset[rail] + index;
}

bool RailXTopology::traverse(LinkId id, std::uint32_t node, VertexId* at, std::vector<LinkId>* path) const {
  const Link& l = link(id);
  if (l.failed) return false;
  const bool a_here = node_of(l.a) == node;
  const VertexId here = a_here ? l.a : l.b;
  if (!fabric_.route(*this, *at, here, path)) return false;
  path->push_back(id);
  *at = a_here ? l.b : l.a;
  return true;
}

bool RailXTopology::cross_line(std::uint32_t dim, std::uint32_t from, std::uint32_t to, std::uint64_t hash,
                               VertexId* at, std::vector<LinkId>* path) const {
  const Line& line = lines_[dim][dim == 0 ? y_of(from) : x_of(from)];
  const std::int32_t sa = line.position[dim == 0 ? x_of(from) : y_of(from)];
  const std::int32_t sb = line.position[dim == 0 ? x_of(to) : y_of(to)];
  if (sa < 0 || sb < 0) return false;
  const auto pa = static_cast<std::uint32_t>(sa);
  const auto pb = static_cast<std::uint32_t>(sb);
  const Plan& plan = *line.plan;
  const std::uint32_t n = plan.n;
  if (plan.rails == 0 || n < 2) return false;
  if (config_.mode == RailMode::AllToAll) {
    thread_local std::vector<std::uint32_t> rails;
    joining_rails(plan, pa, pb, &rails);
    for (std::size_t i = 0; i < rails.size(); ++i) {
      const LinkId id = rail_link(line, rails[(hash + i) % rails.size()], pa, pb);
      if (!link(id).failed) return traverse(id, from, at, path);
    }
    return false;
  }
  // Ring: the shortest way around, on the first rail (from the hash) whose
  // circuits on the way are all live.
  const std::uint32_t delta = (pb + n - pa) % n;
  const bool forward = 2 * delta <= n;
  const std::uint32_t steps = forward ? delta : n - delta;
  for (std::uint32_t i = 0; i < plan.rails; ++i) {
    const std::uint32_t r = static_cast<std::uint32_t>((hash + i) % plan.rails);
    const LinkId block = line.base + plan.rail_offset[r];
    bool live = true;
    for (std::uint32_t s = 0, p = pa; s < steps && live; ++s) {
      const std::uint32_t index = forward ? p : (p + n - 1) % n;
      live = !link(block + index).failed;
      p = forward ? (p + 1) % n : (p + n - 1) % n;
    }
    if (!live) continue;
    for (std::uint32_t s = 0, p = pa; s < steps; ++s) {
      const std::uint32_t index = forward ? p : (p + n - 1) % n;
      const std::uint32_t coord = line.members[p];
      const std::uint32_t node =
          dim == 0 ? node_at(coord, y_of(from)) : node_at(x_of(from), coord);
      if (!traverse(block + index, node, at, path)) return false;
      p = forward ? (p + 1) % n : (p + n - 1) % n;
    }
    return true;
  }
  return false;
}

bool RailXTopology::route_by_rule(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const {
  const std::uint32_t ns = node_of(src);
  const std::uint32_t nt = node_of(dst);
  if (ns == nt) return fabric_.route(*this, src, dst, path);
  const std::uint64_t h = ecmp_hash(src, dst, flow);
  const std::uint64_t h_row = mix64(h + 1);
  const std::uint64_t h_col = mix64(h + 2);
  VertexId at = src;
  const std::uint32_t xs = x_of(ns), ys = y_of(ns), xt = x_of(nt), yt = y_of(nt);
  if (ys == yt) return cross_line(0, ns, nt, h_row, &at, path) && fabric_.route(*this, at, dst, path);
  if (xs == xt) return cross_line(1, ns, nt, h_col, &at, path) && fabric_.route(*this, at, dst, path);
  // Row first through the corner (xt, ys); else column first through (xs, yt).
  const std::uint32_t row_corner = node_at(xt, ys);
  if (!node_failed(row_corner) && cross_line(0, ns, row_corner, h_row, &at, path) &&
      cross_line(1, row_corner, nt, h_col, &at, path) && fabric_.route(*this, at, dst, path)) {
    return true;
  }
  path->clear();
  at = src;
  const std::uint32_t col_corner = node_at(xs, yt);
  return !node_failed(col_corner) && cross_line(1, ns, col_corner, h_col, &at, path) &&
         cross_line(0, col_corner, nt, h_row, &at, path) && fabric_.route(*this, at, dst, path);
}

void RailXTopology::route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const {
  path->clear();
  check_route_endpoints(src, dst);
  if (src == dst) return;
  if (route_by_rule(src, dst, flow, path)) return;
  route_over_live_links(src, dst, flow, path);
}

std::vector<LinkId> RailXTopology::links_between(std::uint32_t node_a, std::uint32_t node_b) const {
  std::vector<LinkId> out;
  if (node_a == node_b || node_a >= nodes() || node_b >= nodes()) return out;
  std::uint32_t dim;
  if (y_of(node_a) == y_of(node_b)) {
    dim = 0;
  } else if (x_of(node_a) == x_of(node_b)) {
    dim = 1;
  } else {
    return out;
  }
  const Line& line = lines_[dim][dim == 0 ? y_of(node_a) : x_of(node_a)];
  const std::int32_t sa = line.position[dim == 0 ? x_of(node_a) : y_of(node_a)];
  const std::int32_t sb = line.position[dim == 0 ? x_of(node_b) : y_of(node_b)];
  if (sa < 0 || sb < 0 || line.plan->n < 2) return out;
  const auto pa = static_cast<std::uint32_t>(sa);
  const auto pb = static_cast<std::uint32_t>(sb);
  const Plan& plan = *line.plan;
  if (config_.mode == RailMode::AllToAll) {
    std::vector<std::uint32_t> rails;
    joining_rails(plan, pa, pb, &rails);
    for (const auto r : rails) {
      out.push_back(rail_link(line, r, pa, pb));
      if (plan.rail_cycle[r] < 0) out.push_back(rail_link(line, r, pb, pa));  // a matched pair's second circuit
    }
  } else {
    const std::uint32_t n = plan.n;
    for (std::uint32_t r = 0; r < plan.rails; ++r) {
      const LinkId block = line.base + plan.rail_offset[r];
      if ((pa + 1) % n == pb) out.push_back(block + pa);
      if ((pb + 1) % n == pa) out.push_back(block + pb);
    }
  }
  std::erase_if(out, [&](LinkId id) { return link(id).failed; });
  return out;
}

BytesPerSecond RailXTopology::bisection_bandwidth() const {
  const std::uint32_t half_x = config_.nx / 2;
  const std::uint32_t half_y = config_.ny / 2;
  double cut_x = 0.0, cut_y = 0.0;
  for (LinkId id = first_rail_link_; id < links().size(); ++id) {
    const Link& l = link(id);
    if (l.failed) continue;
    const std::uint32_t na = node_of(l.a), nb = node_of(l.b);
    if (static_cast<std::uint32_t>(l.rail) < rails_[0]) {
      if ((x_of(na) < half_x) != (x_of(nb) < half_x)) cut_x += l.bandwidth.value;
    } else if ((y_of(na) < half_y) != (y_of(nb) < half_y)) {
      cut_y += l.bandwidth.value;
    }
  }
  if (config_.nx < 2 && config_.ny < 2) return BytesPerSecond(0.0);
  if (config_.nx < 2) return BytesPerSecond(cut_y);
  if (config_.ny < 2) return BytesPerSecond(cut_x);
  return BytesPerSecond(std::min(cut_x, cut_y));
}

NetworkInventory RailXTopology::inventory() const {
  NetworkInventory inv = Topology::inventory();
  inv.optical_switches = 0;
  inv.optical_switch_ports = 0;
  for (int dim = 0; dim < 2; ++dim) {
    for (const auto& line : lines_[dim]) {
      const std::uint64_t ports = 2ull * line.plan->links;
      const std::uint64_t switches = (ports + config_.ocs_radix - 1) / config_.ocs_radix;
      inv.optical_switches += switches;
      inv.optical_switch_ports += switches * config_.ocs_radix;
    }
  }
  return inv;
}

RailXFailureReport RailXTopology::failure_report() const {
  RailXFailureReport report;
  report.failed_nodes = failed_nodes_list_;
  for (int dim = 0; dim < 2; ++dim) {
    const std::uint32_t length = dim == 0 ? config_.nx : config_.ny;
    for (std::uint32_t i = 0; i < lines_[dim].size(); ++i) {
      const auto size = static_cast<std::uint32_t>(lines_[dim][i].members.size());
      if (size == length) continue;
      (dim == 0 ? report.rebuilt_rows : report.rebuilt_columns).push_back(i);
      (dim == 0 ? report.row_sizes : report.column_sizes).push_back(size);
    }
  }
  for (LinkId id = first_rail_link_; id < links().size(); ++id) {
    if (link(id).failed) ++report.failed_links;
  }
  report.rail_links_lost = healthy_rail_links_ - rail_links_ + report.failed_links;
  const double bw = config_.link.bandwidth.value;
  report.rail_bandwidth_lost = BytesPerSecond(static_cast<double>(report.rail_links_lost) * bw);
  report.injection_bandwidth_lost = BytesPerSecond(2.0 * static_cast<double>(report.rail_links_lost) * bw);
  return report;
}

}  // namespace eppsim
