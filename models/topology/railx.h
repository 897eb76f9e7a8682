#pragma once
// RailX (reconstruction of arXiv:2507.18889, railx.md §2): nodes of directly
// connected chips in an nx x ny grid; every row and every column has its own
// optical circuit switches (OCS) that patch each rail into a ring.
//
// Nodes: node = y * nx + x (row y holds nodes (0..nx-1, y)); chips node-major;
// the node's chips on its NodeFabric (node_fabric.h). A node has
// chips * ports_per_chip_x X ports; rail r of a dimension uses two of them,
// port 2r ("west": towards the ring predecessor) and port 2r+1 ("east":
// towards the successor); port p belongs to local chip p / ports_per_chip
// (railx_port_chip; Y ports likewise with ports_per_chip_y). rails_x defaults
// to all X ports / 2.
//
// Each rail of a line (row or column) is one Hamiltonian structure over the
// line's live nodes; a circuit joins the east port of a node to the west port
// of the next: one OpticalCircuit link between the owning chips, with `rail` set
// (X rail r: rail = r; Y rail r: rail = rails_x + r, so a node's rails are
// numbered 0 .. rails_x + rails_y - 1).
//   ring mode:       every rail is the ring 0-1-...-(n-1)-0 (a 2-node ring is two
//                    circuits between the pair).
//   all-to-all mode: the rails carry hamiltonian.h's decomposition of K_n: rails
//                    0..c-1 the c = floor((n-1)/2) cycles, for even n rail c the
//                    perfect matching, and the spare rails repeat the cycles
//                    round-robin (rail r >= floor(n/2) carries cycle
//                    (r - floor(n/2)) mod c; for n = 2, the matching). A matching
//                    rail joins each matched pair twice, so that every port is
//                    patched as on a cycle: the first vertex's east port to the
//                    second's west port, then the second's east to the first's
//                    west (a matched pair is a ring of two; with one circuit a
//                    pair, half the rail's ports stayed dark and a chip whose X
//                    and Y ports both fell dark had no network at all).
//                    Needs floor(n/2) <= rails, i.e. n <= 2*rails + 1. Each
//                    decomposition is verified when built (std::logic_error).
// Links: node fabric, then the rows' rails (row-major, rail-major within a
// row), then the columns'.
//
// Routing (all-to-all): row first (within the row, over the node fabric to the
// chip owning a rail that directly joins the two nodes, ECMP by flow hash among
// the rails joining them, one circuit), then the column likewise, then the node
// fabric to the destination chip: at most 2 inter-node hops. Ring mode: the
// shortest way around each ring (ties: towards successors), one rail per line
// picked by hash, crossing each intermediate node's fabric from the rail's west
// chip to its east chip. When the corner node (x_dst, y_src) failed, the column
// goes first; when a rule's links failed, the generic BFS router routes around.
//
// Failures: a failed node is dropped from its row and column and both get a
// fresh decomposition (or ring) over the surviving nodes (the OCS re-patches);
// failure_report() says what was rebuilt and what bandwidth was lost.
//
// Inventory: every rail link is a circuit (2 transceivers, a fibre, and an OCS
// port at each end); each row's and each column's OCS ports (2 per circuit)
// are rounded up to whole OCSes of ocs_radix ports. Counts what is built: after
// node failures, the rebuilt (smaller) rows and columns.
//
// Bisection: the live rail links crossing the middle of the grid, counted for a
// cut between columns nx/2 - 1 and nx/2 and for one between rows; the smaller,
// times the link bandwidth (for one rail per pair this is the closed form
// n * floor(n/2) * ceil(n/2) * b of K_n x K_n).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/topology/hamiltonian.h"
#include "models/topology/node_fabric.h"
#include "models/topology/topology.h"

namespace eppsim {

// The local chip that owns port `side` (0 = west, 1 = east) of rail `rail`
// when every chip has `ports_per_chip` ports in that dimension.
constexpr std::uint32_t railx_port_chip(std::uint32_t rail, std::uint32_t side, std::uint32_t ports_per_chip) {
  return (2 * rail + side) / ports_per_chip;
}

struct RailXFailureReport {
  std::vector<std::uint32_t> failed_nodes;
  std::vector<std::uint32_t> rebuilt_rows;      // y of each row rebuilt over its survivors
  std::vector<std::uint32_t> rebuilt_columns;   // x of each column rebuilt
  std::vector<std::uint32_t> row_sizes;         // live nodes of each rebuilt row
  std::vector<std::uint32_t> column_sizes;
  std::uint64_t failed_links = 0;               // rail links failed by name (live nodes)
  std::uint64_t rail_links_lost = 0;            // circuits fewer than the healthy build, plus failed ones
  BytesPerSecond rail_bandwidth_lost;           // rail_links_lost x link bandwidth (per direction)
  BytesPerSecond injection_bandwidth_lost;      // 2 ends per lost circuit x link bandwidth
  // Human-readable lines ("rebuilt row 3 over 78 nodes: ...").
  std::string summary() const;
};

class RailXTopology final : public Topology {
 public:
  explicit RailXTopology(const TopologyConfig& config);

  std::string kind() const override {
    return config_.mode == RailMode::Ring ? "railx-ring" : "railx-all-to-all";
  }
  void route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const override;
  BytesPerSecond injection_bandwidth_per_chip() const override { return live_injection_per_chip(); }
  BytesPerSecond bisection_bandwidth() const override;
  NetworkInventory inventory() const override;

  const RailXConfig& config() const { return config_; }
  const NodeFabric& node_fabric() const { return fabric_; }
  std::uint32_t rails_x() const { return rails_[0]; }
  std::uint32_t rails_y() const { return rails_[1]; }
  std::uint32_t node_at(std::uint32_t x, std::uint32_t y) const { return y * config_.nx + x; }
  std::uint32_t x_of(std::uint32_t node) const { return node % config_.nx; }
  std::uint32_t y_of(std::uint32_t node) const { return node / config_.nx; }
  // Rail links (circuits) built, and the number a healthy grid has.
  std::uint64_t rail_links() const { return rail_links_; }
  std::uint64_t healthy_rail_links() const { return healthy_rail_links_; }
  // The live rail links directly joining two distinct nodes of one row or one
  // column (empty for other pairs).
  std::vector<LinkId> links_between(std::uint32_t node_a, std::uint32_t node_b) const;
  RailXFailureReport failure_report() const;

 private:
  // The rails of every line of one size: which structure each rail carries.
  struct Plan {
    std::uint32_t n = 0;
    std::uint32_t rails = 0;
    std::uint32_t cycle_count = 0;    // distinct cycles (all-to-all), 1 (ring, n >= 2) or 0
    std::uint32_t needed = 0;         // rails carrying the decomposition itself
    std::vector<std::int32_t> rail_cycle;   // per rail: cycle index, -1 = the matching
    std::vector<std::uint32_t> rail_offset; // per rail: first link within the line's block
    std::uint32_t links = 0;                // per line
    std::vector<std::vector<std::uint32_t>> cycles;
    std::vector<std::uint32_t> position;    // [cycle * n + v]: index of v in the cycle
    std::vector<std::uint32_t> match_index; // [v]: index of v's matching edge
    std::vector<std::pair<std::uint32_t, std::uint32_t>> matching;
    PairRailTable table;                    // even n >= 4
  };
  // One row (dim 0) or column (dim 1).
  struct Line {
    const Plan* plan = nullptr;
    LinkId base = 0;
    std::vector<std::uint32_t> members;   // position -> coordinate along the line
    std::vector<std::int32_t> position;   // coordinate -> position, -1 when failed
  };

  const Plan& plan_for(std::uint32_t dim, std::uint32_t n);
  void build_line(std::uint32_t dim, std::uint32_t index, Line& line, const std::vector<bool>& failed);
  // The rails that directly join positions a and b of a line (all-to-all).
  void joining_rails(const Plan& plan, std::uint32_t a, std::uint32_t b, std::vector<std::uint32_t>* rails) const;
  LinkId rail_link(const Line& line, std::uint32_t rail, std::uint32_t a, std::uint32_t b) const;
  // Crosses one line from node `from` to node `to` (same line), appending the
  // fabric hops and circuits; `at` is the current chip. False when blocked.
  bool cross_line(std::uint32_t dim, std::uint32_t from, std::uint32_t to, std::uint64_t hash, VertexId* at,
                  std::vector<LinkId>* path) const;
  bool traverse(LinkId id, std::uint32_t node, VertexId* at, std::vector<LinkId>* path) const;
  bool route_by_rule(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const;

  RailXConfig config_;
  NodeFabric fabric_;
  std::uint32_t ports_per_chip_[2] = {1, 1};
  std::uint32_t rails_[2] = {0, 0};
  std::map<std::uint32_t, Plan> plans_[2];
  std::vector<Line> lines_[2];  // [0]: rows (index y), [1]: columns (index x)
  LinkId first_rail_link_ = 0;
  std::uint64_t rail_links_ = 0;
  std::uint64_t healthy_rail_links_ = 0;
  std::vector<std::uint32_t> failed_nodes_list_;
};

}  // namespace eppsim
