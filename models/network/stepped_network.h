#pragma once
// A network whose collectives are the algorithms of models/collective_steps.h,
// priced round by round. The closed forms (closed_form_network.h) and the
// routed network (routed_network.h) are SteppedNetworks: they differ only in
// how long one round's flows take (round_timings), where a rank sits in ring
// order, and how many channels a collective runs on.
//
// Pricing. A round takes the time of its slowest flow: latency + bytes / rate
// (a flow to itself takes none). A phase of r rounds takes r rounds; a chain
// phase (broadcast) takes (k-1) x its largest latency + bytes / its smallest
// rate, k the chain's length. Steps of more than 256 phases (pairwise
// all-to-all over more than 257 ranks) are priced by 64 evenly spread phases,
// scaled to all of them. A message (p2p_time) is one round of one flow.
//
// Choice. A hint that applies (collective_steps.h's algorithm_applies) is
// taken; one that does not falls back to the ring (pairwise for all-to-all);
// direct all-to-all applies up to 256 ranks. Auto takes the fastest that
// applies, the first of ring, tree, direct, hierarchical on a tie, as a tuned
// NCCL would.
//
// Thread-safe: the choice and time of each (kind, algorithm, size, ranks) are
// memoised under a lock.
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "models/network_time_model.h"

namespace eppsim {

// How one flow of a round fares while the round's other flows run.
struct FlowTiming {
  double latency_s = 0.0;
  double rate_Bps = std::numeric_limits<double>::infinity();  // infinite: a flow to itself
};

class SteppedNetwork : public NetworkTimeModel {
 public:
  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const final;
  Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                          Bytes size) const final;
  CollectiveRoute collective_route(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                                   Bytes size) const final;

  using Flow = std::pair<std::uint32_t, std::uint32_t>;  // (src rank, dst rank)

 protected:
  // Every flow of one round, all at once, each on `channels` channels: the
  // timing of channel c's flow f at [c * flows.size() + f].
  virtual std::vector<FlowTiming> round_timings(std::span<const Flow> flows, std::uint32_t channels) const = 0;
  // Where `rank` sits in ring order: a group's members are sorted by it, then
  // by rank (so that neighbours in the ring are neighbours in the machine).
  virtual std::uint64_t ring_position(std::uint32_t rank) const = 0;
  virtual std::uint32_t node_of(std::uint32_t rank) const = 0;
  // The channels a ring or tree led by `first_rank` runs on.
  virtual std::uint32_t channels_of(std::uint32_t first_rank) const = 0;

 private:
  struct Choice {
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
    std::uint32_t channels = 1;
    double seconds = 0.0;
  };
  Choice choice(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks, Bytes size) const;
  Choice choose(CommKind kind, CollectiveAlgorithm hint, const std::vector<std::uint32_t>& members,
                const std::vector<std::uint32_t>& node_of_member, double size) const;
  double steps_seconds(const CollectiveSteps& steps, const std::vector<std::uint32_t>& members) const;
  double phase_seconds(const CollectiveSteps& steps, const CollectivePhase& phase,
                       const std::vector<std::uint32_t>& members) const;
  std::vector<std::uint32_t> ring_order(std::span<const std::uint32_t> ranks) const;
  std::vector<std::uint32_t> nodes_of(const std::vector<std::uint32_t>& members) const;

  mutable std::mutex memo_mutex_;
  mutable std::map<std::tuple<int, int, std::uint64_t, std::vector<std::uint32_t>>, Choice> memo_;
};

}  // namespace eppsim
