#include "runtime/comm_bench_data.h"

#include <gtest/gtest.h>

#include "base/errors.h"

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
  for (const auto op : {CommKind::AllReduce, CommKind::AllGather, CommKind::ReduceScatter, CommKind::AllToAll}) {
    const CommShape shape = bench_shape(op, 4 * 30, n);
    const auto in = sent(shape, n);
    const std::uint64_t c = shape.count;
    for (std::uint32_t me = 0; me < n; ++me) {
      std::vector<float> out(shape.recv_elements, 0.0f);
      for (std::uint64_t i = 0; i < out.size(); ++i) {
        switch (op) {
          case CommKind::AllReduce:
            for (std::uint32_t p = 0; p < n; ++p) out[i] += in[p][i];
            break;
          case CommKind::AllGather: out[i] = in[i / c][i % c]; break;
          case CommKind::ReduceScatter:
            for (std::uint32_t p = 0; p < n; ++p) out[i] += in[p][me * c + i];
            break;
          case CommKind::AllToAll: out[i] = in[i / c][me * c + i % c]; break;
          default: break;
        }
      }
      EXPECT_TRUE(bench_received_correctly(op, shape, me, n, out)) << comm_kind_name(op) << " at " << me;
      out[out.size() / 2] += 1.0f;
      EXPECT_FALSE(bench_received_correctly(op, shape, me, n, out)) << comm_kind_name(op) << " at " << me;
    }
  }
}

TEST(CommBenchData, SendRecvIsCheckedOnTheReceiverOnly) {
  const CommShape shape = bench_shape(CommKind::SendRecv, 1000, 2);
  EXPECT_EQ(shape.count, 250u);
  EXPECT_EQ(shape.recv_elements, 250u);
  const auto message = bench_send_buffer(shape, 0);
  EXPECT_TRUE(bench_received_correctly(CommKind::SendRecv, shape, 1, 2, message));
  EXPECT_FALSE(bench_received_correctly(CommKind::SendRecv, shape, 1, 2, bench_send_buffer(shape, 1)));
  EXPECT_TRUE(bench_received_correctly(CommKind::SendRecv, shape, 0, 2, {}));
}

// --ops takes the calibration's names (models/comm_kind.h), so that the fits of
// `eppsim calibrate` read the rows as written; every kind is benchmarked.
TEST(CommBenchData, OpsAreTheCalibrationsKinds) {
  EXPECT_EQ(parse_bench_ops("eppsim-bench comm", "all-to-all,send-recv,broadcast"),
            (std::vector<CommKind>{CommKind::AllToAll, CommKind::SendRecv, CommKind::Broadcast}));
  try {
    parse_bench_ops("eppsim-bench comm", "all-reduce,allreduce");
    ADD_FAILURE() << "allreduce accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "eppsim-bench comm: --ops: unknown op 'allreduce' (known: send-recv, all-reduce, all-gather, "
              "reduce-scatter, all-to-all, broadcast)");
  }
}

// A broadcast from position 0: the others receive its buffer; the root only sends.
TEST(CommBenchData, BroadcastIsCheckedOnTheReceivers) {
  const CommShape shape = bench_shape(CommKind::Broadcast, 400, 3);
  EXPECT_EQ(shape.count, 100u);
  const auto root = bench_send_buffer(shape, 0);
  for (std::uint32_t me : {1u, 2u}) {
    EXPECT_TRUE(bench_received_correctly(CommKind::Broadcast, shape, me, 3, root));
    EXPECT_FALSE(bench_received_correctly(CommKind::Broadcast, shape, me, 3, bench_send_buffer(shape, me)));
  }
  EXPECT_TRUE(bench_received_correctly(CommKind::Broadcast, shape, 0, 3, {}));
}

}  // namespace
}  // namespace eppsim::runtime
