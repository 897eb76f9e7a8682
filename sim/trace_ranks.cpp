#include "sim/trace_ranks.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/index_list.h"
#include "schedule/identical_replicas.h"
#include "schedule/program_ops.h"

namespace eppsim {

TraceRanks parse_trace_ranks(std::string_view text) {
  if (text == "all") return {TraceRanks::Mode::All, {}};
  if (text == "auto") return {TraceRanks::Mode::Auto, {}};
  if (text.empty()) throw InputError("--trace-ranks: must be all, auto or a list of ranks (0,3,7-9), got ''");
  return {TraceRanks::Mode::Listed, std::string(text)};
}

std::vector<std::uint32_t> ranks_of_interest(const proto::Schedule& schedule, const FaultPlan* faults) {
  std::vector<std::uint32_t> ranks;
  // The lowest rank of each stage, by the stage of its first compute op.
  std::map<std::uint32_t, std::uint32_t> rank_of_stage;
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    for (const OpView o : ops_of(schedule, r)) {
      if (!o.is_compute()) continue;
      rank_of_stage.try_emplace(schedule.shared_computes(static_cast<int>(o.shared_compute())).stage(), r);
      break;
    }
  }
  for (const auto& [stage, rank] : rank_of_stage) ranks.push_back(rank);
  // The first member of the first group of each size.
  std::map<int, std::uint32_t> rank_of_group_size;
  for (const auto& group : schedule.groups()) {
    if (group.ranks_size() > 0) rank_of_group_size.try_emplace(group.ranks_size(), group.ranks(0));
  }
  for (const auto& [size, rank] : rank_of_group_size) ranks.push_back(rank);
  if (faults != nullptr) {
    for (const EngineFault& fault : faults->faults()) ranks.insert(ranks.end(), fault.ranks.begin(), fault.ranks.end());
  }
  std::erase_if(ranks, [&](std::uint32_t r) { return r >= schedule.num_ranks(); });
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

TraceSelection select_trace_ranks(const TraceRanks& ranks, const proto::Schedule& schedule, const FaultPlan* faults,
                                  proto::TraceCoverage* coverage, std::uint64_t max_default_ops) {
  coverage->Clear();
  TraceSelection selection;
  switch (ranks.mode) {
    case TraceRanks::Mode::All: return selection;
    case TraceRanks::Mode::Listed:
      selection.ranks = parse_index_list(ranks.listed, schedule.num_ranks(), "--trace-ranks", "rank");
      coverage->set_reason(fmt::format("--trace-ranks {}", ranks.listed));
      return selection;
    case TraceRanks::Mode::Default: {
      const std::uint64_t ops = represented_op_count(schedule);  // every replica's
      if (ops <= max_default_ops) return selection;
      coverage->set_reason(fmt::format("auto by default: the step has {} ops, past {}; --trace-ranks all keeps every "
                                       "rank's",
                                       ops, max_default_ops));
      break;
    }
    case TraceRanks::Mode::Auto: coverage->set_reason("--trace-ranks auto"); break;
  }
  selection.ranks = ranks_of_interest(schedule, faults);
  selection.slowest_rank = true;
  return selection;
}

}  // namespace eppsim
