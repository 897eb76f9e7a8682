#include "schedule/executor/executor_core.h"

#include <string>
#include <type_traits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedule/executor/fake_executor.h"
#include "tests/schedule/schedule_fixture.h"
#include "schedule/rank_busy.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using ::testing::UnorderedElementsAre;
using testing::event;
using testing::FakeExecutor;
using testing::FakeLocalExecutor;
using testing::HandSchedule;
using testing::Handed;

// Who matches communication follows from the kind of hooks: an executor that
// is neither kind cannot be given a core.
static_assert(std::is_constructible_v<ExecutorCore, const proto::Schedule&, GlobalExecutorHooks&>);
static_assert(std::is_constructible_v<ExecutorCore, const proto::Schedule&, LocalExecutorHooks&>);
static_assert(!std::is_constructible_v<ExecutorCore, const proto::Schedule&, ExecutorHooks&>);

TEST(ExecutorCore, StreamOrderAndDependencies) {
  HandSchedule h(1);
  h.compute(0, 0);       // op 0
  h.compute(0, 1);       // op 1, another stream: ready at once
  h.compute(0, 0, {1});  // op 2: after op 0 (stream) and op 1 (dependency)
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  core.start(0.0);
  ASSERT_EQ(exec.handed.size(), 2u);
  EXPECT_EQ(exec.handed[0].ops[0], (OpRef{0, 0}));
  EXPECT_EQ(exec.handed[1].ops[0], (OpRef{0, 1}));
  core.finish(exec.handed[1].id, 1.0);
  EXPECT_EQ(exec.handed.size(), 2u);  // op 2 still waits for op 0
  core.finish(exec.handed[0].id, 2.0);
  ASSERT_EQ(exec.handed.size(), 3u);
  EXPECT_EQ(exec.handed[2].ops[0], (OpRef{0, 2}));
  EXPECT_EQ(exec.handed[2].now, 2.0);
  core.finish(exec.handed[2].id, 3.0);
  EXPECT_TRUE(core.all_done());
  EXPECT_EQ(core.ops_done(), 3u);
  const auto trace = core.trace("fake");
  EXPECT_EQ(trace.engine(), "fake");
  EXPECT_EQ(trace.step_time_ns(), 3'000'000'000);
  EXPECT_EQ(event(trace, 0, 2).start_ns(), 2'000'000'000);
  EXPECT_EQ(event(trace, 0, 1).end_ns(), 1'000'000'000);
}

TEST(ExecutorCore, AnOpMayWaitForMoreOpsThanItsStateCounts) {
  HandSchedule h(1, {"a", "b"});
  constexpr std::uint32_t kMany = 70'000;  // past the 65,535 predecessors an op's state counts itself
  std::vector<std::uint32_t> all(kMany);
  for (auto& op : all) op = h.compute(0, 0);
  add_op(h.program(0), OpFields::compute(1, 0), all);  // the work h.compute listed
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  core.start();
  for (std::uint32_t i = 0; i < kMany; ++i) core.finish(exec.handed.at(i).id, 1.0 + i);  // in stream order
  EXPECT_EQ(exec.handed.back().ops[0], (OpRef{0, kMany}));
  EXPECT_EQ(exec.handed.back().now, kMany);  // when the last of them finished
}

TEST(ExecutorCore, ActivitiesMayFinishOutOfOrder) {
  HandSchedule h(2);
  for (std::uint32_t r = 0; r < 2; ++r) {
    h.compute(r, 0);
    h.compute(r, 0);
  }
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  core.start();
  ASSERT_EQ(exec.handed.size(), 2u);
  core.finish(exec.handed[1].id, 1.0);  // rank 1 first
  core.finish(exec.handed[0].id, 2.0);
  ASSERT_EQ(exec.handed.size(), 4u);
  EXPECT_EQ(exec.handed[2].ops[0], (OpRef{1, 1}));
  EXPECT_EQ(exec.handed[3].ops[0], (OpRef{0, 1}));
  core.finish(exec.handed[3].id, 2.5);
  core.finish(exec.handed[2].id, 3.0);
  EXPECT_TRUE(core.all_done());
}

TEST(ExecutorCore, HooksMayFinishReentrantly) {
  HandSchedule h(1);
  h.compute(0, 0);
  h.memory(0, 0, true, 100);
  h.compute(0, 0);
  h.memory(0, 0, false, 100);
  h.compute(0, 0);
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  double clock = 0.0;
  exec.on_ready = [&](const Handed& handed) { core.finish(handed.id, clock += 1.0); };
  core.start(0.0);
  EXPECT_TRUE(core.all_done());
  ASSERT_EQ(exec.handed.size(), 3u);
  EXPECT_EQ(exec.handed[1].now, 1.0);  // ready when its predecessor finished, not when the first finish returned
  EXPECT_EQ(exec.handed[2].now, 2.0);
  const auto trace = core.trace("fake");
  EXPECT_EQ(event(trace, 0, 1).start_ns(), 1'000'000'000);
  EXPECT_EQ(event(trace, 0, 3).start_ns(), 2'000'000'000);
}

TEST(ExecutorCore, FinishingTwiceOrAnUnknownActivityIsALogicError) {
  HandSchedule h(1);
  h.compute(0, 0);
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  core.start();
  core.finish(exec.handed[0].id, 1.0);
  EXPECT_THROW(core.finish(exec.handed[0].id, 2.0), std::logic_error);
  EXPECT_THROW(core.finish(99, 2.0), std::logic_error);
  EXPECT_THROW(core.finish((ActivityId{1} << 31) | 7, 2.0), std::logic_error);  // no op 7
}

TEST(ExecutorCore, KeepsTheWordsTheExecutorGivesEachOp) {
  HandSchedule h(2);
  h.compute(0, 0);
  h.compute(0, 0);
  h.compute(1, 0);
  FakeExecutor exec;
  ExecutorOptions options;
  options.executor_words = [&](std::uint32_t rank, std::span<std::uint32_t> words) {
    ASSERT_EQ(words.size(), rank == 0 ? 2u : 1u);
    EXPECT_THAT(words, Each(0u));
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = 10 * rank + static_cast<std::uint32_t>(i) + 1;
  };
  ExecutorCore core(h.schedule(), exec, options);
  core.start();  // the words do not change how the ops run
  for (std::size_t i = 0; i < exec.handed.size(); ++i) core.finish(exec.handed[i].id, 1.0 + static_cast<double>(i));
  EXPECT_TRUE(core.all_done());
  EXPECT_THAT((std::vector{core.executor_word({0, 0}), core.executor_word({0, 1}), core.executor_word({1, 0})}),
              ElementsAre(1u, 2u, 11u));
  EXPECT_EQ(ExecutorCore(h.schedule(), exec).executor_word(OpRef{0, 1}), 0u);
}

// A compute op's activity has no row of its own: its id names the op, which the core lists and
// fetches on a hint (rank 1's op 0 follows rank 0's two ops); hints about unknown ids are ignored.
TEST(ExecutorCore, ComputeActivitiesNameTheirOp) {
  HandSchedule h(2);
  h.compute(0, 0);
  h.compute(1, 0);
  h.send(1, 0, 0, 8, 1);
  h.recv(0, 0, 1, 8, 1);
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  core.start();
  ASSERT_EQ(exec.handed.size(), 2u);
  EXPECT_NE(exec.handed[0].id, exec.handed[1].id);
  EXPECT_THAT(core.activity_ops(exec.handed[1].id), ElementsAre(OpRef{1, 0}));
  for (const ActivityId id : {exec.handed[0].id, ActivityId{0}, ActivityId{99}, ~ActivityId{0}}) core.prefetch(id);
  EXPECT_TRUE(core.activity_ops(~ActivityId{0}).empty());
  core.finish(exec.handed[1].id, 1.0);
  core.finish(exec.handed[0].id, 2.0);
  ASSERT_EQ(exec.handed.size(), 3u);
  EXPECT_THAT(core.activity_ops(exec.handed[2].id), ElementsAre(OpRef{1, 1}, OpRef{0, 1}));
  core.finish(exec.handed[2].id, 3.0);
  EXPECT_TRUE(core.all_done());
}

TEST(ExecutorCore, GlobalMatchingPairsSendsAndReceivesInPostingOrderPerTag) {
  HandSchedule h(2, {"a", "b"});
  h.send(0, 0, 1, 10, 7);  // two messages with tag 7, then one with tag 8
  h.send(0, 0, 1, 20, 7);
  h.send(0, 1, 1, 30, 8);
  h.recv(1, 1, 0, 30, 8);  // tag 8 first, on its own stream
  h.recv(1, 0, 0, 10, 7);
  h.recv(1, 0, 0, 20, 7);
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  core.start();
  ASSERT_EQ(exec.handed.size(), 2u);  // rank 1's tag-8 receive met rank 0's tag-8 send, then tag 7's first pair
  EXPECT_EQ(exec.handed[0].what, Handed::Transfer);
  EXPECT_THAT(exec.handed[0].ops, ElementsAre(OpRef{0, 2}, OpRef{1, 0}));
  EXPECT_THAT(exec.handed[1].ops, ElementsAre(OpRef{0, 0}, OpRef{1, 1}));
  EXPECT_THAT(core.activity_ops(exec.handed[1].id), ElementsAre(OpRef{0, 0}, OpRef{1, 1}));
  core.finish(exec.handed[1].id, 1.0);
  ASSERT_EQ(exec.handed.size(), 3u);
  EXPECT_THAT(exec.handed[2].ops, ElementsAre(OpRef{0, 1}, OpRef{1, 2}));
  core.finish(exec.handed[2].id, 2.0);
  core.finish(exec.handed[0].id, 3.0);
  EXPECT_TRUE(core.all_done());
}

TEST(ExecutorCore, GlobalMatchingFindsChannelsWhicheverSideComesFirstInRankOrder) {
  HandSchedule h(3, {"a", "b"});
  h.recv(0, 0, 2, 10, 5);  // its send is on a later rank
  h.recv(0, 0, 1, 20, 5);  // the same tag from another rank: another channel
  h.send(0, 0, 0, 30, 5);  // to itself, the receive on another stream
  h.recv(0, 1, 0, 30, 5);
  h.send(1, 0, 0, 20, 5);
  h.send(1, 0, 2, 40, 6);  // its receive is on a later rank
  h.send(2, 0, 0, 10, 5);
  h.recv(2, 0, 1, 40, 6);
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  exec.on_ready = [&](const Handed& handed) { core.finish(handed.id, 1.0); };
  core.start(0.0);
  EXPECT_TRUE(core.all_done());
  std::vector<std::vector<OpRef>> transfers;
  for (const Handed& handed : exec.handed) {
    if (handed.what == Handed::Transfer) transfers.push_back(handed.ops);
  }
  EXPECT_THAT(transfers, UnorderedElementsAre(ElementsAre(OpRef{2, 0}, OpRef{0, 0}), ElementsAre(OpRef{1, 0}, OpRef{0, 1}),
                                              ElementsAre(OpRef{0, 2}, OpRef{0, 3}), ElementsAre(OpRef{1, 1}, OpRef{2, 1})));
}

TEST(ExecutorCore, GlobalMatchingRejectsDifferentSizes) {
  FakeExecutor exec;
  HandSchedule h(2, {"a", "b"});
  h.send(0, 0, 1, 64, 1);
  h.recv(1, 0, 0, 32, 1);  // a side per stream: paired in program order, and rejected, before the run
  EXPECT_THAT([&] { ExecutorCore core(h.schedule(), exec); },
              ThrowsMessage<ScheduleMismatch>(HasSubstr("rank 0 op 0 sends 64 bytes (tag 1) to rank 1, whose op 0 receives 32 bytes")));
}

TEST(ExecutorCore, MemoryIsAccountedPerRank) {
  HandSchedule h(2);
  h.memory(0, 0, true, 10);
  h.memory(0, 0, true, 5);
  h.memory(0, 0, false, 10);
  h.memory(1, 0, true, 3);
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  core.start(0.5);
  EXPECT_TRUE(core.all_done());
  EXPECT_THAT(core.memory_in_use(), ElementsAre(5u, 3u));
  EXPECT_THAT(core.memory_peak(), ElementsAre(15u, 3u));
  const auto trace = core.trace("fake");
  ASSERT_EQ(trace.memory_size(), 4);
  EXPECT_EQ(trace.memory(1).bytes(), 15u);
  EXPECT_EQ(trace.memory(3).rank(), 1u);
  EXPECT_EQ(trace.memory(3).time_ns(), 500'000'000);
  EXPECT_EQ(event(trace, 0, 2).start_ns(), 500'000'000);
  EXPECT_EQ(event(trace, 0, 2).end_ns(), 500'000'000);
}

TEST(ExecutorCore, WithoutMemorySamplesTheTraceHoldsEachRanksPeak) {
  HandSchedule h(3);
  h.memory(0, 0, true, 10);
  h.compute(0, 0);
  h.memory(0, 0, true, 5);  // the peak, 15, first reached at 1 s
  h.memory(0, 0, false, 10);
  h.compute(0, 0);
  h.memory(0, 0, true, 10);  // 15 again at 2 s
  h.memory(1, 0, true, 0);   // never holds bytes: no sample
  h.memory(2, 0, true, 3);
  FakeExecutor exec;
  ExecutorOptions options;
  options.record_memory_samples = false;
  ExecutorCore core(h.schedule(), exec, options);
  double clock = 0.0;
  exec.on_ready = [&](const Handed& handed) { core.finish(handed.id, clock += 1.0); };
  core.start(0.0);
  ASSERT_TRUE(core.all_done());
  EXPECT_THAT(core.memory_peak(), ElementsAre(15u, 0u, 3u));
  const auto trace = core.trace("fake");
  ASSERT_EQ(trace.memory_size(), 2);
  EXPECT_EQ(trace.memory(0).rank(), 0u);
  EXPECT_EQ(trace.memory(0).bytes(), 15u);
  EXPECT_EQ(trace.memory(0).time_ns(), 1'000'000'000);
  EXPECT_EQ(trace.memory(1).rank(), 2u);
  EXPECT_EQ(trace.memory(1).bytes(), 3u);
  EXPECT_EQ(trace.memory(1).time_ns(), 0);
}

// Without op events the trace lists each rank's busy times, as the events
// would give them (schedule/rank_busy.h), and the same step and memory samples.
// Rank r's busy figures counted from a trace's op events.
proto::RankBusy busy_of_events(const proto::Trace& trace, std::uint32_t r) {
  RankBusyCounter counter;
  for (const OpEventRef e : events_of(trace)) {
    if (e.rank() == r) counter.add(e.kind(), e.phase(), e.start_ns(), e.end_ns());
  }
  return counter.take(r);
}

// The trace of `schedule` run with `options`, each activity ending 1 s after the previous one.
proto::Trace trace_of_one_a_second(const proto::Schedule& schedule, const ExecutorOptions& options) {
  FakeExecutor exec;
  ExecutorCore core(schedule, exec, options);
  double clock = 0.0;
  exec.on_ready = [&](const Handed& handed) { core.finish(handed.id, clock += 1.0); };
  core.start(0.0);
  EXPECT_TRUE(core.all_done());
  return core.trace("fake");
}

TEST(ExecutorCore, WithoutOpEventsTheTraceListsBusyTimes) {
  HandSchedule h(2);
  const auto g = h.group({0, 1});
  for (std::uint32_t r = 0; r < 2; ++r) {
    const auto a = h.memory(r, 0, true, 10);
    const auto c = h.compute(r, 0, {a});
    h.collective(r, 1, g, 8, proto::ALL_REDUCE, {c});
  }
  const auto run = [&](bool events) {
    ExecutorOptions options;
    options.record_op_events = events;
    return trace_of_one_a_second(h.schedule(), options);
  };
  const proto::Trace full = run(true), summary = run(false);
  EXPECT_EQ(events_of(summary).size(), 0);
  EXPECT_EQ(full.busy_size(), 0);
  ASSERT_EQ(summary.busy_size(), 2);
  EXPECT_EQ(summary.step_time_ns(), full.step_time_ns());
  EXPECT_EQ(summary.memory_size(), full.memory_size());
  for (std::uint32_t r = 0; r < 2; ++r) {
    const proto::RankBusy expected = busy_of_events(full, r);
    EXPECT_EQ(summary.busy(static_cast<int>(r)).SerializeAsString(), expected.SerializeAsString()) << r;
    EXPECT_GT(expected.busy_ns(), expected.compute_ns()) << r;  // the all-reduce adds to the compute
  }
}

// A trace of some ranks lists their events and memory samples, the slowest
// rank's with them, every other rank's memory peak, and every rank's busy
// figures as the whole trace counts them.
TEST(ExecutorCore, ATraceOfSomeRanksListsTheirEventsAndEveryRanksBusyFigures) {
  HandSchedule h(3);
  const auto g = h.group({0, 1, 2});
  for (std::uint32_t r = 0; r < 3; ++r) {
    const auto a = h.memory(r, 0, true, 10);
    const auto b = h.memory(r, 0, true, 5, {a});
    const auto c = h.compute(r, 0, {b});
    const auto all = h.collective(r, 1, g, 8, proto::ALL_REDUCE, {c});
    if (r == 2) h.compute(r, 0, {all});  // rank 2 ends last
  }
  const auto run = [&](std::vector<std::uint32_t> ranks, bool slowest) {
    ExecutorOptions options;
    options.traced_ranks = std::move(ranks);
    options.trace_slowest_rank = slowest;
    return trace_of_one_a_second(h.schedule(), options);
  };
  const proto::Trace full = run({}, false), some = run({0}, true);
  EXPECT_EQ(full.traced_ranks_size(), 0);
  EXPECT_EQ(std::vector<std::uint32_t>(some.traced_ranks().begin(), some.traced_ranks().end()),
            (std::vector<std::uint32_t>{0, 2}));
  int listed_events = 0;
  for (const OpEventRef e : events_of(full)) listed_events += e.rank() != 1;
  EXPECT_EQ(events_of(some).size(), listed_events);
  for (const OpEventRef e : events_of(some)) EXPECT_NE(e.rank(), 1u);
  EXPECT_EQ(some.step_time_ns(), full.step_time_ns());
  ASSERT_EQ(some.busy_size(), 3);
  for (std::uint32_t r = 0; r < 3; ++r) {
    EXPECT_EQ(some.busy(static_cast<int>(r)).SerializeAsString(), busy_of_events(full, r).SerializeAsString()) << r;
  }
  // Ranks 0 and 2: both samples; rank 1: its peak alone.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> samples;
  for (const auto& m : some.memory()) samples.emplace_back(m.rank(), m.bytes());
  EXPECT_EQ(samples, (std::vector<std::pair<std::uint32_t, std::uint64_t>>{{0, 10}, {0, 15}, {1, 15}, {2, 10}, {2, 15}}));
  // A rank past the schedule's is ignored.
  EXPECT_EQ(run({1, 7}, false).traced_ranks_size(), 1);
}

// Compute ops that run back to back go to the executor as one chain; the
// busy figures and the step come out as they do op by op.
TEST(ExecutorCore, ComputeChainsRunBackToBackAndCountAsTheirOps) {
  HandSchedule h(2);
  proto::ComputeOp recompute = HandSchedule::forward_layer();
  recompute.set_phase(proto::RECOMPUTE);
  const auto g = h.group({0, 1});
  for (std::uint32_t r = 0; r < 2; ++r) {
    h.compute(r, 0);                          // 0: chained to 1
    h.compute(r, 0);                          // 1: not to 2, a recompute
    h.compute(r, 0, {}, recompute);           // 2: not to 3, which also waits for 4
    const auto m = h.memory(r, 1, true, 8);   // 3
    const auto c = h.compute(r, 0, {m});      // 4: not to 5, not its only successor
    h.compute(r, 0);                          // 5
    h.collective(r, 1, g, 8, proto::ALL_REDUCE, {c});  // 6
  }
  // Each compute op takes 1 s; a collective 0.5 s.
  struct Timed : FakeExecutor, ComputeChainHooks {
    void compute_chain_ready(ActivityId id, std::span<const OpRef> ops, double now) override {
      chains.emplace_back(ops.begin(), ops.end());
      chain_ids.push_back(id);
      ends.emplace_back(id, now + static_cast<double>(ops.size()));
    }
    std::vector<std::vector<OpRef>> chains;
    std::vector<ActivityId> chain_ids;
    std::vector<std::pair<ActivityId, double>> ends;
  };
  const auto run = [&](bool events, bool chains, std::vector<std::vector<OpRef>>* chained) {
    Timed exec;
    ExecutorOptions options;
    options.record_op_events = events;
    options.compute_chains = chains ? &exec : nullptr;
    ExecutorCore core(h.schedule(), exec, options);
    exec.on_ready = [&](const Handed& handed) {
      exec.ends.emplace_back(handed.id, handed.now + (handed.what == Handed::Compute ? 1.0 : 0.5));
    };
    core.start(0.0);
    while (!exec.ends.empty()) {
      const auto next = std::min_element(exec.ends.begin(), exec.ends.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
      const auto [id, at] = *next;
      exec.ends.erase(next);
      core.finish(id, at);
    }
    EXPECT_TRUE(core.all_done());
    for (std::size_t k = 0; k < exec.chain_ids.size(); ++k) EXPECT_EQ(core.activity_ops(exec.chain_ids[k]), exec.chains[k]);
    if (chained != nullptr) *chained = exec.chains;
    return core.trace("timed");
  };
  std::vector<std::vector<OpRef>> chained;
  const proto::Trace full = run(true, false, nullptr), one_by_one = run(false, false, nullptr),
                     with_chains = run(false, true, &chained);
  EXPECT_THAT(chained, ElementsAre(ElementsAre(OpRef{0, 0}, OpRef{0, 1}), ElementsAre(OpRef{1, 0}, OpRef{1, 1})));
  EXPECT_EQ(with_chains.step_time_ns(), full.step_time_ns());
  EXPECT_EQ(full.step_time_ns(), 5'000'000'000);  // five compute ops in a row
  ASSERT_EQ(with_chains.busy_size(), 2);
  for (std::uint32_t r = 0; r < 2; ++r) {
    const proto::RankBusy expected = busy_of_events(full, r);
    EXPECT_EQ(with_chains.busy(static_cast<int>(r)).SerializeAsString(), expected.SerializeAsString()) << r;
    EXPECT_EQ(one_by_one.busy(static_cast<int>(r)).SerializeAsString(), expected.SerializeAsString()) << r;
  }
  // Chains are for runs without op events, whose ops need no times of their own.
  Timed exec;
  ExecutorOptions both;
  both.compute_chains = &exec;
  EXPECT_THROW(ExecutorCore(h.schedule(), exec, both), std::invalid_argument);
}

TEST(ExecutorCore, FreeingMoreThanAllocatedMismatches) {
  HandSchedule h(1);
  h.memory(0, 0, true, 10);
  h.memory(0, 0, false, 11);
  FakeExecutor exec;
  EXPECT_THROW(ExecutorCore(h.schedule(), exec).start(), ScheduleMismatch);
}

TEST(ExecutorCore, DeadlockNamesBlockedOpsAndWhy) {
  HandSchedule h(3);
  const auto g = h.group({0, 1, 2});
  h.send(0, 1, 1, 64, 1);
  h.recv(1, 1, 0, 64, 2);
  h.collective(2, 1, g, 8);
  h.compute(2, 1);
  FakeExecutor exec;
  ExecutorCore core(h.schedule(), exec);
  core.start();
  EXPECT_FALSE(core.all_done());
  try {
    core.throw_deadlock();
  } catch (const ScheduleDeadlock& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("deadlock: 4 of 4 ops never finished on 3 ranks; 3 ops are blocked on peers:"));
    EXPECT_THAT(what, HasSubstr("rank 0 op 0 (send to rank 1, tag 1, 64 bytes, stream comm): no matching receive; "
                                "posted instead: rank 1 op 0 (recv from rank 0, tag 2, 64 bytes, stream comm)"));
    EXPECT_THAT(what, HasSubstr("rank 1 op 0 (recv from rank 0, tag 2, 64 bytes, stream comm): no matching send; posted "
                                "instead: rank 0 op 0"));
    EXPECT_THAT(what, HasSubstr("rank 2 op 0 (all-reduce on group 0, 8 bytes, stream comm): waiting for group members 0, 1"));
    EXPECT_THAT(what, HasSubstr("1 further ops wait"));
  }
}

TEST(ExecutorCore, DeadlockReportIsCapped) {
  HandSchedule h(2, {"s0", "s1", "s2", "s3", "s4"});
  for (std::uint32_t i = 0; i < 5; ++i) h.recv(1, i, 0, 8, i);  // each on its own stream: all posted
  h.recv(0, 0, 1, 8, 0);
  FakeExecutor exec;
  ExecutorOptions options;
  options.max_blocked_ops_reported = 2;
  ExecutorCore core(h.schedule(), exec, options);
  core.start();
  EXPECT_THAT([&] { core.throw_deadlock(); },
              ThrowsMessage<ScheduleDeadlock>(AllOf(HasSubstr("rank 0 has posted no send to rank 1"), HasSubstr("... and 4 more blocked ops"))));
}

TEST(ExecutorCore, LocalMatchingRunsOnlyTheLocalRanksAndHandsCommunicationOver) {
  HandSchedule h(2);
  const auto g = h.group({0, 1});
  h.compute(0, 0);
  h.send(0, 1, 1, 64, 1, {0});
  h.recv(1, 1, 0, 64, 1);
  h.compute(1, 0, {0});
  h.collective(1, 1, g, 8);
  FakeLocalExecutor exec;
  ExecutorOptions options;
  options.local_ranks = {1};
  ExecutorCore core(h.schedule(), exec, options);
  EXPECT_EQ(core.ops_total(), 3u);
  core.start(0.0);
  ASSERT_EQ(exec.handed.size(), 1u);
  EXPECT_EQ(exec.handed[0].what, Handed::Communication);
  EXPECT_EQ(exec.handed[0].ops[0], (OpRef{1, 0}));
  core.finish(exec.handed[0].id, 1.0);
  ASSERT_EQ(exec.handed.size(), 3u);
  EXPECT_EQ(exec.handed[1].what, Handed::Compute);
  EXPECT_EQ(exec.handed[2].what, Handed::Communication);  // the collective, after the recv on its stream
  EXPECT_EQ(exec.handed[2].ops[0], (OpRef{1, 2}));
  EXPECT_THAT([&] { core.throw_deadlock(); },
              ThrowsMessage<ScheduleDeadlock>(HasSubstr("rank 1 op 2 (all-reduce on group 0, 8 bytes, stream comm): handed to the executor")));
  core.finish(exec.handed[2].id, 2.0);
  core.finish(exec.handed[1].id, 3.0);
  EXPECT_TRUE(core.all_done());
  const auto trace = core.trace("cpu");
  EXPECT_EQ(events_of(trace).size(), 3);  // rank 1's ops only
  EXPECT_EQ(trace.num_ranks(), 2u);
  for (const OpEventRef e : events_of(trace)) EXPECT_EQ(e.rank(), 1u);
}

TEST(ExecutorCore, LocalRanksNeedLocalMatching) {
  HandSchedule h(2);
  FakeExecutor exec;
  ExecutorOptions options;
  options.local_ranks = {0};
  EXPECT_THROW(ExecutorCore(h.schedule(), exec, options), std::invalid_argument);
  FakeLocalExecutor local;
  options.local_ranks = {2};
  EXPECT_THROW(ExecutorCore(h.schedule(), local, options), std::invalid_argument);
}

TEST(ExecutorCore, ValidatesTheSchedule) {
  HandSchedule h(1);
  h.compute(0, 0);
  h.program(0).add_dep_op(0);  // op 0 depends on itself
  h.program(0).add_dep_on(0);
  FakeExecutor exec;
  EXPECT_THROW(ExecutorCore(h.schedule(), exec), InputError);
}

}  // namespace
}  // namespace eppsim
