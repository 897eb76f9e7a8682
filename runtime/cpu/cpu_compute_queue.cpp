#include "runtime/cpu/cpu_compute_queue.h"

#include <cblas.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace eppsim::runtime {
namespace {

class CpuComputeQueue final : public ComputeQueue {
 public:
  CpuComputeQueue(const StepClock& clock, const CpuComputeOptions& options)
      : clock_(clock),
        stream_buffer_bytes_(options.stream_buffer_bytes),
        kernels_(options.stream_buffer_bytes),
        worker_([this] { work(); }) {}

  // fp32 buffers, the largest twice while it grows, and what the program holds
  // before any kernel runs: eppsim-bench compute held 270 MB at 64 tokens
  // (OpenBLAS's buffers, the allocator's arenas; maximum resident set, pp2).
  std::uint64_t host_bytes(const KernelBuffers& buffers) const override {
    constexpr std::uint64_t kProgramBytes = std::uint64_t{320} << 20;
    const std::uint64_t stream = stream_buffer_bytes_ / sizeof(float);
    return kProgramBytes + (buffers.elements(stream) + buffers.largest(stream)) * sizeof(float);
  }

  bool shares_host_core() const override { return true; }  // mpirun binds a rank's threads to one core

  ~CpuComputeQueue() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_one();
    worker_.join();
  }

  void submit(ActivityId id, std::uint32_t /*stream: one core runs them all in order*/, const KernelPlan& plan) override {
    {
      std::lock_guard lock(mutex_);
      pending_.push_back(Job{id, plan});
      ++in_flight_;
    }
    work_ready_.notify_one();
  }

  std::vector<Completion> poll() override {
    std::lock_guard lock(mutex_);
    rethrow_failure();
    std::vector<Completion> done(finished_.begin(), finished_.end());
    finished_.clear();
    in_flight_ -= done.size();
    return done;
  }

  void wait(double timeout_s) override {
    std::unique_lock lock(mutex_);
    auto ready = [this] { return !finished_.empty() || failure_; };
    if (timeout_s < 0.0) {
      if (in_flight_ == 0) return;  // nothing could ever finish
      finished_ready_.wait(lock, ready);
    } else {
      finished_ready_.wait_for(lock, std::chrono::duration<double>(timeout_s), ready);
    }
    rethrow_failure();
  }

  std::size_t in_flight() const override {
    std::lock_guard lock(mutex_);
    return in_flight_;
  }

 private:
  struct Job {
    ActivityId id;
    KernelPlan plan;
  };

  void rethrow_failure() {
    if (failure_) std::rethrow_exception(failure_);
  }

  void work() {
    std::unique_lock lock(mutex_);
    while (true) {
      work_ready_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (stopping_) return;
      Job job = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      std::exception_ptr error;
      try {
        kernels_.run(job.plan);
      } catch (...) {
        error = std::current_exception();
      }
      const double end_s = clock_.now_s();
      lock.lock();
      if (error) {
        failure_ = error;
        pending_.clear();
      } else {
        finished_.push_back(Completion{job.id, end_s});
      }
      finished_ready_.notify_all();
      if (error) return;
    }
  }

  const StepClock& clock_;
  std::uint64_t stream_buffer_bytes_;
  CpuKernels kernels_;  // touched by the worker only
  mutable std::mutex mutex_;
  std::condition_variable work_ready_, finished_ready_;
  std::deque<Job> pending_;
  std::deque<Completion> finished_;
  std::size_t in_flight_ = 0;
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::thread worker_;  // last: starts once everything above exists
};

}  // namespace

std::unique_ptr<ComputeQueue> make_cpu_compute_queue(const StepClock& clock, CpuComputeOptions options) {
  if (options.blas_threads < 1) throw std::invalid_argument("cpu compute queue: blas_threads must be >= 1");
  openblas_set_num_threads(options.blas_threads);
  return std::make_unique<CpuComputeQueue>(clock, options);
}

}  // namespace eppsim::runtime
