#pragma once
// A ComputeQueue test double for the rank executor's tests: one worker thread
// runs submitted plans in order, each by sleeping for a time from the plan
// (a fixed base plus its GEMM FLOPs at a nominal rate), and reports the end on
// the step clock, as the CPU queue of runtime/cpu/ does with real kernels.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/compute_queue.h"

namespace eppsim::runtime::testing {

class SleepComputeQueue final : public ComputeQueue {
 public:
  explicit SleepComputeQueue(const StepClock& clock, double base_s = 2e-3, double flops_per_s = 1e10)
      : clock_(clock), base_s_(base_s), flops_per_s_(flops_per_s), worker_([this] { work(); }) {}
  ~SleepComputeQueue() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    worker_.join();
  }

  double duration_s(const KernelPlan& plan) const {
    double flops = 0.0;
    for (const auto& g : plan.gemms) flops += g.flops();
    return base_s_ + flops / flops_per_s_;
  }

  void submit(ActivityId id, std::uint32_t, const KernelPlan& plan) override {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back({id, duration_s(plan)});
      ++in_flight_;
    }
    wake_.notify_all();
  }
  std::vector<Completion> poll() override {
    std::lock_guard lock(mutex_);
    std::vector<Completion> done(finished_.begin(), finished_.end());
    finished_.clear();
    in_flight_ -= done.size();
    return done;
  }
  void wait(double timeout_s) override {
    std::unique_lock lock(mutex_);
    const auto ready = [&] { return !finished_.empty(); };
    if (timeout_s < 0) {
      done_.wait(lock, ready);
    } else {
      done_.wait_for(lock, std::chrono::duration<double>(timeout_s), ready);
    }
  }
  std::size_t in_flight() const override {
    std::lock_guard lock(mutex_);
    return in_flight_;
  }
  bool shares_host_core() const override { return shares_core; }
  bool shares_core = false;  // as the CPU queue, whose worker shares the executor's core

 private:
  struct Job {
    ActivityId id;
    double duration_s;
  };
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      const Job job = queue_.front();
      queue_.pop_front();
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::duration<double>(job.duration_s));
      lock.lock();
      finished_.push_back({job.id, clock_.now_s()});
      done_.notify_all();
    }
  }

  const StepClock& clock_;
  double base_s_, flops_per_s_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Job> queue_;
  std::deque<Completion> finished_;
  std::size_t in_flight_ = 0;
  bool stop_ = false;
  std::thread worker_;  // last: starts after the members it uses
};

}  // namespace eppsim::runtime::testing
