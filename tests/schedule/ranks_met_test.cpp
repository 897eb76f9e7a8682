#include "schedule/ranks_met.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "tests/schedule/schedule_fixture.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;

// Rank 0 sends to 1; ranks 1-3 all-reduce; rank 4 meets nobody.
proto::Schedule schedule() {
  testing::HandSchedule h(5);
  const auto group = h.group({1, 2, 3});
  h.send(0, 1, 1, 64, 0);
  h.recv(1, 1, 0, 64, 0);
  for (std::uint32_t r = 1; r <= 3; ++r) h.collective(r, 1, group, 1024, proto::ALL_REDUCE);
  h.memory(4, 0, true, 64);
  return h.schedule();
}

TEST(RanksMet, PeersAndTheMembersOfItsGroups) {
  const auto s = schedule();
  EXPECT_THAT(ranks_met(s, 0), ElementsAre(1));
  EXPECT_THAT(ranks_met(s, 1), ElementsAre(0, 2, 3));
  EXPECT_THAT(ranks_met(s, 2), ElementsAre(1, 3));
  EXPECT_TRUE(ranks_met(s, 4).empty());
}

TEST(RanksMet, RanksAndThoseTheyMeet) {
  const auto s = schedule();
  const std::vector<std::uint32_t> zero = {0}, zero_and_four = {0, 4}, two = {2};
  EXPECT_THAT(ranks_and_those_they_meet(s, zero), ElementsAre(0, 1));
  EXPECT_THAT(ranks_and_those_they_meet(s, zero_and_four), ElementsAre(0, 1, 4));
  EXPECT_THAT(ranks_and_those_they_meet(s, two), ElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace eppsim
