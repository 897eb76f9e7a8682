#include "traces/plan_summary.h"

#include <functional>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace eppsim {

std::string_view solve_status_name(proto::SolveStatus status) {
  switch (status) {
    case proto::SOLVE_OPTIMAL: return "optimal";
    case proto::SOLVE_FEASIBLE_AT_LIMIT: return "feasible at limit";
    case proto::SOLVE_FELL_BACK: return "fell back";
    case proto::SOLVE_NOT_NEEDED: return "not needed";
    default: return "unspecified";
  }
}

namespace {

// Up to 16 values joined by `separator` ("8/8/6"); more as how many times each
// value occurs, largest first ("8 (x72)/6 (x27)/4 (x1)"): at 16K+ GPUs a plan has
// thousands of pipelines or SP groups.
template <typename Values>
std::string listed_values(const Values& values, std::string_view separator) {
  constexpr int kListedInFull = 16;
  std::string out;
  if (values.size() <= kListedInFull) {
    for (int i = 0; i < values.size(); ++i) out += fmt::format("{}{}", i > 0 ? separator : "", values.Get(i));
    return out;
  }
  std::map<std::uint64_t, std::uint64_t, std::greater<>> counts;
  for (const auto v : values) ++counts[v];
  for (const auto& [value, count] : counts) out += fmt::format("{}{} (x{})", out.empty() ? "" : separator, value, count);
  return out;
}

}  // namespace

std::string plan_decisions_summary(const proto::PlanDecisions& d) {
  if (d.ranks() == 0) return {};
  // Line 1: the layout.
  std::string sp;
  for (int i = 0; i < d.sp_degrees_size(); ++i) sp += fmt::format("{}{}", i > 0 ? "/" : "", d.sp_degrees(i));
  std::string layout = fmt::format("{} stage{} x {} SP", d.pipeline_stages(), d.pipeline_stages() == 1 ? "" : "s", sp);
  if (d.tensor_parallel() > 1) layout += fmt::format(" x {} TP", d.tensor_parallel());
  if (d.context_parallel() > 1) layout += fmt::format(" x {} CP", d.context_parallel());
  layout += fmt::format(" x {} DP", d.data_parallel());
  // SP degrees that vary per micro-batch (FlexSP) do not multiply out.
  std::string out = d.sp_degrees_size() > 1 ? fmt::format("{}, {} ranks", layout, d.ranks())
                                            : fmt::format("{} = {} ranks", layout, d.ranks());
  if (!d.reproduces().empty()) out += fmt::format(" ({})", d.reproduces());
  out += "\n";
  // Line 2: chunks, recomputation, solves.
  std::vector<std::string> parts;
  std::string chunking;
  if (d.slice_counts_size() > 0) chunking += fmt::format("K={}, ", listed_values(d.slice_counts(), "/"));
  if (d.pipelines() > 0) chunking += fmt::format("{} pipeline{}, ", d.pipelines(), d.pipelines() == 1 ? "" : "s");
  chunking += fmt::format("{} chunk{}", d.chunks(), d.chunks() == 1 ? "" : "s");
  if (d.micro_batch_groups_size() > 0) {
    std::string groups;
    for (int j = 0; j < d.micro_batch_groups_size() && j < 4; ++j) {
      groups += fmt::format("{}{}", j > 0 ? ", " : "", listed_values(d.micro_batch_groups(j).sp_degrees(), "+"));
    }
    if (d.micro_batch_groups_size() > 4) groups += ", ...";
    chunking += fmt::format(" (SP groups {})", groups);
  }
  parts.push_back(chunking);
  if (d.layer_chunks() > 0) {
    parts.push_back(fmt::format("checkpointing {} of {} layer-chunks", d.checkpointed_layer_chunks(), d.layer_chunks()));
  }
  if (d.solves_size() > 0) {
    std::map<int, int> counts;
    for (const auto& solve : d.solves()) ++counts[solve.status()];
    std::string statuses;
    for (const auto& [status, count] : counts) {
      statuses += fmt::format("{}{} {}", statuses.empty() ? "" : ", ", count,
                              solve_status_name(static_cast<proto::SolveStatus>(status)));
    }
    parts.push_back(fmt::format("MILPs: {}", statuses));
  }
  out += fmt::format("{}\n", fmt::join(parts, "; "));
  return out;
}

std::string plan_summary(const proto::Schedule& schedule) {
  const auto& s = schedule.summary();
  if (s.decisions().ranks() > 0) return plan_decisions_summary(s.decisions());
  return fmt::format("{} ranks ({} pipeline stages x {} data-parallel), {} micro-batches\n", schedule.num_ranks(),
                     s.pipeline_stages(), s.data_parallel(), s.micro_batches());
}

}  // namespace eppsim
