#pragma once
// What a network gives and what it costs: chips, diameter, injection,
// bisection, all-reduce and all-to-all bandwidth, dollar cost, and cost per
// unit of bandwidth beside a non-blocking fat-tree of the same chips.
//
// Bandwidths are bytes per second per direction. Definitions (each derived in
// topology_metrics.cpp next to the code that computes it):
//   diameter_hops             max over live chip pairs of the fewest links between them
//   inter_node_diameter_hops  the same, counting only links with intra_node == false
//   injection_bandwidth       what the chips push into the inter-node network
//   bisection_bandwidth       Topology::bisection_bandwidth() (closed form)
//   allreduce_bandwidth       per-chip bus bandwidth of a ring all-reduce (nccl-tests busBw)
//   alltoall_bandwidth        per-chip rate of a uniform all-to-all
//
// Diameters are exact (BFS from every live chip, 64 at a time bit-parallel)
// while that fits MeasureOptions::exact_diameter_budget, which covers every
// graph up to a few tens of thousands of chips. Beyond, BFS runs from every
// chip of a deterministic sample of nodes (first, middle, last, seeded draws)
// and then again from the farthest chips found (double sweep): a lower bound,
// exact for node-transitive networks (tori, full fat-trees), and equal to the
// exact value on every RailX, torus, fat-tree and rail-optimized instance the
// tests compare (topology_metrics_test.cpp). `diameter_exact` says which.
#include <cstdint>
#include <string>
#include <vector>

#include "models/topology/network_cost.h"
#include "models/topology/topology.h"

namespace eppsim {

struct MeasureOptions {
  // Diameters: BFS from every live chip while ceil(chips / 64) * adjacency
  // entries stays within this budget (64 sources per bit-parallel pass);
  // otherwise from every chip of a deterministic sample of nodes.
  double exact_diameter_budget = 2.5e8;
  // Sampled diameters: nodes whose chips are BFS sources (first, middle, last,
  // then seeded draws), at least this many sources in all when nodes allow.
  std::uint32_t sample_nodes = 8;
  std::uint32_t sample_min_sources = 512;
  std::uint64_t sample_seed = 1;
  // Switch radix of the reference fat-tree (800G-class switches: 64 ports).
  std::uint32_t reference_fat_tree_radix = 64;
  // Port bandwidth of the reference fat-tree; 0: the topology's widest network
  // link (NIC, rail or torus link). A study comparing several networks passes
  // its main network's, so that all share one reference.
  double reference_port_bandwidth_Bps = 0.0;
};

// The non-blocking folded Clos the chips would need for the same injection
// bandwidth, priced by closed form.
struct ReferenceFatTree {
  std::uint32_t radix = 0;
  std::uint32_t levels = 0;
  std::uint64_t endpoint_ports = 0;  // chips * ceil(injection per chip / port bandwidth)
  double port_bandwidth_Bps = 0.0;
  std::uint64_t switch_ports = 0;    // endpoint_ports * (2L - 1)
  std::uint64_t optical_links = 0;   // endpoint_ports * L
  double cost_usd = 0.0;
  double injection_bandwidth_Bps = 0.0;  // chips * injection per chip
  double bisection_bandwidth_Bps = 0.0;  // half of that (non-blocking)
};

struct TopologyMetrics {
  std::string name;
  std::string kind;
  std::uint64_t chips = 0;        // all chips, failed or not
  std::uint64_t live_chips = 0;
  std::uint64_t nodes = 0;
  std::uint64_t vertices = 0;     // chips and switches
  std::uint64_t links = 0;        // live links
  std::uint64_t failed_links = 0;
  // -1 when some live chip cannot reach another.
  std::int64_t diameter_hops = 0;
  std::int64_t inter_node_diameter_hops = 0;
  bool diameter_exact = false;    // BFS from every live chip (else from a node sample)
  std::uint64_t diameter_sources = 0;
  bool connected = true;

  double injection_bandwidth_per_chip_Bps = 0.0;
  double injection_bandwidth_Bps = 0.0;  // over live chips
  double bisection_bandwidth_Bps = 0.0;
  double allreduce_bandwidth_Bps = 0.0;  // per chip
  double alltoall_bandwidth_Bps = 0.0;   // per chip

  NetworkInventory inventory;
  double cost_usd = 0.0;
  double cost_per_injection_Bps = 0.0;
  double cost_per_bisection_Bps = 0.0;
  double cost_per_allreduce_Bps = 0.0;   // cost / (live chips * allreduce per chip)
  double cost_per_alltoall_Bps = 0.0;    // cost / (live chips * alltoall per chip)

  ReferenceFatTree fat_tree;
  double cost_per_injection_vs_fat_tree = 0.0;
  double cost_per_bisection_vs_fat_tree = 0.0;

  double build_time_s = 0.0;    // filled by the caller, which builds the topology
  double measure_time_s = 0.0;
};

TopologyMetrics measure_topology(const Topology& topology, const NetworkPrices& prices,
                                 const MeasureOptions& options = {});

// The reference fat-tree of `chips` chips injecting `injection_per_chip_Bps`
// each through ports of `port_bandwidth_Bps`, built from `radix`-port
// switches: L = the fewest levels with 2 (k/2)^L >= endpoint ports; per
// endpoint port 2L - 1 switch ports and L optical links.
ReferenceFatTree reference_fat_tree(std::uint64_t chips, double injection_per_chip_Bps, double port_bandwidth_Bps,
                                    std::uint32_t radix, const NetworkPrices& prices);

// Diameters alone (the BFS part of measure_topology).
struct Diameters {
  std::int64_t chip_hops = 0;        // -1: disconnected
  std::int64_t inter_node_hops = 0;  // -1: disconnected
  bool exact = false;
  std::uint64_t sources = 0;
};
Diameters measure_diameters(const Topology& topology, const MeasureOptions& options = {});

// Eccentricities from the given source chips (hops to the farthest live chip;
// -1 when some live chip is unreachable): for tests and for callers that pick
// their own sources.
struct Eccentricities {
  std::vector<std::int64_t> chip_hops;
  std::vector<std::int64_t> inter_node_hops;
};
Eccentricities chip_eccentricities(const Topology& topology, const std::vector<VertexId>& sources);

// Maximum flow per direction from the chips with in_a[chip] to those with
// in_b[chip] over live links (each link carries its bandwidth each way;
// switches belong to neither side). With A and B two halves of the chips this
// is the bandwidth across the best cut separating them, an upper bound on the
// bisection and equal to it when the halves are a minimum bisection. Meant for
// checks on small and medium graphs (Boost.Graph push-relabel).
double max_flow_Bps(const Topology& topology, const std::vector<bool>& in_a, const std::vector<bool>& in_b);

// Bandwidth lost to failures: what the same network without failures offers
// minus what is left.
struct FailureImpact {
  std::uint64_t failed_nodes = 0;
  std::uint64_t failed_links = 0;      // links marked failed (those of failed nodes included)
  std::uint64_t chips_lost = 0;
  double injection_lost_Bps = 0.0;
  double bisection_lost_Bps = 0.0;
  double allreduce_lost_Bps = 0.0;     // per chip
  double alltoall_lost_Bps = 0.0;      // per chip
  std::int64_t diameter_change_hops = 0;
  std::int64_t inter_node_diameter_change_hops = 0;
  std::vector<std::string> notes;      // what the topology did about them (RailX: rings rebuilt)
};
FailureImpact failure_impact(const TopologyMetrics& healthy, const TopologyMetrics& failed, const Topology& failed_topology);

}  // namespace eppsim
