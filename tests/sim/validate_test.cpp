#include "sim/validate.h"

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedule/trace_fixture.h"
#include "base/proto_io.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using testing::add;
using testing::two_rank_trace;

using ::testing::HasSubstr;

std::string error_of(const proto::Trace& a, const proto::Trace& b) {
  try {
    validate_traces(a, b, "sim.pb", "measured.pb");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Validate, ErrorsOfStepKindsAndRanks) {
  const proto::Trace sim = two_rank_trace("analytic");
  // Measured: 25% slower everywhere, on a clock that starts at 5 ms.
  const proto::Trace measured = two_rank_trace("cpu", 1.25, 5'000'000);
  const ValidationResult r = validate_traces(sim, measured, "sim.pb", "measured.pb");
  const proto::Validation& v = r.validation;
  EXPECT_EQ(v.simulated_file(), "sim.pb");
  EXPECT_EQ(v.measured_engine(), "cpu");
  EXPECT_EQ(v.ranks(), 2u);
  EXPECT_EQ(v.ops(), 8u);
  EXPECT_DOUBLE_EQ(v.simulated_step_time_s(), 410e-9);
  EXPECT_DOUBLE_EQ(v.measured_step_time_s(), 512e-9);  // 410 * 1.25 = 512.5, truncated to whole ns
  EXPECT_DOUBLE_EQ(v.step_time_error(), (410.0 - 512.0) / 512.0);

  // Kinds in a fixed order: compute by phase, send, recv, collectives; memory ops carry no time.
  ASSERT_EQ(v.kinds_size(), 5);
  EXPECT_EQ(v.kinds(0).kind(), "compute/forward");
  EXPECT_EQ(v.kinds(0).ops(), 2u);
  EXPECT_DOUBLE_EQ(v.kinds(0).simulated_s(), 200e-9);
  EXPECT_DOUBLE_EQ(v.kinds(0).measured_s(), 250e-9);
  EXPECT_DOUBLE_EQ(v.kinds(0).error(), -0.2);
  EXPECT_EQ(v.kinds(1).kind(), "compute/backward");
  EXPECT_EQ(v.kinds(2).kind(), "send");
  EXPECT_EQ(v.kinds(3).kind(), "recv");
  EXPECT_EQ(v.kinds(4).kind(), "collective/all-reduce");
  EXPECT_DOUBLE_EQ(v.kinds(4).simulated_s(), 120e-9);
  EXPECT_DOUBLE_EQ(v.kinds(4).measured_s(), 150e-9);

  // Rank 1 is busy over the union of [100, 120), [120, 220) and [200, 260): 160 ns.
  ASSERT_EQ(v.per_rank_size(), 2);
  EXPECT_DOUBLE_EQ(v.per_rank(1).simulated_busy_s(), 160e-9);
  EXPECT_DOUBLE_EQ(v.per_rank(1).simulated_idle_s(), 250e-9);
  EXPECT_DOUBLE_EQ(v.per_rank(1).measured_busy_s(), 200e-9);
  EXPECT_DOUBLE_EQ(v.per_rank(1).busy_error(), -0.2);
  // Rank 0: [0, 120) and [150, 410): 380 ns busy, 30 ns idle.
  EXPECT_DOUBLE_EQ(v.per_rank(0).simulated_busy_s(), 380e-9);
  EXPECT_DOUBLE_EQ(v.per_rank(0).simulated_idle_s(), 30e-9);

  // The timeline: every op, both sides from their first op's start.
  ASSERT_EQ(r.timeline.size(), 8u);
  const TimelineRow& row = r.timeline[6];  // rank 1 op 2: the all-reduce
  EXPECT_EQ(row.rank, 1u);
  EXPECT_EQ(row.op, 2u);
  EXPECT_EQ(row.stream, "comm");
  EXPECT_EQ(row.kind, "collective/all-reduce");
  EXPECT_EQ(row.simulated_start_ns, 200);
  EXPECT_EQ(row.measured_start_ns, 250);
  EXPECT_EQ(row.measured_end_ns, 325);
  EXPECT_EQ(r.timeline[7].kind, "memory");
}

TEST(Validate, TheMeasuredStepsSpreadComesFromTheMeasuredTrace) {
  const proto::Trace sim = two_rank_trace("analytic");
  proto::Trace measured = two_rank_trace("cpu");
  EXPECT_FALSE(validate_traces(sim, measured, "a", "b").validation.has_measured_step_time_min_s());
  for (const std::int64_t ns : {450, 410, 380}) measured.add_measured_step_times_ns(ns);
  const proto::Validation v = validate_traces(sim, measured, "a", "b").validation;
  EXPECT_DOUBLE_EQ(v.measured_step_time_min_s(), 380e-9);
  EXPECT_DOUBLE_EQ(v.measured_step_time_max_s(), 450e-9);
  EXPECT_THAT(validation_summary(v), HasSubstr("measured     the median step; the steps took"));
}

TEST(Validate, AKindMeasuredAtZeroHasNoRelativeError) {
  proto::Trace sim = two_rank_trace("analytic");
  proto::Trace measured = two_rank_trace("cpu");
  // The send took no time on the measured side.
  measured.mutable_op_events()->set_end_ns(1, events_of(measured)[1].start_ns());
  const proto::Validation v = validate_traces(sim, measured, "a", "b").validation;
  EXPECT_EQ(v.kinds(2).kind(), "send");
  EXPECT_FALSE(v.kinds(2).has_error());
  EXPECT_TRUE(v.kinds(3).has_error());
  EXPECT_EQ(v.kinds(3).error(), 0.0);
  EXPECT_EQ(v.step_time_error(), 0.0);
}

TEST(Validate, TracesOfDifferentSchedulesAreRejected) {
  const proto::Trace sim = two_rank_trace("analytic");
  proto::Trace other = two_rank_trace("cpu");
  other.set_num_ranks(3);
  EXPECT_THAT(error_of(sim, other), HasSubstr("sim.pb and measured.pb: traces of different schedules: num_ranks 2 vs 3"));
  other = two_rank_trace("cpu");
  testing::remove_last_event(other);
  EXPECT_THAT(error_of(sim, other), HasSubstr("traces of different schedules: rank 1 op 3 is in sim.pb only"));
  other = two_rank_trace("cpu");
  other.mutable_op_events()->set_phase(2, proto::RECOMPUTE);
  EXPECT_THAT(error_of(sim, other), HasSubstr("rank 0 op 2: phase 2 vs 3"));
  other = two_rank_trace("cpu");
  other.mutable_op_events()->set_size_bytes(1, 8192);
  EXPECT_THAT(error_of(sim, other), HasSubstr("rank 0 op 1: size_bytes 4096 vs 8192"));
  other = two_rank_trace("cpu");
  add(other, fields_of(events_of(other)[0]));
  EXPECT_THAT(error_of(sim, other), HasSubstr("measured.pb: events: rank 0 op 0 appears twice"));
  other = two_rank_trace("cpu");
  other.set_step_time_ns(0);
  EXPECT_THAT(error_of(sim, other), HasSubstr("measured.pb: step_time_ns: must be > 0, got 0"));
  // A simulated step that a fault stopped has no step time.
  auto stopped = sim;
  stopped.mutable_incomplete()->set_reason("node 1 fails at 1 ms");
  EXPECT_THAT(error_of(stopped, two_rank_trace("cpu")),
              HasSubstr("sim.pb: incomplete: the step did not complete (node 1 fails at 1 ms)"));
}

TEST(Validate, WritesValidationJsonAndTimelineCsv) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "eppsim_validate_test";
  std::filesystem::remove_all(dir);
  write_message(two_rank_trace("analytic"), dir / "sim.pb");
  write_message(two_rank_trace("cpu", 2.0, 7), dir / "measured.json");
  validate_trace_files(dir / "sim.pb", dir / "measured.json", dir / "out");
  proto::Validation back;
  read_message(dir / "out" / "validation.json", &back);
  EXPECT_DOUBLE_EQ(back.step_time_error(), -0.5);
  EXPECT_EQ(back.measured_file(), (dir / "measured.json").string());
  const std::string csv = read_file(dir / "out" / "timeline.csv");
  EXPECT_THAT(csv, ::testing::StartsWith("rank,op,stream,kind,simulated_start_s,simulated_end_s,measured_start_s,"
                                         "measured_end_s\n0,0,compute,compute/forward,0.000000000,0.000000100,"
                                         "0.000000000,0.000000200\n"));
  EXPECT_THAT(csv, HasSubstr("\n1,3,compute,memory,0.000000260,0.000000260,0.000000520,0.000000520\n"));
  // Same inputs, same bytes.
  validate_trace_files(dir / "sim.pb", dir / "measured.json", dir / "again");
  // The rows of a result in memory are the same bytes.
  proto::Trace sim, measured;
  read_message(dir / "sim.pb", &sim);
  read_message(dir / "measured.json", &measured);
  write_validation(validate_traces(sim, measured, (dir / "sim.pb").string(), (dir / "measured.json").string()),
                   dir / "in-memory");
  EXPECT_EQ(read_file(dir / "in-memory" / "timeline.csv"), csv);
  EXPECT_EQ(read_file(dir / "again" / "validation.json"), read_file(dir / "out" / "validation.json"));
  EXPECT_EQ(read_file(dir / "again" / "timeline.csv"), csv);
}

}  // namespace
}  // namespace eppsim
