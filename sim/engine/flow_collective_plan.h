#pragma once
// How the flow engine (flow_engine.h) spells a collective out over its group:
// the cost model's route for it (the members in its ring order and the steps
// of the algorithm it prices, models/collective_steps.h), and the platform
// flows those steps make, so that the SimGrid platform routes exactly them
// (simgrid_platform.h).
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/collective_steps.h"
#include "models/cost_model.h"
#include "models/topology/topology.h"
#include "sim/engine/simgrid_platform.h"
#include "proto/schedule.pb.h"

namespace eppsim {

// How each member runs one phase on one channel: `passes` passes, each
// carrying `rounds_per_pass` rounds' bytes per flow, the first after sleeping
// `wait_s`. A phase of kRoundsRunAsOne rounds or more, not a chain, runs as
// one pass when its plan has one channel or every flow of the phase has the
// same route latency: wait_s is (rounds - 1) x its flows' largest latency
// (flow_engine.h says when that is exact). Otherwise every round is a pass.
inline constexpr std::uint32_t kRoundsRunAsOne = 16;
struct PhasePass {
  std::uint32_t passes = 1;
  std::uint32_t rounds_per_pass = 1;
  double wait_s = 0.0;
};

struct CollectivePlan {
  // The members (ranks) in the route's order.
  std::vector<std::uint32_t> members;
  std::unordered_map<std::uint32_t, std::uint32_t> position_of_rank;
  CollectiveSteps steps;
  // Per layout: (ring, index in ring) of each position.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> place;
  // Per phase, then channel (see PhasePass).
  std::vector<PhasePass> passes;
  const PhasePass& pass(std::size_t phase, std::uint32_t channel) const {
    return passes[phase * steps.channels + channel];
  }
};

// The plan of `collective` over `ranks` (its group, in Schedule order), whose
// chips are `chip_of_rank`; appends to `flows` every (src, dst, channel) flow
// its steps make. When every flow of the plan takes the same path on every
// channel (a ring whose channels all hash onto one path), the channels run as
// one flow carrying all of their bytes: the same time when nothing contends,
// 1/C of the communications; under contention such a collective then gets one
// max-min share of a link where its C flows would get C.
CollectivePlan plan_collective(const proto::CollectiveOp& collective, std::span<const std::uint32_t> ranks,
                               std::span<const VertexId> chip_of_rank, const Topology& topology,
                               const CostModel& cost, std::vector<PlatformFlow>& flows);

}  // namespace eppsim
