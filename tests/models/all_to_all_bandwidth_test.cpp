#include "models/all_to_all_bandwidth.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace eppsim {
namespace {

TEST(AllToAllTable, LooksUpExactDegrees) {
  const AllToAllBandwidth bw = AllToAllBandwidth::from_table(
      {{8, BytesPerSecond(80e9), Seconds(2e-6)}, {2, BytesPerSecond(100e9), Seconds(1e-6)}}, 8);
  EXPECT_EQ(bw.bandwidth(2), BytesPerSecond(100e9));
  EXPECT_EQ(bw.latency(8), Seconds(2e-6));
  EXPECT_DOUBLE_EQ(bw.bus_bandwidth(8).value, 80e9 * 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bw.time(8, Bytes(800'000'000)).value, 2e-6 + 0.01);
  ASSERT_EQ(bw.table().size(), 2u);
  EXPECT_EQ(bw.table()[0].degree, 2u);  // sorted
  EXPECT_TRUE(bw.has_degree(8));
  EXPECT_FALSE(bw.has_degree(4));
  EXPECT_FALSE(bw.crosses_nodes(8));
  EXPECT_TRUE(bw.crosses_nodes(16));
}

TEST(AllToAllTable, UnknownDegreesAreAnErrorNotInterpolated) {
  const AllToAllBandwidth bw = AllToAllBandwidth::from_table(
      {{2, BytesPerSecond(100e9), Seconds(0)}, {8, BytesPerSecond(80e9), Seconds(0)}});
  EXPECT_THROW(bw.bandwidth(4), InputError);
  EXPECT_THROW(bw.time(16, Bytes(1)), InputError);
  EXPECT_THROW(bw.bandwidth(1), InputError);
  EXPECT_FALSE(bw.crosses_nodes(64));  // no node size given
}

TEST(AllToAllTable, DegreeOneAndEmptyBuffersCostNothing) {
  const AllToAllBandwidth bw = AllToAllBandwidth::from_table({{2, BytesPerSecond(100e9), Seconds(1e-6)}});
  EXPECT_EQ(bw.time(1, Bytes(1'000'000)), Seconds(0.0));
  EXPECT_EQ(bw.time(2, Bytes(0)), Seconds(0.0));
  EXPECT_THROW(bw.time(0, Bytes(1)), InputError);
}

TEST(AllToAllTable, RejectsBadTables) {
  EXPECT_THROW(AllToAllBandwidth::from_table({}), InputError);
  EXPECT_THROW(AllToAllBandwidth::from_table({{1, BytesPerSecond(1e9), Seconds(0)}}), InputError);
  EXPECT_THROW(AllToAllBandwidth::from_table({{2, BytesPerSecond(0), Seconds(0)}}), InputError);
  EXPECT_THROW(AllToAllBandwidth::from_table({{2, BytesPerSecond(1e9), Seconds(-1)}}), InputError);
  EXPECT_THROW(
      AllToAllBandwidth::from_table({{2, BytesPerSecond(1e9), Seconds(0)}, {2, BytesPerSecond(2e9), Seconds(0)}}),
      InputError);
}

}  // namespace
}  // namespace eppsim
