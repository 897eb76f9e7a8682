#include "models/zero_traffic.h"

#include <gtest/gtest.h>

#include "models/errors.h"

namespace eppsim {
namespace {

ZeroTrafficOptions options(std::uint32_t stage) {
  return ZeroTrafficOptions{.stage = stage, .data_parallel = 8, .micro_batches = 4};
}

// 1e9 parameters, bf16: gradients and weights are 2e9 bytes; d = 8, 4 micro-batches.
TEST(ZeroTraffic, Stage0AllReducesGradientsOncePerStep) {
  const ZeroStepTraffic t = zero_step_traffic(1e9, options(0));
  ASSERT_EQ(t.collectives.size(), 1u);
  EXPECT_EQ(t.collectives[0].kind, ZeroCollectiveKind::AllReduce);
  EXPECT_EQ(t.collectives[0].phase, ZeroPhase::AfterBackward);
  EXPECT_FALSE(t.collectives[0].per_micro_batch);
  EXPECT_EQ(t.collectives[0].size, Bytes(2'000'000'000));
  EXPECT_EQ(t.collectives[0].sent, Bytes(3'500'000'000));  // 2 * 7/8 * 2e9
  EXPECT_EQ(t.sent_per_step(), Bytes(3'500'000'000));
  EXPECT_EQ(t.gathered_weights, Bytes(0));
}

TEST(ZeroTraffic, Stage1ReduceScattersAndGathersTheSameVolume) {
  const ZeroStepTraffic t = zero_step_traffic(1e9, options(1));
  ASSERT_EQ(t.collectives.size(), 2u);
  EXPECT_EQ(t.collectives[0].kind, ZeroCollectiveKind::ReduceScatter);
  EXPECT_EQ(t.collectives[0].size, Bytes(2'000'000'000));
  EXPECT_EQ(t.collectives[0].sent, Bytes(1'750'000'000));
  EXPECT_EQ(t.collectives[1].kind, ZeroCollectiveKind::AllGather);
  EXPECT_EQ(t.collectives[1].phase, ZeroPhase::AfterOptimizer);
  EXPECT_EQ(t.collectives[1].size, Bytes(250'000'000));  // per-rank shard
  EXPECT_EQ(t.collectives[1].sent, Bytes(1'750'000'000));
  EXPECT_EQ(t.sent_per_step(), zero_step_traffic(1e9, options(0)).sent_per_step());
  EXPECT_EQ(t.collectives_per_step(), 2u);
}

TEST(ZeroTraffic, Stage2ReduceScattersEveryMicroBatch) {
  const ZeroStepTraffic t = zero_step_traffic(1e9, options(2));
  ASSERT_EQ(t.collectives.size(), 2u);
  EXPECT_TRUE(t.collectives[0].per_micro_batch);
  EXPECT_EQ(t.sent_per_step(), Bytes(4 * 1'750'000'000ull + 1'750'000'000ull));
  EXPECT_EQ(t.collectives_per_step(), 5u);
}

TEST(ZeroTraffic, Stage3GathersBeforeForwardAndBackwardEveryMicroBatch) {
  const ZeroStepTraffic t = zero_step_traffic(1e9, options(3));
  ASSERT_EQ(t.collectives.size(), 3u);
  EXPECT_EQ(t.collectives[0].phase, ZeroPhase::BeforeForward);
  EXPECT_EQ(t.collectives[1].phase, ZeroPhase::BeforeBackward);
  EXPECT_EQ(t.collectives[2].kind, ZeroCollectiveKind::ReduceScatter);
  for (const ZeroCollective& c : t.collectives) EXPECT_TRUE(c.per_micro_batch);
  EXPECT_EQ(t.sent_per_step(), Bytes(4 * 3 * 1'750'000'000ull));
  EXPECT_EQ(t.collectives_per_step(), 12u);
  EXPECT_EQ(t.gathered_weights, Bytes(2'000'000'000));

  ZeroTrafficOptions keep = options(3);
  keep.zero3_gather = Zero3Gather::ForwardOnly;
  EXPECT_EQ(zero_step_traffic(1e9, keep).sent_per_step(), Bytes(4 * 2 * 1'750'000'000ull));
}

TEST(ZeroTraffic, HigherStagesMoveMoreWithGradientAccumulation) {
  Bytes previous = zero_step_traffic(1e9, options(1)).sent_per_step();
  for (std::uint32_t stage : {2u, 3u}) {
    const Bytes sent = zero_step_traffic(1e9, options(stage)).sent_per_step();
    EXPECT_GT(sent, previous) << stage;
    previous = sent;
  }
}

TEST(ZeroTraffic, OneRankMovesNothing) {
  for (std::uint32_t stage = 0; stage <= 3; ++stage) {
    const ZeroStepTraffic t = zero_step_traffic(1e9, ZeroTrafficOptions{.stage = stage, .data_parallel = 1});
    EXPECT_TRUE(t.collectives.empty());
    EXPECT_EQ(t.sent_per_step(), Bytes(0));
    EXPECT_EQ(t.gathered_weights, Bytes(0));
  }
}

TEST(ZeroTraffic, Fp32GradientsDoubleTheReduction) {
  ZeroTrafficOptions o = options(0);
  o.gradient_bytes_per_param = 4.0;
  EXPECT_EQ(zero_step_traffic(1e9, o).collectives[0].size, Bytes(4'000'000'000));
}

TEST(ZeroTraffic, RejectsBadInput) {
  EXPECT_THROW(zero_step_traffic(1e9, options(4)), InputError);
  EXPECT_THROW(zero_step_traffic(-1.0, options(3)), InputError);
  EXPECT_THROW(zero_step_traffic(1e9, ZeroTrafficOptions{.stage = 3, .data_parallel = 0}), InputError);
  EXPECT_THROW(zero_step_traffic(1e9, ZeroTrafficOptions{.stage = 3, .data_parallel = 2, .micro_batches = 0}),
               InputError);
  ZeroTrafficOptions o = options(3);
  o.weight_bytes_per_param = 0.0;
  EXPECT_THROW(zero_step_traffic(1e9, o), InputError);
}

}  // namespace
}  // namespace eppsim
