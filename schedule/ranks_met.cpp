#include "schedule/ranks_met.h"

#include <algorithm>

#include "schedule/program_ops.h"

namespace eppsim {

std::vector<std::uint32_t> ranks_met(const proto::Schedule& schedule, std::uint32_t rank) {
  std::vector<std::uint32_t> met;
  std::vector<bool> groups(static_cast<std::size_t>(schedule.groups_size()), false);
  for (const OpView op : ops_of(schedule, rank)) {
    if (op.is_send() || op.is_recv()) met.push_back(op.peer());
    if (op.is_collective() && op.group() < groups.size() && !groups[op.group()]) {
      groups[op.group()] = true;
      const auto& members = schedule.groups(static_cast<int>(op.group())).ranks();
      met.insert(met.end(), members.begin(), members.end());
    }
  }
  std::sort(met.begin(), met.end());
  met.erase(std::unique(met.begin(), met.end()), met.end());
  std::erase(met, rank);
  return met;
}

std::vector<std::uint32_t> ranks_and_those_they_meet(const proto::Schedule& schedule, std::span<const std::uint32_t> ranks) {
  std::vector<std::uint32_t> all(ranks.begin(), ranks.end());
  for (const std::uint32_t r : ranks) {
    const auto met = ranks_met(schedule, r);
    all.insert(all.end(), met.begin(), met.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

}  // namespace eppsim
