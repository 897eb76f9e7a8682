#include "sim/engine/flow_collective_plan.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "schedule/op_cost.h"

namespace eppsim {
namespace {

// Calls visit(i, k, src chip, dst chip) for member i of each ring of k members
// of `phase` and each of the phase's shifts.
template <typename Visit>
void for_each_phase_pair(const CollectivePlan& plan, const CollectivePhase& phase,
                         std::span<const VertexId> chip_of_rank, Visit&& visit) {
  for (const auto& ring : plan.steps.layouts[phase.layout].rings) {
    const auto k = static_cast<std::uint32_t>(ring.size());
    for (std::uint32_t i = 0; i < k; ++i) {
      for (std::uint32_t shift : phase.shifts) {
        visit(i, k, chip_of_rank[plan.members[ring[i]]], chip_of_rank[plan.members[ring[(i + shift) % k]]]);
      }
    }
  }
}

void merge_channels_on_one_path(CollectivePlan& plan, std::span<const VertexId> chip_of_rank, const Topology& topology) {
  const std::uint32_t channels = plan.steps.channels;
  if (channels <= 1) return;
  std::vector<LinkId> first, other;
  bool one_path = true;
  for (const CollectivePhase& phase : plan.steps.phases) {
    for_each_phase_pair(plan, phase, chip_of_rank, [&](std::uint32_t, std::uint32_t, VertexId src, VertexId dst) {
      if (!one_path || src == dst) return;
      first.clear();
      topology.route(src, dst, channel_flow_hash(src, dst, 0), &first);
      for (std::uint32_t ch = 1; ch < channels && one_path; ++ch) {
        other.clear();
        topology.route(src, dst, channel_flow_hash(src, dst, ch), &other);
        one_path = other == first;
      }
    });
    if (!one_path) return;
  }
  for (CollectivePhase& phase : plan.steps.phases) phase.bytes *= channels;
  plan.steps.channels = 1;
}

// The latency of the route `src` -> `dst` on `channel`: the path the platform
// gives that flow (simgrid_platform.h), link latencies summed in path order.
double route_latency_s(const Topology& topology, VertexId src, VertexId dst, std::uint32_t channel,
                       std::vector<LinkId>& path) {
  path.clear();
  topology.route(src, dst, channel_flow_hash(src, dst, channel), &path);
  double latency_s = 0.0;
  for (LinkId id : path) latency_s += topology.link(id).latency.value;
  return latency_s;
}

// PhasePass of every phase and channel.
std::vector<PhasePass> phase_passes(const CollectivePlan& plan, std::span<const VertexId> chip_of_rank,
                                    const Topology& topology) {
  const std::uint32_t channels = plan.steps.channels;
  std::vector<PhasePass> passes;
  std::vector<LinkId> path;
  for (const CollectivePhase& phase : plan.steps.phases) {
    for (std::uint32_t ch = 0; ch < channels; ++ch) {
      PhasePass& pass = passes.emplace_back(PhasePass{.passes = phase.rounds});
      if (phase.chain || phase.rounds < kRoundsRunAsOne) continue;
      double least_s = std::numeric_limits<double>::infinity(), most_s = 0.0;
      for_each_phase_pair(plan, phase, chip_of_rank, [&](std::uint32_t, std::uint32_t, VertexId src, VertexId dst) {
        if (src == dst) return;
        const double latency_s = route_latency_s(topology, src, dst, ch, path);
        least_s = std::min(least_s, latency_s);
        most_s = std::max(most_s, latency_s);
      });
      if (channels > 1 && least_s < most_s) continue;
      pass = PhasePass{.passes = 1, .rounds_per_pass = phase.rounds,
                       .wait_s = static_cast<double>(phase.rounds - 1) * most_s};
    }
  }
  return passes;
}

}  // namespace

CollectivePlan plan_collective(const proto::CollectiveOp& collective, std::span<const std::uint32_t> ranks,
                               std::span<const VertexId> chip_of_rank, const Topology& topology,
                               const CostModel& cost, std::vector<PlatformFlow>& flows) {
  CollectiveRoute route = cost.collective_route(to_model(collective.kind()), to_model(collective.algorithm()), ranks,
                                                Bytes(collective.size_bytes()));
  CollectivePlan plan;
  plan.members = std::move(route.members);
  plan.steps = std::move(route.steps);
  for (std::uint32_t p = 0; p < plan.members.size(); ++p) plan.position_of_rank.emplace(plan.members[p], p);
  merge_channels_on_one_path(plan, chip_of_rank, topology);
  plan.passes = phase_passes(plan, chip_of_rank, topology);
  for (const StepLayout& layout : plan.steps.layouts) {
    auto& place = plan.place.emplace_back(plan.members.size(), std::pair(0u, 0u));
    for (std::uint32_t ring = 0; ring < layout.rings.size(); ++ring) {
      for (std::uint32_t i = 0; i < layout.rings[ring].size(); ++i) place[layout.rings[ring][i]] = {ring, i};
    }
  }
  for (const CollectivePhase& phase : plan.steps.phases) {
    for_each_phase_pair(plan, phase, chip_of_rank, [&](std::uint32_t i, std::uint32_t k, VertexId src, VertexId dst) {
      if (phase.chain && i + 1 == k) return;  // a chain has no flow from its last member
      for (std::uint32_t ch = 0; ch < plan.steps.channels; ++ch) flows.push_back({src, dst, ch});
    });
  }
  return plan;
}

}  // namespace eppsim
