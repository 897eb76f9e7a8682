#include "sim/topo.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "models/topology/railx.h"
#include "models/topology/topology_metrics.h"
#include "base/units.h"
#include "base/proto_io.h"
#include "traces/trace_report.h"

namespace eppsim {
namespace {

void fill_report(const TopologyMetrics& m, const NetworkPrices& prices, proto::TopologyReport* r) {
  const auto d = [](auto value) { return static_cast<double>(value); };
  r->set_name(m.name);
  r->set_kind(m.kind);
  r->set_chips(d(m.chips));
  r->set_live_chips(d(m.live_chips));
  r->set_nodes(d(m.nodes));
  r->set_vertices(d(m.vertices));
  r->set_links(d(m.links));
  r->set_diameter_hops(d(m.diameter_hops));
  r->set_inter_node_diameter_hops(d(m.inter_node_diameter_hops));
  r->set_diameter_exact(m.diameter_exact);
  r->set_diameter_sources(d(m.diameter_sources));
  r->set_injection_bandwidth_per_chip_bps(m.injection_bandwidth_per_chip_Bps);
  r->set_injection_bandwidth_bps(m.injection_bandwidth_Bps);
  r->set_bisection_bandwidth_bps(m.bisection_bandwidth_Bps);
  r->set_allreduce_bandwidth_bps(m.allreduce_bandwidth_Bps);
  r->set_alltoall_bandwidth_bps(m.alltoall_bandwidth_Bps);
  r->set_cost_usd(m.cost_usd);
  r->set_cost_per_chip_usd(m.chips > 0 ? m.cost_usd / d(m.chips) : 0.0);
  r->set_cost_per_injection_bps(m.cost_per_injection_Bps);
  r->set_cost_per_bisection_bps(m.cost_per_bisection_Bps);
  r->set_cost_per_allreduce_bps(m.cost_per_allreduce_Bps);
  r->set_cost_per_alltoall_bps(m.cost_per_alltoall_Bps);
  r->set_cost_per_injection_vs_fat_tree(m.cost_per_injection_vs_fat_tree);
  r->set_cost_per_bisection_vs_fat_tree(m.cost_per_bisection_vs_fat_tree);
  r->set_build_time_s(m.build_time_s);

  auto* inv = r->mutable_inventory();
  inv->set_electrical_links(d(m.inventory.electrical_links));
  inv->set_optical_links(d(m.inventory.optical_links));
  inv->set_optical_circuits(d(m.inventory.optical_circuits));
  inv->set_electrical_switch_ports(d(m.inventory.electrical_switch_ports));
  inv->set_optical_switch_ports(d(m.inventory.optical_switch_ports));
  inv->set_electrical_switches(d(m.inventory.electrical_switches));
  inv->set_optical_switches(d(m.inventory.optical_switches));

  auto* ft = r->mutable_fat_tree();
  ft->set_radix(m.fat_tree.radix);
  ft->set_levels(m.fat_tree.levels);
  ft->set_endpoint_ports(d(m.fat_tree.endpoint_ports));
  ft->set_port_bandwidth_bps(m.fat_tree.port_bandwidth_Bps);
  ft->set_switch_ports(d(m.fat_tree.switch_ports));
  ft->set_optical_links(d(m.fat_tree.optical_links));
  ft->set_cost_usd(m.fat_tree.cost_usd);
  ft->set_injection_bandwidth_bps(m.fat_tree.injection_bandwidth_Bps);
  ft->set_bisection_bandwidth_bps(m.fat_tree.bisection_bandwidth_Bps);

  auto* p = r->mutable_prices();
  p->set_transceiver_usd(prices.transceiver_usd);
  p->set_fibre_usd(prices.fibre_usd);
  p->set_electrical_switch_port_usd(prices.electrical_switch_port_usd);
  p->set_optical_switch_port_usd(prices.optical_switch_port_usd);
  p->set_copper_link_usd(prices.copper_link_usd);
}

struct Measured {
  std::unique_ptr<Topology> topology;
  TopologyMetrics metrics;
};

Measured build_and_measure(const TopologyConfig& config, const NetworkPrices& prices, const MeasureOptions& options) {
  Measured out;
  const auto start = std::chrono::steady_clock::now();
  out.topology = build_topology(config);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.metrics = measure_topology(*out.topology, prices, options);
  out.metrics.build_time_s = build_s;
  return out;
}

bool has_failures(const FailureConfig& failures) { return !failures.nodes.empty() || !failures.links.empty(); }

// What the network itself did about its failures (RailX re-patches its OCSes).
void add_recovery(const Topology& topology, proto::FailureReport* f) {
  const auto* railx = dynamic_cast<const RailXTopology*>(&topology);
  if (railx == nullptr) return;
  const RailXFailureReport r = railx->failure_report();
  for (auto row : r.rebuilt_rows) f->add_rebuilt_rows(row);
  for (auto column : r.rebuilt_columns) f->add_rebuilt_columns(column);
  f->set_rail_links_lost(static_cast<double>(r.rail_links_lost));
  f->set_rail_bandwidth_lost_bps(r.rail_bandwidth_lost.value);
  const std::string summary = r.summary();
  for (std::size_t begin = 0; begin < summary.size();) {
    auto end = summary.find('\n', begin);
    if (end == std::string::npos) end = summary.size();
    if (end > begin) f->add_notes("RailX: " + summary.substr(begin, end - begin));
    begin = end + 1;
  }
}

}  // namespace

proto::TopologyReport study_topology(const TopologyConfig& config, const NetworkPrices& prices,
                                     const MeasureOptions& options) {
  proto::TopologyReport report;
  const Measured measured = build_and_measure(config, prices, options);
  fill_report(measured.metrics, prices, &report);
  if (!has_failures(config.failures)) return report;

  TopologyConfig healthy_config = config;
  healthy_config.failures = FailureConfig{};
  const Measured healthy = build_and_measure(healthy_config, prices, options);
  const FailureImpact impact = failure_impact(healthy.metrics, measured.metrics, *measured.topology);
  auto* f = report.mutable_failures();
  for (auto n : config.failures.nodes) f->add_nodes(n);
  for (const auto& [a, b] : config.failures.links) f->add_links(a + "-" + b);
  f->set_failed_nodes(static_cast<double>(impact.failed_nodes));
  f->set_failed_links(static_cast<double>(impact.failed_links));
  f->set_chips_lost(static_cast<double>(impact.chips_lost));
  f->set_injection_lost_bps(impact.injection_lost_Bps);
  f->set_bisection_lost_bps(impact.bisection_lost_Bps);
  f->set_allreduce_lost_bps(impact.allreduce_lost_Bps);
  f->set_alltoall_lost_bps(impact.alltoall_lost_Bps);
  f->set_diameter_change_hops(static_cast<double>(impact.diameter_change_hops));
  f->set_inter_node_diameter_change_hops(static_cast<double>(impact.inter_node_diameter_change_hops));
  add_recovery(*measured.topology, f);
  for (const auto& note : impact.notes) f->add_notes(note);
  fill_report(healthy.metrics, prices, f->mutable_healthy());
  return report;
}

proto::TopologyReport run_topology_study(const ResolvedScenario& scenario) {
  proto::TopologyReport report = study_topology(network_of(scenario), scenario.cluster.prices);
  // One reference fat-tree for the whole study: the comparisons price it with
  // the main network's port bandwidth.
  MeasureOptions options;
  options.reference_port_bandwidth_Bps = report.fat_tree().port_bandwidth_bps();
  for (const auto& config : scenario.cluster.compare_topologies) {
    *report.add_comparisons() = study_topology(config, scenario.cluster.prices, options);
  }
  report.set_scenario(scenario.proto.name());
  report.set_eppsim_version(eppsim_version());
  return report;
}

std::string topology_summary(const proto::TopologyReport& report) {
  const auto bw = [](double v) { return format_bandwidth(BytesPerSecond(v)); };
  const auto money = [](double usd) {
    if (usd >= 1e9) return fmt::format("${:.2f}B", usd / 1e9);
    if (usd >= 1e6) return fmt::format("${:.1f}M", usd / 1e6);
    if (usd >= 1e3) return fmt::format("${:.1f}K", usd / 1e3);
    return fmt::format("${:.0f}", usd);
  };
  const auto hops = [](double h) { return h < 0 ? std::string("disconnected") : fmt::format("{:.0f}", h); };
  std::string out = fmt::format("eppsim {}: {}, {:.0f} chips, {} per chip per direction\n", report.eppsim_version(),
                                report.scenario(), report.chips(), bw(report.injection_bandwidth_per_chip_bps()));
  out += fmt::format("  {:<18} {:>5} {:>6} {:>12} {:>12} {:>12} {:>9} {:>10} {:>10} {:>7} {:>7}\n", "network", "diam",
                     "inter", "bisection", "all-reduce", "all-to-all", "cost", "$/inj GB/s", "$/bis GB/s", "inj/FT",
                     "bis/FT");
  const auto line = [&](const proto::TopologyReport& r) {
    out += fmt::format("  {:<18} {:>5} {:>6} {:>12} {:>12} {:>12} {:>9} {:>10.2f} {:>10.2f} {:>6.1f}% {:>6.1f}%\n",
                       r.name(), hops(r.diameter_hops()), hops(r.inter_node_diameter_hops()),
                       bw(r.bisection_bandwidth_bps()), bw(r.allreduce_bandwidth_bps()),
                       bw(r.alltoall_bandwidth_bps()), money(r.cost_usd()), r.cost_per_injection_bps() * 1e9,
                       r.cost_per_bisection_bps() * 1e9, 100.0 * r.cost_per_injection_vs_fat_tree(),
                       100.0 * r.cost_per_bisection_vs_fat_tree());
    if (r.has_failures()) {
      const auto& f = r.failures();
      out += fmt::format("    failures: {:.0f} node(s), {:.0f} link(s) down; lost {} injection, {} bisection, "
                         "{} all-reduce and {} all-to-all per chip\n",
                         f.failed_nodes(), f.failed_links(), bw(f.injection_lost_bps()), bw(f.bisection_lost_bps()),
                         bw(f.allreduce_lost_bps()), bw(f.alltoall_lost_bps()));
      for (const auto& note : f.notes()) out += fmt::format("    {}\n", note);
    }
  };
  line(report);
  for (const auto& c : report.comparisons()) line(c);
  out += "  (diam, inter: chip-to-chip and inter-node diameter in hops; all-reduce, all-to-all: per chip;\n"
         "   inj/FT, bis/FT: cost per unit of injection and bisection bandwidth against a non-blocking fat-tree)\n";
  return out;
}

void write_topology_report(const proto::TopologyReport& report, const std::filesystem::path& dir) {
  write_message(report, dir / "topology.json", ProtoFormat::Json);
}

}  // namespace eppsim
