#include "models/comm_kind.h"

#include <gtest/gtest.h>

namespace eppsim {
namespace {

TEST(CommKind, NamesRoundTrip) {
  for (CommKind k : {CommKind::SendRecv, CommKind::AllReduce, CommKind::AllGather, CommKind::ReduceScatter,
                     CommKind::AllToAll, CommKind::Broadcast}) {
    EXPECT_EQ(parse_comm_kind(comm_kind_name(k)), k);
  }
  EXPECT_FALSE(parse_comm_kind("allreduce").has_value());
}

TEST(CommKind, BusBytesAreNcclTestsBusFactors) {
  // n = 4, S = 1000 bytes of schedule.proto's size_bytes.
  EXPECT_DOUBLE_EQ(bus_bytes(CommKind::SendRecv, 2, 1000), 1000);
  EXPECT_DOUBLE_EQ(bus_bytes(CommKind::AllReduce, 4, 1000), 1500);      // 2(n-1)/n S
  EXPECT_DOUBLE_EQ(bus_bytes(CommKind::ReduceScatter, 4, 1000), 750);   // (n-1)/n S, S the whole vector
  EXPECT_DOUBLE_EQ(bus_bytes(CommKind::AllGather, 4, 1000), 3000);      // (n-1)/n of the n S output
  EXPECT_DOUBLE_EQ(bus_bytes(CommKind::AllToAll, 4, 1000), 750);        // (n-1)/n S
  EXPECT_DOUBLE_EQ(bus_bytes(CommKind::Broadcast, 4, 1000), 1000);
}

TEST(CommKind, AlgbwBytesAreTheWholeOutputOfAnAllGather) {
  EXPECT_DOUBLE_EQ(algbw_bytes(CommKind::AllGather, 4, 1024), 4096);
  EXPECT_DOUBLE_EQ(algbw_bytes(CommKind::AllReduce, 4, 1024), 1024);
  EXPECT_DOUBLE_EQ(algbw_bytes(CommKind::SendRecv, 2, 1024), 1024);
}

}  // namespace
}  // namespace eppsim
