#include "sim/engine/flow_memory.h"

#include <algorithm>
#include <vector>

#include "base/memory_limit.h"
#include "schedule/program_ops.h"
#include "sim/engine/simgrid_platform.h"

namespace eppsim {

std::size_t actors_of_streams(const proto::Schedule& schedule) {
  std::size_t streams = 0;
  std::vector<std::uint32_t> seen;
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    seen.clear();
    for (const OpView op : ops_of(schedule, r)) seen.push_back(op.stream());
    std::sort(seen.begin(), seen.end());
    streams += static_cast<std::size_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
  }
  return streams + 2;
}

std::uint64_t flow_platform_memory_bytes(const proto::Schedule& schedule, const EngineContext& context) {
  if (context.placement == nullptr) return 0;
  const auto& chip_of_rank = context.placement->chip_of_rank;
  std::vector<VertexId> chips(chip_of_rank.begin(),
                              chip_of_rank.begin() + std::min<std::size_t>(chip_of_rank.size(), schedule.num_ranks()));
  std::sort(chips.begin(), chips.end());
  const auto hosts = static_cast<std::size_t>(std::unique(chips.begin(), chips.end()) - chips.begin());
  const std::size_t actors = actors_of_streams(schedule);
  return simgrid_memory_bytes(hosts, actors, actor_stacks_for(actors, max_map_count()),
                              address_space_limit_bytes().has_value());
}

}  // namespace eppsim
