// The flow engine's own behaviour beyond the conformance suite
// (executor_conformance_test.cpp runs the Schedule's semantics on it): the
// placement it needs, exact uncontended transfers, links shared max-min
// fairly, channels, and the same trace twice.
#include "sim/engine/flow_engine.h"

#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sim/flow_fixture.h"
#include "tests/schedule/schedule_fixture.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using testing::FlowCluster;
using testing::HandSchedule;

using testing::kNic;
using testing::kNvlink;

TEST(FlowEngine, NeedsThePlacement) {
  const FlowCluster cluster(testing::simple_topology(2, 1, kNvlink, kNic));
  HandSchedule h(2);
  h.send(0, 1, 1, 8, 0);
  h.recv(1, 1, 0, 8, 0);
  try {
    run_flow(h.schedule(), EngineContext{*cluster.cost});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("flow engine: needs the ranks' placement"));
  }
}

TEST(FlowEngine, AnUncontendedTransferTakesLatencyPlusBytesOverBandwidth) {
  // Across nodes: 4 us end to end + 100 MB at 50 GB/s; inside a node: 1 us +
  // 100 MB at 300 GB/s; on one chip: 0.
  const FlowCluster cluster(testing::simple_topology(2, 2, kNvlink, kNic), {0, 2, 1, 1});
  HandSchedule h(4);
  h.send(0, 1, 1, 100'000'000, 0);
  h.recv(1, 1, 0, 100'000'000, 0);
  h.send(0, 1, 2, 100'000'000, 1);
  h.recv(2, 1, 0, 100'000'000, 1);
  h.send(2, 1, 3, 100'000'000, 2);
  h.recv(3, 1, 2, 100'000'000, 2);
  const auto trace = run_flow(h.schedule(), cluster.context());
  EXPECT_EQ(trace.engine(), "flow");
  ASSERT_EQ(events_of(trace).size(), 6);
  // Rank 0's sends run one after the other on its stream; rank 2's to its own chip ends when it starts.
  const std::int64_t first = 4'000 + 2'000'000, second = first + 1'000 + 333'333;
  for (const OpEventRef e : events_of(trace)) {
    if (e.rank() == 1) {
      EXPECT_EQ(e.end_ns(), first);
    } else if (e.rank() >= 2) {
      EXPECT_EQ(e.end_ns(), second);
    }
  }
}

TEST(FlowEngine, TransfersSharingANicShareItsBandwidth) {
  // Rank 0 sends 100 MB to ranks 1 and 2 at once (two streams): both cross
  // chip 0's NIC and get half of it; alone one takes 4 us + 2 ms.
  const FlowCluster cluster(testing::simple_topology(3, 1, kNvlink, kNic));
  HandSchedule h(3, {"compute", "a", "b"});
  h.send(0, 1, 1, 100'000'000, 0);
  h.send(0, 2, 2, 100'000'000, 0);
  h.recv(1, 1, 0, 100'000'000, 0);
  h.recv(2, 1, 0, 100'000'000, 0);
  const auto trace = run_flow(h.schedule(), cluster.context());
  EXPECT_EQ(trace.step_time_ns(), 4'000 + 4'000'000);
}

TEST(FlowEngine, RunsAreDeterministic) {
  const FlowCluster cluster(testing::simple_topology(2, 4, kNvlink, kNic));
  HandSchedule h(8, {"compute", "dp", "sp"});
  const auto all = h.group({0, 1, 2, 3, 4, 5, 6, 7});
  const auto half = h.group({0, 2, 4, 6});
  for (std::uint32_t r = 0; r < 8; ++r) {
    const auto f = h.compute(r, 0);
    h.collective(r, 1, all, 32 << 20, proto::ALL_REDUCE, {f});
    if (r % 2 == 0) h.collective(r, 2, half, 8 << 20, proto::ALL_TO_ALL, {f});
  }
  const std::string first = run_flow(h.schedule(), cluster.context()).SerializeAsString();
  EXPECT_EQ(run_flow(h.schedule(), cluster.context()).SerializeAsString(), first);
}

}  // namespace
}  // namespace eppsim
