#pragma once
// A collective spelled out as rounds of point-to-point flows: the algorithms
// RoutedNetwork prices (routed_network.h), step by step, for engines that run
// every flow themselves (the flow engine, sim/engine/flow_engine.h).
//
// Members are numbered by position in the group's chips sorted by id (the ring
// order RoutedNetwork uses). A layout splits the members into rings; in a
// round of a phase, every member of every ring sends `bytes` to the member
// `shift` ahead of it in its ring (for each of the phase's shifts at once) and
// receives from the one `shift` behind; a member starts its next round when
// its sends and receives of this one are done. With C channels, every channel
// runs the whole program on its own flows (hashed onto its own equal-cost
// paths, as RoutedNetwork routes them) and `bytes` is per channel.
//
//   ring all-reduce      one ring, 2(n-1) rounds of S/(C n)
//   ring reduce-scatter  one ring, (n-1) rounds of S/(C n)
//   ring all-gather      one ring, (n-1) rounds of S/C (S = per-rank input)
//   broadcast            a chain (the ring without its last flow) carrying S/C
//                        once, cut through: each member forwards as soon as a
//                        0-byte header from its predecessor (one path latency)
//                        has arrived, so an uncontended chain takes the
//                        hops' latencies + (S/C) / rate, as RoutedNetwork prices
//                        it with the largest hop latency (equal on uniform
//                        links); a slow early hop does not hold back later ones
//   tree all-reduce      RoutedNetwork prices 2 ceil(log2 n) latencies plus two
//                        passes of S/C at the ring flows' rate; emulated as
//                        2 ceil(log2 n) - 2 rounds of 0-byte ring flows (latency
//                        only) and 2 rounds of S/C over the ring flows, which is
//                        that time when nothing contends
//   hierarchical         a ring per node, (g-1) rounds of S/g; a ring per local
//   all-reduce           index across the k nodes, 2(k-1) rounds of S/(g k); the
//                        node rings again, (g-1) rounds of S/g (one channel)
//   pairwise all-to-all  n-1 phases, phase k the shift i -> i+k of S/n per flow
//                        (every round simulated, where RoutedNetwork samples 64
//                        above 256 ranks; one channel)
//   direct all-to-all    one round with every shift 1..n-1 at once (one channel)
#include <cstdint>
#include <span>
#include <vector>

#include "models/cost_model.h"

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

// The steps of `kind` with the concrete `algorithm` (as RoutedNetwork::choose
// returns it: all-to-all Ring = pairwise, Direct = all flows at once) over
// members whose nodes, in member order, are `node_of_member`, moving `size_bytes`
// as schedule.proto defines it per kind. Throws std::invalid_argument for Auto,
// for hierarchical over nodes holding unequal member counts (or one node, or one
// member per node), and for an algorithm the kind does not have.
CollectiveSteps collective_steps(CommKind kind, CollectiveAlgorithm algorithm, std::uint32_t channels,
                                 std::span<const std::uint32_t> node_of_member, double size_bytes);

}  // namespace eppsim
