#pragma once
// Where a rank's COMPUTE ops run on real hardware: a queue per backend (a CPU
// worker thread with OpenBLAS, or CUDA streams with cuBLAS), fed by the rank
// executor (runtime/rank_executor.h) and polled by it. The executor never
// blocks inside a kernel: it submits, then polls the compute queue and its
// communication engine in turn.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/kernel_plan.h"
#include "runtime/step_clock.h"
#include "schedule/executor/executor_core.h"

namespace eppsim::runtime {

// A finished activity and when it ended on the rank's step clock.
struct Completion {
  ActivityId id = 0;
  double end_s = 0.0;
};

class ComputeQueue {
 public:
  virtual ~ComputeQueue() = default;
  // Queues the kernels of one COMPUTE op behind earlier ones of the same
  // schedule stream; returns at once.
  virtual void submit(ActivityId id, std::uint32_t stream, const KernelPlan& plan) = 0;
  // The activities that finished since the last call, in the order they ended.
  virtual std::vector<Completion> poll() = 0;
  // Blocks until an activity finishes or `timeout_s` passes (negative: no limit).
  virtual void wait(double timeout_s) = 0;
  // Submitted and not yet returned by poll().
  virtual std::size_t in_flight() const = 0;
  // The host memory this queue would hold running plans of `buffers`' operands,
  // the program's own included: the memory guard's estimate (base/memory_limit.h).
  // 0 where the buffers are not in host memory (a GPU's).
  virtual std::uint64_t host_bytes(const KernelBuffers& /*buffers*/) const { return 0; }
  // Whether the kernels run on the host core the executor's loop wakes on (the
  // CPU backend's worker), so that each wake-up of the loop takes time from them.
  virtual bool shares_host_core() const { return false; }
};

}  // namespace eppsim::runtime
