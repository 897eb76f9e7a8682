#include "traces/rank_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "tests/traces/trace_fixture.h"

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
  add(t, 0, 0, 0, proto::COMPUTE, 0, 50)->set_phase(proto::FORWARD);
  add(t, 0, 1, 0, proto::COMPUTE, 50, 80)->set_phase(proto::BACKWARD);  // merges with the forward
  add(t, 0, 2, 0, proto::COMPUTE, 80, 120)->set_phase(proto::RECOMPUTE);
  add(t, 0, 3, 1, proto::COLLECTIVE, 100, 130);  // hidden by the recompute until 120
  t.set_step_time_ns(100);  // shorter than the events: the timeline runs to the last end
  EXPECT_EQ(states(rank_timeline(t), 0), "0-80 compute; 80-120 recompute; 120-130 communication; ");
}

TEST(RankTimeline, CsvHasOneRowPerInterval) {
  const std::string csv = rank_timeline_csv(two_rank_trace("analytic"));
  EXPECT_EQ(csv.substr(0, csv.find('\n', csv.find('\n') + 1) + 1),
            "rank,start_s,end_s,state\n0,0.000000000,0.000000100,compute\n");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 5 + 5);
}

}  // namespace
}  // namespace eppsim
