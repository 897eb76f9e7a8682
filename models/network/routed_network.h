#pragma once
// Communication time on a real topology: every transfer is routed over the
// links the placement actually uses, and each collective is priced from the
// load its own flows put on those links.
//
// A flow's rate is the smallest share it gets on its path: for each link and
// direction, bandwidth / (flows of the collective crossing it that way). Its
// time for `b` bytes is the path latency (sum of link latencies) + b / rate.
// Collectives run as NCCL does, over C parallel channels (C = the live
// inter-node links of the group's first chip, at most 16: its NICs or rails),
// each carrying 1/C of the data on flows hashed onto different equal-cost paths:
//   ring all-reduce     2(n-1) steps of S/(C n) bytes
//   ring reduce-scatter (n-1) steps of S/(C n)
//   ring all-gather     (n-1) steps of S/C  (S = per-rank input)
//   broadcast           pipelined chain: (n-1) path latencies + (S/C) / rate
//   tree all-reduce     2 ceil(log2 n) latencies + 2 (S/C) / rate of the ring's slowest flow
//   hierarchical all-reduce: ring reduce-scatter inside each node, then one ring
//     per local GPU index across the nodes (all at once, S/g each), then ring
//     all-gather inside each node
//   pairwise all-to-all n-1 rounds of the shift permutation i -> i+k, S/n bytes
//                       per flow; groups above 256 ranks price 64 evenly spread
//                       rounds and scale (documented sampling)
//   direct all-to-all   (hint DIRECT) all n(n-1) flows at once, S/n bytes each,
//                       sharing the links; groups above 256 ranks fall back to pairwise
// where a step takes the time of the slowest flow in it. Ring order follows the
// chips' ids (node-major), so neighbours in the ring are neighbours in the
// machine, as NCCL's topology-aware rings are. CollectiveAlgorithm::Auto takes the
// fastest applicable algorithm; a hint that does not apply falls back to the ring
// (pairwise for all-to-all).
//
// collective_choice() names the concrete algorithm and channel count a
// collective is priced with, so that engines running every flow
// (models/network/collective_steps.h, the flow engine) run the same algorithm.
//
// Not thread-safe: collective times are memoised per (kind, algorithm, size, ranks).
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "models/topology/topology.h"
#include "models/network_time_model.h"

namespace eppsim {

// The ECMP hash of channel `channel`'s flow from chip src to chip dst: the
// `flow` argument RoutedNetwork passes to Topology::route (point-to-point
// messages use channel 0).
std::uint64_t channel_flow_hash(VertexId src, VertexId dst, std::uint32_t channel);

class RoutedNetwork final : public NetworkTimeModel {
 public:
  // `chip_of_rank[r]`: the chip rank r runs on. The network shares the topology.
  RoutedNetwork(std::shared_ptr<const Topology> topology, std::vector<VertexId> chip_of_rank);

  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const override;
  Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                          std::span<const std::uint32_t> ranks, Bytes size) const override;

  // The algorithm collective_time prices (kind, algorithm, ranks, size) with:
  // the hint, or Auto's fastest choice, or the fallback when the hint does not
  // apply; never Auto. All-to-all: Ring (pairwise) or Direct. `channels`: the
  // parallel channels it runs on (1 for all-to-all and hierarchical).
  struct CollectiveChoice {
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
    std::uint32_t channels = 1;
  };
  CollectiveChoice collective_choice(CommKind kind, CollectiveAlgorithm algorithm,
                                     std::span<const std::uint32_t> ranks, Bytes size) const;

  // One flow of a collective step: latency of its path and the rate it gets.
  struct FlowShare {
    double latency_s = 0.0;
    double rate_Bps = 0.0;
  };

 private:
  // Rates of the flows (src chip -> dst chip) when all of them run at once.
  std::vector<FlowShare> share(std::span<const std::pair<VertexId, VertexId>> flows, std::uint32_t channels) const;
  // Time of one step in which all `flows` move `bytes` each (per channel).
  double step_time(std::span<const std::pair<VertexId, VertexId>> flows, std::uint32_t channels, double bytes) const;
  std::uint32_t channels_for(VertexId chip) const;
  std::vector<VertexId> sorted_chips(std::span<const std::uint32_t> ranks) const;
  // The choice and its time (collective_time's memo holds the time).
  std::pair<CollectiveChoice, double> choose(CommKind kind, CollectiveAlgorithm algorithm,
                                             const std::vector<VertexId>& chips, double bytes) const;
  double ring_time(CommKind kind, const std::vector<VertexId>& chips, double size_bytes) const;
  double tree_time(const std::vector<VertexId>& chips, double size_bytes) const;
  double hierarchical_time(const std::vector<VertexId>& chips, double size_bytes) const;
  double all_to_all_time(const std::vector<VertexId>& chips, double size_bytes) const;
  double direct_all_to_all_time(const std::vector<VertexId>& chips, double size_bytes) const;

  std::shared_ptr<const Topology> owned_topology_;
  const Topology& topology_;
  std::vector<VertexId> chip_of_rank_;
  mutable std::map<std::tuple<int, int, std::uint64_t, std::vector<std::uint32_t>>, double> memo_;
};

}  // namespace eppsim
