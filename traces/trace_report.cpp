#include "traces/trace_report.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "schedule/rank_busy.h"
#include "schedule/trace_events.h"
#include "traces/plan_summary.h"

namespace eppsim {
namespace {

// Per rank, how long its ops kept it busy: the trace's own figures when it
// has them (a summary, or a trace of ranks of interest, lists every rank's),
// else counted from its events, a rank at a time.
std::vector<proto::RankBusy> busy_per_rank(const proto::Trace& trace) {
  const auto ranks = trace.num_ranks();
  std::vector<proto::RankBusy> busy(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) busy[r].set_rank(r);
  for (const auto& b : trace.busy()) {
    if (b.rank() < ranks) busy[b.rank()] = b;
  }
  const TraceEvents events = events_of(trace);
  if (events.empty() || trace.busy_size() > 0) return busy;
  // Event indices by rank (a counting sort): the events of a rank need not
  // be contiguous in a trace read from a file.
  std::vector<std::uint32_t> offset(std::size_t{ranks} + 1, 0);
  for (const OpEventRef e : events) {
    if (e.rank() < ranks) ++offset[e.rank() + 1];
  }
  for (std::uint32_t r = 0; r < ranks; ++r) offset[r + 1] += offset[r];
  std::vector<std::uint32_t> order(offset.back());
  {
    std::vector<std::uint32_t> next(offset.begin(), offset.end() - 1);
    for (const OpEventRef e : events) {
      if (e.rank() < ranks) order[next[e.rank()]++] = static_cast<std::uint32_t>(e.index());
    }
  }
  RankBusyCounter counter;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    for (auto k = offset[r]; k < offset[r + 1]; ++k) {
      const OpEventRef e = events[static_cast<int>(order[k])];
      counter.add(e.kind(), e.phase(), e.start_ns(), e.end_ns());
    }
    busy[r] = counter.take(r);
  }
  return busy;
}

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
  const std::vector<proto::RankBusy> busy = busy_per_rank(trace);
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
  report.set_network(context.network);
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
  report.set_plan_summary(plan_summary(schedule));
  report.set_tokens_per_s(step_s > 0 ? static_cast<double>(summary.tokens()) / step_s : 0.0);
  const double capacity = step_s * ranks * context.peak_flops_per_gpu;
  report.set_mfu(capacity > 0 ? summary.model_flops() / capacity : 0.0);
  report.set_memory_limit_bytes(static_cast<double>(trace.memory_limit_bytes()));
  report.set_eppsim_version(eppsim_version());

  proto::Breakdown mean;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const std::int64_t compute = busy[r].compute_ns();
    const std::int64_t any_compute = busy[r].compute_or_recompute_ns();
    const std::int64_t any = busy[r].busy_ns();
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
