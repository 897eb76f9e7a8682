#include "sim/engine/flow_memory.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "base/log.h"
#include "base/memory_limit.h"
#include "base/peak_rss.h"
#include "schedule/program_ops.h"

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

PlatformMemory check_platform_memory(std::size_t hosts, std::size_t actors, ActorStacks stacks) {
  const PlatformMemory memory{hosts, actors, held_memory_bytes(),
                              simgrid_memory_bytes(hosts, actors, stacks, address_space_limit_bytes().has_value())};
  check_memory_estimate(fmt::format("the flow engine's SimGrid platform ({} hosts, {} actors)", hosts, actors),
                        memory.held_bytes + memory.platform_bytes,
                        "simulate fewer ranks, use --engine analytic, or raise --max-memory");
  return memory;
}

void log_platform_memory(const PlatformMemory& memory, std::size_t ops) {
  constexpr double kGiB = 1 << 30;
  logging::debug("engine.flow",
                 "{} hosts, {} actors, {} ops: held {:.3f} GiB before SimGrid (platform estimated {:.3f} GiB); after "
                 "the run this process's own pages {:.3f} GiB, its peak RSS {:.3f} GiB",
                 memory.hosts, memory.actors, ops, static_cast<double>(memory.held_bytes) / kGiB,
                 static_cast<double>(memory.platform_bytes) / kGiB, static_cast<double>(private_memory_bytes()) / kGiB,
                 peak_rss_bytes() / kGiB);
}

}  // namespace eppsim
