#include "sim/engine/engine_core.h"

#include <vector>

#include <gtest/gtest.h>

#include "tests/schedule/schedule_fixture.h"

namespace eppsim {
namespace {

// Records the compute ops the core hands out; the test finishes them.
class Compute final : public GlobalExecutorHooks {
 public:
  void compute_ready(ActivityId id, OpRef, double) override { ready.push_back(id); }
  void transfer_ready(ActivityId, OpRef, OpRef, double) override {}
  void collective_ready(ActivityId, std::span<const OpRef>, double) override {}
  std::vector<ActivityId> ready;
};

TEST(EngineCore, OptionsRecordEventsAndMemoryTogether) {
  const ExecutorOptions full = simulated_core_options(7, TraceSelection{true, {3, 1}, true});
  EXPECT_EQ(full.max_blocked_ops_reported, 7u);
  EXPECT_TRUE(full.record_op_events);
  EXPECT_TRUE(full.record_memory_samples);
  EXPECT_EQ(full.traced_ranks, (std::vector<std::uint32_t>{3, 1}));
  EXPECT_TRUE(full.trace_slowest_rank);
  // Without events there are no ranks to list.
  const ExecutorOptions busy = simulated_core_options(20, TraceSelection{false, {3}, true});
  EXPECT_FALSE(busy.record_op_events);
  EXPECT_FALSE(busy.record_memory_samples);
  EXPECT_TRUE(busy.traced_ranks.empty());
  EXPECT_FALSE(busy.trace_slowest_rank);
}

TEST(EngineCore, ProgressCountsFinishedOps) {
  testing::HandSchedule s(2);
  s.compute(0, 0);
  s.compute(0, 0, {0});
  s.compute(1, 0);
  s.compute(1, 0, {0});
  Compute hooks;
  ExecutorCore core(s.schedule(), hooks, simulated_core_options(20, TraceSelection{}));
  core.start();
  ASSERT_EQ(hooks.ready.size(), 2u);
  core.finish(hooks.ready[0], 0.5);
  EXPECT_EQ(simulation_progress(core, 0.5, 2.0), "0.500 s simulated, 1 of 4 ops, 0.00 M ops/s");
  core.finish(hooks.ready[1], 1.25);
  EXPECT_EQ(simulation_progress(core, 1.25, 1e-6), "1.250 s simulated, 2 of 4 ops, 2.00 M ops/s");
}


// The estimate counts the events a rank of a replica simulated through
// another's keeps: its source's (schedule/identical_replicas.h).
TEST(EngineCore, MemoryEstimateCountsEveryReplicasEvents) {
  testing::HandSchedule s(4);  // two replicas of two ranks, stride 1: replica 0 is ranks 0 and 2
  for (const std::uint32_t r : {0u, 2u}) {
    s.compute(r, 0);
    s.compute(r, 0, {0});
  }
  s.schedule().mutable_identical_replicas()->set_copies(2);
  s.schedule().mutable_identical_replicas()->set_stride(1);
  const auto every = simulation_memory_bytes(s.schedule(), TraceSelection{}, 0);
  const auto replica_zero = simulation_memory_bytes(s.schedule(), TraceSelection{true, {0, 2}, false}, 0);
  const auto one_mirror = simulation_memory_bytes(s.schedule(), TraceSelection{true, {3}, false}, 0);
  // 4 ranks' figures and 4 ops' spans each time; 8, 4 and 2 kept events.
  const std::uint64_t base = 4 * 1024 + 4 * 16;
  EXPECT_EQ(every, base + 8 * 64);
  EXPECT_EQ(replica_zero, base + 4 * 64);
  EXPECT_EQ(one_mirror, base + 2 * 64);
}

}  // namespace
}  // namespace eppsim
