// What eppsim-bench interference does the same on every backend: window sizing,
// a window beside the queue (a test-double window and the sleeping queue of
// sleep_compute_queue.h), the row. Needs neither MPI calls nor a GPU.
#include "runtime/bench/interference_point.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "runtime/mpi/mpi_wait.h"
#include "tests/runtime/sleep_compute_queue.h"

namespace eppsim::runtime {
namespace {

// A window that ends `length_s` after it starts (never, when negative), as
// seen on the step clock, and records how it was started.
class TimedWindow final : public CommWindow {
 public:
  TimedWindow(const StepClock& clock, double length_s, double min_call_s = 0.0)
      : clock_(clock), length_s_(length_s), min_call_s_(min_call_s) {}
  double min_call_s() const override { return min_call_s_; }
  void start(int calls) override {
    calls_ = calls;
    ++starts_;
    start_s_ = clock_.now_s();
  }
  std::optional<WindowSpan> poll() override {
    ++polls_;
    const double now_s = clock_.now_s();
    if (length_s_ < 0 || now_s - start_s_ < length_s_) return std::nullopt;
    return WindowSpan{now_s, now_s - start_s_};
  }
  bool received_correctly() override { return true; }

  int calls_ = 0, starts_ = 0, polls_ = 0;

 private:
  const StepClock& clock_;
  double length_s_, min_call_s_;
  double start_s_ = 0.0;
};

TEST(InterferencePoint, MedianIsTheMiddleValue) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({7.0}), 7.0);
}

TEST(InterferencePoint, WindowHoldsAboutTwoLayersOfCalls) {
  EXPECT_EQ(window_calls(10e-3, 1e-3, 0.0), 20);       // 2 x 10 ms / 1 ms
  EXPECT_EQ(window_calls(10e-3, 3e-3, 0.0), 7);        // rounded up
  EXPECT_EQ(window_calls(1e-3, 10e-6, 500e-6), 4);     // a call beside compute lasts at least a poll (MPI)
  EXPECT_EQ(window_calls(1e-3, 10e-6, 0.0), 200);      // or not (NCCL)
  EXPECT_EQ(window_calls(1e-6, 1e-3, 0.0), 1);         // at least one call
}

TEST(InterferencePoint, WindowCountsTheLayersThatEndInsideIt) {
  StepClock clock;
  testing::SleepComputeQueue queue(clock, 2e-3);
  const KernelPlan plan;  // no GEMMs: each layer sleeps the base 2 ms
  TimedWindow window(clock, 20e-3);
  const WindowTimes w = run_window(queue, clock, plan, window, 4, 500e-6, 10.0, "test op");
  EXPECT_EQ(window.starts_, 1);
  EXPECT_EQ(window.calls_, 4);
  EXPECT_GT(window.polls_, 1);
  EXPECT_EQ(queue.in_flight(), 0u);  // drained
  // About ten 2 ms layers in 20 ms (sleeps overrun on a busy machine): none after the window ended.
  ASSERT_GE(w.compute_s.size(), 3u);
  EXPECT_LE(w.compute_s.size(), 10u);
  for (const double s : w.compute_s) EXPECT_GE(s, 2e-3);
  EXPECT_GE(w.comm_per_call_s, 20e-3 / 4);
  EXPECT_LT(w.comm_per_call_s, 1.0);
}

TEST(InterferencePoint, WindowShorterThanALayerHoldsNone) {
  StepClock clock;
  testing::SleepComputeQueue queue(clock, 50e-3);
  const KernelPlan plan;
  TimedWindow window(clock, 1e-3);
  const WindowTimes w = run_window(queue, clock, plan, window, 2, 500e-6, 10.0, "test op");
  EXPECT_TRUE(w.compute_s.empty());
  EXPECT_EQ(queue.in_flight(), 0u);  // the two queued layers still ran out
  EXPECT_GE(w.comm_per_call_s, 0.5e-3);
}

TEST(InterferencePoint, WindowThatNeverEndsTimesOut) {
  StepClock clock;
  testing::SleepComputeQueue queue(clock, 1e-3);
  const KernelPlan plan;
  TimedWindow window(clock, -1.0);
  try {
    run_window(queue, clock, plan, window, 1, 500e-6, 0.02, "all-reduce");
    FAIL() << "no timeout";
  } catch (const MpiTimeout& e) {
    EXPECT_EQ(std::string(e.what()), "all-reduce beside compute: no answer within 0.02 s");
  }
}

TEST(InterferencePoint, RowHoldsTheSettingTimesAndFactors) {
  InterferencePoint p;
  p.compute_alone_s = 2e-3;
  p.compute_beside_s = 3e-3;
  p.comm_alone_s = 1e-4;
  p.comm_beside_s = 4e-4;
  p.iterations = 40;
  p.correct = true;
  const google::protobuf::Struct row = interference_row({CommKind::AllGather, 65536, 4, true, 1024, 5}, p);
  const auto& f = row.fields();
  EXPECT_EQ(f.size(), 14u);
  EXPECT_EQ(f.at("op").string_value(), "all-gather");
  EXPECT_EQ(f.at("bytes").number_value(), 65536);
  EXPECT_EQ(f.at("group_size").number_value(), 4);
  EXPECT_TRUE(f.at("crosses_nodes").bool_value());
  EXPECT_EQ(f.at("tokens").number_value(), 1024);
  EXPECT_EQ(f.at("iterations").number_value(), 40);
  EXPECT_EQ(f.at("repeats").number_value(), 5);
  EXPECT_EQ(f.at("compute_beside_s").number_value(), 3e-3);
  EXPECT_DOUBLE_EQ(f.at("compute_slowdown").number_value(), 1.5);
  EXPECT_DOUBLE_EQ(f.at("comm_slowdown").number_value(), 4.0);
  EXPECT_TRUE(f.at("correct").bool_value());
}

}  // namespace
}  // namespace eppsim::runtime
