#include "traces/rank_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "base/proto_io.h"
#include "schedule/trace_file.h"
#include "tests/schedule/sample_messages.h"
#include "tests/schedule/trace_fixture.h"

namespace eppsim {
namespace {

using testing::add;
using testing::two_rank_trace;

std::string states(const std::vector<RankInterval>& intervals, std::uint32_t rank) {
  std::string out;
  for (const auto& i : intervals) {
    if (i.rank == rank) out += fmt::format("{}-{} {}; ", i.start_ns, i.end_ns, rank_state_name(i.state));
  }
  return out;
}

// The fixture: rank 0 forward [0, 100), send [100, 120), idle, backward
// [150, 350), all-reduce [350, 410); rank 1 recv [100, 120), forward
// [120, 220) over an all-reduce [200, 260), then idle to the step's end.
TEST(RankTimeline, ComputeHidesCommunicationAndGapsAreIdle) {
  const auto timeline = rank_timeline(two_rank_trace("analytic"));
  EXPECT_EQ(states(timeline, 0), "0-100 compute; 100-120 communication; 120-150 idle; 150-350 compute; "
                                 "350-410 communication; ");
  EXPECT_EQ(states(timeline, 1), "0-100 idle; 100-120 communication; 120-220 compute; 220-260 communication; "
                                 "260-410 idle; ");
}

TEST(RankTimeline, RecomputeIsItsOwnStateAndStatesMerge) {
  proto::Trace t;
  t.set_num_ranks(1);
  add(t, {.op = 0, .kind = proto::COMPUTE, .phase = proto::FORWARD, .start_ns = 0, .end_ns = 50});
  // merges with the forward
  add(t, {.op = 1, .kind = proto::COMPUTE, .phase = proto::BACKWARD, .start_ns = 50, .end_ns = 80});
  add(t, {.op = 2, .kind = proto::COMPUTE, .phase = proto::RECOMPUTE, .start_ns = 80, .end_ns = 120});
  // hidden by the recompute until 120
  add(t, {.op = 3, .stream = 1, .kind = proto::COLLECTIVE, .start_ns = 100, .end_ns = 130});
  t.set_step_time_ns(100);  // shorter than the events: the timeline runs to the last end
  EXPECT_EQ(states(rank_timeline(t), 0), "0-80 compute; 80-120 recompute; 120-130 communication; ");
}

TEST(RankTimeline, CsvHasOneRowPerInterval) {
  const std::string csv = rank_timeline_csv(TraceInMemory(two_rank_trace("analytic")));
  EXPECT_EQ(csv.substr(0, csv.find('\n', csv.find('\n') + 1) + 1),
            "rank,start_s,end_s,state\n0,0.000000000,0.000000100,compute\n");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 5 + 5);
}

TEST(RankTimeline, ATraceFileInManyPartsWritesTheSameCsvAsInMemory) {
  // Parts of about 40 bytes: an event each.
  const auto dir = testing::fresh_dir("timeline_parts");
  const proto::Trace trace = two_rank_trace("analytic");
  write_trace_file(trace, dir / "trace.pb", 40);
  write_rank_timeline_csv(TraceFile(dir / "trace.pb", kRankTimelineBytesPerTraceByte), dir / "timeline.csv");
  EXPECT_EQ(read_file(dir / "timeline.csv"), rank_timeline_csv(TraceInMemory(trace)));
}

}  // namespace
}  // namespace eppsim
