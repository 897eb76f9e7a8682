#pragma once
// Every collective algorithm, described once: a collective spelled out as
// rounds of point-to-point flows. The networks price these steps
// (models/network/stepped_network.h: the closed forms and the routed network),
// and the flow engine runs them flow by flow (sim/engine/flow_engine.h), so
// all three time the same algorithm.
//
// Members are numbered by position in the route's member list (the network
// orders them: ranks by node or by chip, so that ring neighbours are machine
// neighbours). A layout splits the members into rings; in a round of a
// phase, every member of every ring sends `bytes` to the member `shift` ahead
// of it in its ring (for each of the phase's shifts at once) and receives
// from the one `shift` behind; a member starts its next round when its sends
// and receives of this one are done. With C channels, every channel runs the
// whole program on its own flows (hashed onto its own equal-cost paths) and
// `bytes` is per channel. A round takes the time of its slowest flow: its
// path latency + bytes / its rate. S is schedule.proto's size_bytes.
//
//   ring all-reduce      one ring, 2(n-1) rounds of S/(C n)
//   ring reduce-scatter  one ring, (n-1) rounds of S/(C n)
//   ring all-gather      one ring, (n-1) rounds of S/C (S = per-rank input)
//   broadcast            a chain (the ring without its last flow) carrying S/C
//                        once, cut through: each member forwards as soon as a
//                        0-byte header from its predecessor has arrived; it
//                        takes (n-1) x the largest hop latency + (S/C) / the
//                        slowest hop's rate
//   tree all-reduce      2 ceil(log2 n) latencies (pipelined reduce and
//                        broadcast trees) plus two passes of S/C: 2 ceil(log2 n) - 2
//                        rounds of 0-byte ring flows (latency only), then 2
//                        rounds of S/C over the ring flows
//   hierarchical         g members on each of k nodes: a ring per node and a
//                        ring per local index across the nodes (one channel)
//     all-reduce         node rings (g-1) rounds of S/g; cross rings 2(k-1)
//                        rounds of S/(g k); node rings again (g-1) rounds of S/g
//     reduce-scatter     node rings (g-1) rounds of S/g; cross rings (k-1)
//                        rounds of S/(g k)
//     all-gather         cross rings (k-1) rounds of S; node rings (g-1)
//                        rounds of k S
//   pairwise all-to-all  (Ring) n-1 phases, phase k the shift i -> i+k of S/n
//                        per flow (one channel)
//   direct all-to-all    (Direct) n-2 rounds of 0-byte ring flows (a rank posts
//                        its n-1 sends one after another: one latency each),
//                        then one round with every shift 1..n-1 at once, S/n
//                        per flow (one channel)
#include <cstdint>
#include <span>
#include <vector>

#include "models/comm_kind.h"

namespace eppsim {

struct StepLayout {
  // Member positions of each ring, in ring order.
  std::vector<std::vector<std::uint32_t>> rings;
};

struct CollectivePhase {
  std::uint32_t layout = 0;           // index into CollectiveSteps::layouts
  std::vector<std::uint32_t> shifts;  // each member sends to the member `shift` ahead, for every shift at once
  double bytes = 0.0;                 // per flow and channel
  std::uint32_t rounds = 1;           // this phase's rounds, one after the other
  bool chain = false;                 // pipelined chain (broadcast): shift 1, no flow from the last member
};

struct CollectiveSteps {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;  // concrete (never Auto)
  std::uint32_t channels = 1;
  std::vector<StepLayout> layouts;
  std::vector<CollectivePhase> phases;
};

// How one collective runs on a network: its members (ranks) in the order the
// steps number them, and its algorithm as steps (NetworkTimeModel::collective_route).
struct CollectiveRoute {
  std::vector<std::uint32_t> members;
  CollectiveSteps steps;
};

// Whether `algorithm` (concrete) applies to `kind` over members whose nodes,
// in member order, are `node_of_member`: ring for every kind (pairwise for
// all-to-all), tree for all-reduce, direct for all-to-all, hierarchical for
// all-reduce, reduce-scatter and all-gather over two or more nodes holding
// the same count (> 1) of members.
bool algorithm_applies(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> node_of_member);

// The steps of `kind` with the concrete `algorithm` over members whose nodes
// are `node_of_member`, moving `size_bytes` as schedule.proto defines it per
// kind, on `channels` channels (all-to-all and hierarchical run on one).
// Throws std::invalid_argument for Auto and for an algorithm that does not
// apply (algorithm_applies).
CollectiveSteps collective_steps(CommKind kind, CollectiveAlgorithm algorithm, std::uint32_t channels,
                                 std::span<const std::uint32_t> node_of_member, double size_bytes);

}  // namespace eppsim
