#include "runtime/rank_executor.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/runtime/runtime_fixture.h"
#include "tests/runtime/sleep_compute_queue.h"
#include "schedule/trace_events.h"

namespace eppsim::runtime {
namespace {

// A CommEngine whose peers answer after `delay_s`, except for the ops in `silent`.
class DelayCommEngine final : public CommEngine {
 public:
  DelayCommEngine(const StepClock& clock, double delay_s, std::set<std::uint32_t> silent = {})
      : clock_(clock), delay_s_(delay_s), silent_(std::move(silent)) {}
  void start(ActivityId id, OpRef ref) override {
    started.push_back(ref.op);
    active_.push_back({id, clock_.now_s() + delay_s_, silent_.count(ref.op) > 0});
  }
  std::vector<Completion> poll() override {
    ++polls;
    std::vector<Completion> done;
    const double now = clock_.now_s();
    std::erase_if(active_, [&](const Active& a) {
      if (a.silent || a.end_s > now) return false;
      done.push_back({a.id, now});
      return true;
    });
    return done;
  }
  std::size_t in_flight() const override { return active_.size(); }
  std::vector<std::uint32_t> started;
  int polls = 0;

 private:
  struct Active {
    ActivityId id;
    double end_s;
    bool silent;
  };
  const StepClock& clock_;
  double delay_s_;
  std::set<std::uint32_t> silent_;
  std::vector<Active> active_;
};

// The ops of `rank` in a trace, by op index (views into `t`).
std::map<std::uint32_t, OpEventRef> rank_events(const proto::Trace& t, std::uint32_t rank) {
  std::map<std::uint32_t, OpEventRef> events;
  for (const OpEventRef e : events_of(t)) {
    if (e.rank() == rank) events.insert_or_assign(e.op(), e);
  }
  return events;
}

TEST(RankExecutor, RunsOneRankOfAPipelineWithTheCoreSemantics) {
  const auto schedule = testing::pipeline_schedule();
  StepClock clock;
  testing::SleepComputeQueue compute(clock, 3e-3);
  DelayCommEngine comm(clock, 5e-3);
  RankExecutor executor(schedule, 0, compute, comm, clock);
  const proto::Trace t = executor.run_step();
  const auto events = rank_events(t, 0);
  ASSERT_EQ(events.size(), ops_of(schedule, 0).size());
  EXPECT_TRUE(rank_events(t, 1).empty());  // LocalExecutorHooks: only this rank runs
  for (const auto& [i, e] : events) {
    for (const auto d : ops_of(schedule, 0)[i].deps()) EXPECT_GE(e.start_ns(), events.at(d).end_ns()) << "op " << i;
    EXPECT_LE(e.start_ns(), e.end_ns());
  }
  // Streams overlap: forward 1 (op 3) runs while the send of forward 0 (op 2) is in flight.
  EXPECT_LT(events.at(3).start_ns(), events.at(2).end_ns());
  EXPECT_GE(events.at(1).end_ns() - events.at(1).start_ns(), 3'000'000);  // the compute took its time
  EXPECT_GE(events.at(2).end_ns() - events.at(2).start_ns(), 5'000'000);  // the transfer took its time
  EXPECT_EQ(t.engine(), "cpu");
  EXPECT_FALSE(t.memory().empty());
}

TEST(RankExecutor, RunsStepAfterStep) {
  const auto schedule = testing::allreduce_schedule();
  StepClock clock;
  testing::SleepComputeQueue compute(clock, 1e-3);
  DelayCommEngine comm(clock, 1e-3);
  RankExecutor executor(schedule, 1, compute, comm, clock);
  for (int step = 0; step < 3; ++step) {
    clock.restart();
    const auto t = executor.run_step();
    EXPECT_EQ(rank_events(t, 1).size(), ops_of(schedule, 1).size());
    EXPECT_LT(t.step_time_ns(), 1'000'000'000);  // on the restarted clock
  }
}

TEST(RankExecutor, PollsBesideComputeBackOffOnlyWhereTheyShareItsCore) {
  RankExecutorOptions options;
  options.poll_interval_beside_compute_s = 500e-6;
  options.poll_interval_beside_compute_max_s = 4e-3;
  for (std::uint32_t quiet : {0u, 1u, 5u}) EXPECT_EQ(poll_interval_beside_compute_s(options, false, quiet), 500e-6);
  EXPECT_EQ(poll_interval_beside_compute_s(options, true, 0), 500e-6);
  EXPECT_EQ(poll_interval_beside_compute_s(options, true, 1), 1e-3);
  EXPECT_EQ(poll_interval_beside_compute_s(options, true, 3), 4e-3);
  EXPECT_EQ(poll_interval_beside_compute_s(options, true, 4), 4e-3);
  EXPECT_EQ(poll_interval_beside_compute_s(options, true, 1000), 4e-3);
  options.poll_interval_beside_compute_max_s = 1e-4;  // below the first: the first holds
  EXPECT_EQ(poll_interval_beside_compute_s(options, true, 3), 500e-6);
}

TEST(RankExecutor, AKernelSharingTheLoopsCoreIsWokenRarely) {
  // Rank 1 computes for 300 ms while a message it posted for arrives after 250 ms.
  testing::HandSchedule h(2, {"compute", "comm"});
  testing::set_tiny_model(h.schedule());
  testing::layer(h, 1, 0, proto::FORWARD, 0, 0);
  h.recv(1, 1, 0, 4096, 7);
  std::map<bool, int> polls;
  for (const bool shares_core : {false, true}) {
    StepClock clock;
    testing::SleepComputeQueue compute(clock, 0.3);
    compute.shares_core = shares_core;
    DelayCommEngine comm(clock, 0.25);
    RankExecutor executor(h.schedule(), 1, compute, comm, clock);
    const proto::Trace trace = executor.run_step();
    const auto events = rank_events(trace, 1);  // views into `trace`
    ASSERT_EQ(events.size(), 2u);
    EXPECT_GE(events.at(1).end_ns(), 250'000'000);  // the message, seen once it came
    polls[shares_core] = comm.polls;
  }
  // Every 0.5 ms while the message is awaited (500 polls) against 0.5, 1, 2, 4,
  // then every 8 ms (about 35).
  EXPECT_GT(polls[false], 150) << "polls while a GPU-like queue computes";
  EXPECT_LT(polls[true], 80) << "polls while the CPU-like queue computes";
}

TEST(RankExecutor, APeerThatNeverAnswersTimesOutNamingRankAndOp) {
  const auto schedule = testing::lonely_recv_schedule();
  StepClock clock;
  testing::SleepComputeQueue compute(clock, 1e-3);
  DelayCommEngine comm(clock, 1e-3, {0});
  RankExecutorOptions options;
  options.timeout_s = 0.2;
  RankExecutor executor(schedule, 1, compute, comm, clock, options);
  try {
    executor.run_step();
    FAIL() << "no timeout";
  } catch (const OpTimeout& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 op 0 (RECV of 4 KiB from rank 0, tag 7)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("its peers did not answer within the timeout of 0.2 s"), std::string::npos)
        << e.what();
  }
  EXPECT_GE(clock.now_s(), 0.2);
  EXPECT_LT(clock.now_s(), 1.0);
  EXPECT_EQ(executor.partial_trace().op_events().rank_size(), 0);  // nothing completed on rank 1
}

TEST(RankExecutor, PartialTraceKeepsWhatCompleted) {
  // Rank 1 first runs a layer, then waits forever.
  testing::HandSchedule h(2);
  testing::set_tiny_model(h.schedule());
  const auto f = testing::layer(h, 1, 0, proto::FORWARD, 0, 0);
  h.recv(1, 1, 0, 64, 1, {f});
  StepClock clock;
  testing::SleepComputeQueue compute(clock, 1e-3);
  DelayCommEngine comm(clock, 1e-3, {1});
  RankExecutorOptions options;
  options.timeout_s = 0.05;
  RankExecutor executor(h.schedule(), 1, compute, comm, clock, options);
  EXPECT_THROW(executor.run_step(), OpTimeout);
  const auto partial = executor.partial_trace();
  ASSERT_EQ(events_of(partial).size(), 1);
  EXPECT_EQ(events_of(partial)[0].op(), 0u);
}

}  // namespace
}  // namespace eppsim::runtime
