#include "traces/trace_report.h"

#include <gtest/gtest.h>

#include "schedule/trace_events.h"

namespace eppsim {
namespace {

void add_op_event(proto::Trace* trace, std::uint32_t rank, proto::OpKind kind, proto::Phase phase,
                  std::int64_t start_ns, std::int64_t end_ns) {
  add_event(*trace->mutable_op_events(),
            {.rank = rank, .kind = kind, .phase = phase, .start_ns = start_ns, .end_ns = end_ns});
}

TEST(BuildReport, BreakdownCountsOverlapOnceAndAddsUpToTheStep) {
  proto::Trace trace;
  trace.set_num_ranks(2);
  trace.set_strategy("hand");
  trace.set_engine("analytic");
  trace.set_step_time_ns(10'000);
  // Rank 0: compute 0-4, communication 3-6 (1 hidden under compute, 2 exposed), recompute 6-8, idle 8-10.
  add_op_event(&trace, 0, proto::COMPUTE, proto::FORWARD, 0, 4'000);
  add_op_event(&trace, 0, proto::SEND, proto::PHASE_UNSPECIFIED, 3'000, 6'000);
  add_op_event(&trace, 0, proto::COMPUTE, proto::RECOMPUTE, 6'000, 8'000);
  // Rank 1: two overlapping collectives 0-5 and 2-7 (7 exposed), nothing else.
  add_op_event(&trace, 1, proto::COLLECTIVE, proto::PHASE_UNSPECIFIED, 0, 5'000);
  add_op_event(&trace, 1, proto::COLLECTIVE, proto::PHASE_UNSPECIFIED, 2'000, 7'000);
  auto* m = trace.add_memory();
  m->set_rank(1);
  m->set_bytes(123);

  proto::Schedule schedule;
  schedule.mutable_summary()->set_tokens(1000);
  schedule.mutable_summary()->set_model_flops(2e6);
  RunContext context;
  context.scenario = "s";
  context.peak_flops_per_gpu = 1e9;
  const auto report = build_report(trace, schedule, context);

  EXPECT_DOUBLE_EQ(report.step_time_s(), 1e-5);
  EXPECT_DOUBLE_EQ(report.tokens_per_s(), 1000 / 1e-5);
  EXPECT_DOUBLE_EQ(report.mfu(), 2e6 / (1e-5 * 2 * 1e9));
  ASSERT_EQ(report.per_rank_size(), 2);
  const auto& r0 = report.per_rank(0).breakdown_s();
  EXPECT_DOUBLE_EQ(r0.compute(), 4e-6);
  EXPECT_DOUBLE_EQ(r0.recompute(), 2e-6);
  EXPECT_DOUBLE_EQ(r0.communication(), 2e-6);
  EXPECT_DOUBLE_EQ(r0.bubble(), 2e-6);
  const auto& r1 = report.per_rank(1).breakdown_s();
  EXPECT_DOUBLE_EQ(r1.communication(), 7e-6);
  EXPECT_DOUBLE_EQ(r1.bubble(), 3e-6);
  EXPECT_DOUBLE_EQ(report.breakdown_s().bubble(), 2.5e-6);
  ASSERT_EQ(report.peak_memory_bytes_size(), 2);
  EXPECT_EQ(report.peak_memory_bytes(0), 0.0);
  EXPECT_EQ(report.peak_memory_bytes(1), 123.0);
  EXPECT_FALSE(report.eppsim_version().empty());
}

// A trace that lists each rank's busy times instead of its op events gives
// the same report, to the bit; events in any rank order give it too.
TEST(BuildReport, ATraceOfBusyTimesGivesTheReportItsEventsGive) {
  proto::Trace events;
  events.set_num_ranks(2);
  events.set_step_time_ns(10'000);
  add_op_event(&events, 1, proto::COLLECTIVE, proto::PHASE_UNSPECIFIED, 0, 5'000);
  add_op_event(&events, 0, proto::COMPUTE, proto::FORWARD, 0, 4'000);
  add_op_event(&events, 1, proto::COMPUTE, proto::RECOMPUTE, 1'000, 3'000);
  add_op_event(&events, 0, proto::SEND, proto::PHASE_UNSPECIFIED, 3'000, 6'000);
  proto::Trace busy = events;
  busy.clear_op_events();
  auto* b0 = busy.add_busy();
  b0->set_rank(0);
  b0->set_compute_ns(4'000);
  b0->set_compute_or_recompute_ns(4'000);
  b0->set_busy_ns(6'000);
  auto* b1 = busy.add_busy();
  b1->set_rank(1);
  b1->set_compute_or_recompute_ns(2'000);
  b1->set_busy_ns(5'000);
  const proto::Schedule schedule;
  const RunContext context;
  const std::string from_events = build_report(events, schedule, context).SerializeAsString();
  EXPECT_EQ(build_report(busy, schedule, context).SerializeAsString(), from_events);
  const auto report = build_report(busy, schedule, context);
  EXPECT_DOUBLE_EQ(report.per_rank(0).breakdown_s().communication(), 2e-6);
  EXPECT_DOUBLE_EQ(report.per_rank(1).breakdown_s().recompute(), 2e-6);
  EXPECT_DOUBLE_EQ(report.per_rank(1).breakdown_s().communication(), 3e-6);
}

}  // namespace
}  // namespace eppsim
