#include "sim/engine/flow_collective_plan.h"

#include "schedule/op_cost.h"

namespace eppsim {
namespace {

void merge_channels_on_one_path(CollectivePlan& plan, std::span<const VertexId> chip_of_rank, const Topology& topology) {
  const std::uint32_t channels = plan.steps.channels;
  if (channels <= 1) return;
  std::vector<LinkId> first, other;
  for (const CollectivePhase& phase : plan.steps.phases) {
    for (const auto& ring : plan.steps.layouts[phase.layout].rings) {
      const auto k = static_cast<std::uint32_t>(ring.size());
      for (std::uint32_t i = 0; i < k; ++i) {
        for (std::uint32_t shift : phase.shifts) {
          const VertexId src = chip_of_rank[plan.members[ring[i]]];
          const VertexId dst = chip_of_rank[plan.members[ring[(i + shift) % k]]];
          if (src == dst) continue;
          first.clear();
          topology.route(src, dst, channel_flow_hash(src, dst, 0), &first);
          for (std::uint32_t ch = 1; ch < channels; ++ch) {
            other.clear();
            topology.route(src, dst, channel_flow_hash(src, dst, ch), &other);
            if (other != first) return;
          }
        }
      }
    }
  }
  for (CollectivePhase& phase : plan.steps.phases) phase.bytes *= channels;
  plan.steps.channels = 1;
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
  for (const StepLayout& layout : plan.steps.layouts) {
    auto& place = plan.place.emplace_back(plan.members.size(), std::pair(0u, 0u));
    for (std::uint32_t ring = 0; ring < layout.rings.size(); ++ring) {
      for (std::uint32_t i = 0; i < layout.rings[ring].size(); ++i) place[layout.rings[ring][i]] = {ring, i};
    }
  }
  for (const CollectivePhase& phase : plan.steps.phases) {
    for (const auto& ring : plan.steps.layouts[phase.layout].rings) {
      const auto k = static_cast<std::uint32_t>(ring.size());
      for (std::uint32_t i = 0; i < k; ++i) {
        if (phase.chain && i + 1 == k) continue;
        for (std::uint32_t shift : phase.shifts) {
          const VertexId src = chip_of_rank[plan.members[ring[i]]];
          const VertexId dst = chip_of_rank[plan.members[ring[(i + shift) % k]]];
          for (std::uint32_t ch = 0; ch < plan.steps.channels; ++ch) flows.push_back({src, dst, ch});
        }
      }
    }
  }
  return plan;
}

}  // namespace eppsim
