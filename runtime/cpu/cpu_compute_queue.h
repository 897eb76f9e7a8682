#pragma once
// The CPU ComputeQueue: one worker thread runs the submitted plans in
// submission order with CpuKernels (OpenBLAS), one CPU core per rank. Every
// schedule stream shares the worker: one core runs one kernel at a time, so
// ops of different compute streams serialise as they would on that core. A
// completion's end_s is read from the StepClock when its last kernel returns.
// An exception in a kernel is rethrown by the next poll() or wait(). wait()
// with nothing in flight sleeps out its timeout, or returns at once when it
// has none (nothing could ever finish).
#include <cstdint>
#include <memory>

#include "runtime/compute_queue.h"
#include "runtime/cpu/cpu_kernels.h"
#include "runtime/step_clock.h"

namespace eppsim::runtime {

struct CpuComputeOptions {
  // OpenBLAS threads (openblas_set_num_threads, process-wide): one per rank, so
  // that N ranks on N cores do not fight over them.
  int blas_threads = 1;
  // Element-wise work streams through buffers of this many bytes.
  std::uint64_t stream_buffer_bytes = kDefaultStreamBufferBytes;
};

// `clock` must outlive the queue. Throws std::invalid_argument for
// blas_threads < 1.
std::unique_ptr<ComputeQueue> make_cpu_compute_queue(const StepClock& clock, CpuComputeOptions options = {});

}  // namespace eppsim::runtime
