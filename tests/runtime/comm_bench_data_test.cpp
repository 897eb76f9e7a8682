#include "runtime/comm_bench_data.h"

#include <gtest/gtest.h>

namespace eppsim::runtime {
namespace {

// What every rank of a group of n sends, by position.
std::vector<std::vector<float>> sent(const CommShape& shape, std::uint32_t n) {
  std::vector<std::vector<float>> all;
  for (std::uint32_t p = 0; p < n; ++p) all.push_back(bench_send_buffer(shape, p));
  return all;
}

// Each collective computed by hand from the send buffers, checked by bench_received_correctly.
TEST(CommBenchData, ChecksEachCollectiveAgainstWhatWasSent) {
  constexpr std::uint32_t n = 3;
  for (const auto op : {BenchOp::AllReduce, BenchOp::AllGather, BenchOp::ReduceScatter, BenchOp::AllToAll}) {
    const CommShape shape = bench_shape(op, 4 * 30, n);
    const auto in = sent(shape, n);
    const std::uint64_t c = shape.count;
    for (std::uint32_t me = 0; me < n; ++me) {
      std::vector<float> out(shape.recv_elements, 0.0f);
      for (std::uint64_t i = 0; i < out.size(); ++i) {
        switch (op) {
          case BenchOp::AllReduce:
            for (std::uint32_t p = 0; p < n; ++p) out[i] += in[p][i];
            break;
          case BenchOp::AllGather: out[i] = in[i / c][i % c]; break;
          case BenchOp::ReduceScatter:
            for (std::uint32_t p = 0; p < n; ++p) out[i] += in[p][me * c + i];
            break;
          case BenchOp::AllToAll: out[i] = in[i / c][me * c + i % c]; break;
          default: break;
        }
      }
      EXPECT_TRUE(bench_received_correctly(op, shape, me, n, out)) << bench_op_name(op) << " at " << me;
      out[out.size() / 2] += 1.0f;
      EXPECT_FALSE(bench_received_correctly(op, shape, me, n, out)) << bench_op_name(op) << " at " << me;
    }
  }
}

TEST(CommBenchData, SendRecvIsCheckedOnTheReceiverOnly) {
  const CommShape shape = bench_shape(BenchOp::SendRecv, 1000, 2);
  EXPECT_EQ(shape.count, 250u);
  EXPECT_EQ(shape.recv_elements, 250u);
  const auto message = bench_send_buffer(shape, 0);
  EXPECT_TRUE(bench_received_correctly(BenchOp::SendRecv, shape, 1, 2, message));
  EXPECT_FALSE(bench_received_correctly(BenchOp::SendRecv, shape, 1, 2, bench_send_buffer(shape, 1)));
  EXPECT_TRUE(bench_received_correctly(BenchOp::SendRecv, shape, 0, 2, {}));
}

// Each op is a kind of the calibration's vocabulary (models/comm_kind.h),
// under its name, so that the fits of `eppsim calibrate` read the rows as written.
TEST(CommBenchData, EachOpIsAKindOfTheCalibration) {
  for (BenchOp op : {BenchOp::SendRecv, BenchOp::AllReduce, BenchOp::AllGather, BenchOp::ReduceScatter, BenchOp::AllToAll}) {
    EXPECT_EQ(parse_comm_kind(bench_op_name(op)), comm_kind_of(op));
    EXPECT_EQ(parse_bench_op(bench_op_name(op)), op);
  }
  EXPECT_EQ(bench_op_name(BenchOp::AllToAll), "all-to-all");
  EXPECT_EQ(comm_kind_of(BenchOp::AllGather), eppsim::CommKind::AllGather);
}

}  // namespace
}  // namespace eppsim::runtime
