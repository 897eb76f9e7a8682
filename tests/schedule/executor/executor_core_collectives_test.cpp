// Collectives in the executor core: how members meet, and how their kinds and
// sizes are checked (before the run, or as they arrive).
#include "schedule/executor/executor_core.h"

#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedule/executor/fake_executor.h"
#include "tests/schedule/schedule_fixture.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::event;
using testing::FakeExecutor;
using testing::HandSchedule;
using testing::Handed;

TEST(ExecutorCore, CollectivesMeetByTheirIndexOnEachGroup) {
  HandSchedule h(3, {"a", "b"});
  const auto g01 = h.group({1, 0});  // members listed out of rank order
  const auto g12 = h.group({1, 2});
  h.collective(0, 0, g01, 8);
  h.collective(0, 0, g01, 16);
  h.collective(1, 0, g12, 4);  // rank 1 meets group 1-2 first, on the same stream
  h.collective(1, 0, g01, 8);
  h.collective(1, 0, g01, 16);
  h.collective(2, 0, g12, 4);
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  core.start();
  ASSERT_EQ(exec.handed.size(), 1u);
  EXPECT_EQ(exec.handed[0].what, Handed::Collective);
  EXPECT_THAT(exec.handed[0].ops, ElementsAre(OpRef{1, 0}, OpRef{2, 0}));
  core.finish(exec.handed[0].id, 1.0);
  ASSERT_EQ(exec.handed.size(), 2u);
  EXPECT_THAT(exec.handed[1].ops, ElementsAre(OpRef{1, 1}, OpRef{0, 0}));  // the group's rank order
  EXPECT_THAT(core.group_ranks(g01), ElementsAre(1u, 0u));
  core.finish(exec.handed[1].id, 2.0);
  ASSERT_EQ(exec.handed.size(), 3u);
  EXPECT_THAT(exec.handed[2].ops, ElementsAre(OpRef{1, 2}, OpRef{0, 1}));
  core.finish(exec.handed[2].id, 3.0);
  EXPECT_TRUE(core.all_done());
  const auto trace = core.trace("fake");
  EXPECT_EQ(event(trace, 0, 0).start_ns(), 1'000'000'000);  // waited for rank 1 in idle time
}

// Each rank issues its collectives on the group from one stream, so in program
// order: the core compares them before the run.
TEST(ExecutorCore, CollectivesOfDifferentKindsOrSizesMismatch) {
  HandSchedule h(2);
  const auto g = h.group({0, 1});
  h.collective(0, 1, g, 8, proto::ALL_REDUCE);
  h.collective(1, 1, g, 8, proto::ALL_GATHER);
  FakeExecutor exec;
  EXPECT_THAT([&] { ExecutorCore core(h.schedule(), exec); },
              ThrowsMessage<ScheduleMismatch>(HasSubstr("collective 0 on group 0: rank 1 op 0 is a all-gather of 8 "
                                                        "bytes, but rank 0 op 0 is a all-reduce of 8 bytes")));
}

// Shapes are compared as each rank's program is read, but a group is known to
// be checked before the run only once every rank is read: the mismatch named
// is the first in rank order among those groups, whichever group it is on.
TEST(ExecutorCore, TheFirstMismatchInRankOrderIsNamed) {
  HandSchedule h(4, {"a", "b"});
  const auto g02 = h.group({0, 2});
  const auto g01 = h.group({0, 1});
  const auto g03 = h.group({0, 3});
  h.collective(0, 0, g02, 8);
  h.collective(0, 0, g01, 8);
  h.collective(0, 0, g03, 8);
  h.collective(0, 0, g03, 8);
  h.collective(1, 0, g01, 16);  // the first mismatch, on group 1
  h.collective(2, 0, g02, 32);  // a later one, on group 0
  h.collective(3, 0, g03, 64);  // mismatched in program order, but rank 3 spreads
  h.collective(3, 1, g03, 8);   // group 2 over two streams: compared as they arrive
  FakeExecutor exec;
  EXPECT_THAT([&] { ExecutorCore core(h.schedule(), exec); },
              ThrowsMessage<ScheduleMismatch>(HasSubstr("collective 0 on group 1: rank 1 op 0 is a all-reduce of 16 "
                                                        "bytes, but rank 0 op 1 is a all-reduce of 8 bytes")));
}

// Rank 1 issues its collectives on the group from two streams, the later one
// in program order first: they meet in the order they are issued, and are
// compared as they arrive.
TEST(ExecutorCore, CollectivesOnSeveralStreamsMeetInIssueOrder) {
  const auto build = [](std::uint64_t rank1_second_bytes) {
    HandSchedule h(2, {"a", "b"});
    const auto g = h.group({0, 1});
    h.collective(0, 0, g, 8);
    h.collective(0, 0, g, 16);
    const auto waits = h.compute(1, 0);
    h.collective(1, 0, g, rank1_second_bytes, proto::ALL_REDUCE, {waits});  // issued second
    h.collective(1, 1, g, 8);                                               // issued first
    return h.schedule();
  };
  {
    const proto::Schedule schedule = build(16);
    FakeExecutor exec;
    ExecutorCore core(schedule, exec);
    core.start();
    ASSERT_EQ(exec.handed.size(), 2u);  // rank 1's compute, the first all-reduce
    EXPECT_THAT(exec.handed[1].ops, ElementsAre(OpRef{0, 0}, OpRef{1, 2}));
    core.finish(exec.handed[0].id, 1.0);
    ASSERT_EQ(exec.handed.size(), 2u);  // rank 0's second waits for its first
    core.finish(exec.handed[1].id, 2.0);
    ASSERT_EQ(exec.handed.size(), 3u);
    EXPECT_THAT(exec.handed[2].ops, ElementsAre(OpRef{0, 1}, OpRef{1, 1}));
    core.finish(exec.handed[2].id, 3.0);
    EXPECT_TRUE(core.all_done());
  }
  const proto::Schedule schedule = build(32);
  FakeExecutor exec;
  ExecutorCore core(schedule, exec);  // in program order rank 1's 32 bytes would meet rank 0's 8
  core.start();
  core.finish(exec.handed[1].id, 1.0);
  EXPECT_THAT([&] { core.finish(exec.handed[0].id, 2.0); },
              ThrowsMessage<ScheduleMismatch>(HasSubstr("collective 1 on group 0: rank 1 op 1 is a all-reduce of 32 "
                                                        "bytes, but rank 0 op 1 is a all-reduce of 16 bytes")));
}

}  // namespace
}  // namespace eppsim
