#include "traces/trace_report.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "traces/trace_events.h"

namespace eppsim {
namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

// Total length covered by the union of the intervals.
std::int64_t covered(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0;
  std::int64_t open_start = 0;
  std::int64_t open_end = -1;
  bool open = false;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (open && start <= open_end) {
      open_end = std::max(open_end, end);
      continue;
    }
    if (open) total += open_end - open_start;
    open_start = start;
    open_end = end;
    open = true;
  }
  if (open) total += open_end - open_start;
  return total;
}

struct RankIntervals {
  std::vector<Interval> compute;
  std::vector<Interval> recompute;
  std::vector<Interval> communication;
};

}  // namespace

std::string eppsim_version() {
#ifdef EPPSIM_VERSION
  return EPPSIM_VERSION;
#else
  return "unknown";
#endif
}

proto::Report build_report(const proto::Trace& trace, const proto::Schedule& schedule, const RunContext& context) {
  const auto ranks = trace.num_ranks();
  std::vector<RankIntervals> per_rank(ranks);
  for (const OpEventRef e : events_of(trace)) {
    if (e.rank() >= ranks) continue;
    auto& r = per_rank[e.rank()];
    const Interval span{e.start_ns(), e.end_ns()};
    switch (e.kind()) {
      case proto::COMPUTE:
        (e.phase() == proto::RECOMPUTE ? r.recompute : r.compute).push_back(span);
        break;
      case proto::SEND:
      case proto::RECV:
      case proto::COLLECTIVE:
        r.communication.push_back(span);
        break;
      default:
        break;
    }
  }
  std::vector<std::uint64_t> peak(ranks, 0);
  for (const auto& m : trace.memory()) {
    if (m.rank() < ranks) peak[m.rank()] = std::max(peak[m.rank()], m.bytes());
  }

  proto::Report report;
  report.set_scenario(context.scenario);
  report.set_strategy(trace.strategy());
  report.set_engine(trace.engine());
  report.set_ranks(ranks);
  report.set_seed(context.seed);
  const double step_s = static_cast<double>(trace.step_time_ns()) * 1e-9;
  report.set_step_time_s(step_s);
  const auto& summary = schedule.summary();
  report.set_tokens(static_cast<double>(summary.tokens()));
  report.set_sequences(summary.sequences());
  report.set_micro_batches(summary.micro_batches());
  report.set_pipeline_stages(summary.pipeline_stages());
  report.set_data_parallel(summary.data_parallel());
  report.set_model_flops(summary.model_flops());
  *report.mutable_plan() = summary.decisions();
  report.set_tokens_per_s(step_s > 0 ? static_cast<double>(summary.tokens()) / step_s : 0.0);
  const double capacity = step_s * ranks * context.peak_flops_per_gpu;
  report.set_mfu(capacity > 0 ? summary.model_flops() / capacity : 0.0);
  report.set_memory_limit_bytes(static_cast<double>(trace.memory_limit_bytes()));
  report.set_eppsim_version(eppsim_version());

  proto::Breakdown mean;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    auto& in = per_rank[r];
    const std::int64_t compute = covered(in.compute);
    std::vector<Interval> busy_compute = in.compute;
    busy_compute.insert(busy_compute.end(), in.recompute.begin(), in.recompute.end());
    const std::int64_t any_compute = covered(busy_compute);
    std::vector<Interval> busy = std::move(busy_compute);
    busy.insert(busy.end(), in.communication.begin(), in.communication.end());
    const std::int64_t any = covered(std::move(busy));
    auto* rank_report = report.add_per_rank();
    rank_report->set_rank(r);
    if (r < static_cast<std::uint32_t>(schedule.placement_size())) rank_report->set_node(schedule.placement(static_cast<int>(r)).node());
    auto* b = rank_report->mutable_breakdown_s();
    b->set_compute(static_cast<double>(compute) * 1e-9);
    b->set_recompute(static_cast<double>(any_compute - compute) * 1e-9);
    b->set_communication(static_cast<double>(any - any_compute) * 1e-9);
    b->set_bubble(static_cast<double>(trace.step_time_ns() - any) * 1e-9);
    rank_report->set_peak_memory_bytes(static_cast<double>(peak[r]));
    report.add_peak_memory_bytes(static_cast<double>(peak[r]));
    mean.set_compute(mean.compute() + b->compute() / ranks);
    mean.set_recompute(mean.recompute() + b->recompute() / ranks);
    mean.set_communication(mean.communication() + b->communication() / ranks);
    mean.set_bubble(mean.bubble() + b->bubble() / ranks);
  }
  *report.mutable_breakdown_s() = mean;
  return report;
}

}  // namespace eppsim
