#pragma once
// A window of communication beside compute (`eppsim-bench interference`,
// runtime/bench/interference_bench.h): `calls` calls of one op of the comm
// benchmark, back to back, on this rank's side of a group. What differs
// between backends is only how the calls are started and seen complete:
//   MPI (cpu)   one non-blocking call at a time, each started when a poll
//               sees the previous one complete (MPI_Test*), as the rank
//               executor polls beside compute; its length on the host clock;
//   NCCL (cuda) all the calls enqueued at once on the window's own CUDA
//               stream between two CUDA events (runtime/cuda/nccl_bench.h);
//               its length the events' elapsed time.
// The buffers and the check of what arrived are runtime/comm_bench_data.h's.

#include <optional>

namespace eppsim::runtime {

// Where a finished window lies: its end on the rank's StepClock and its length.
struct WindowSpan {
  double end_s = 0.0;
  double length_s = 0.0;
};

class CommWindow {
 public:
  virtual ~CommWindow() = default;
  // The least time one call takes beside compute whatever its size: MPI's calls
  // progress only when polled (the poll interval); NCCL's progress on the GPU (0).
  virtual double min_call_s() const = 0;
  // Starts a window of `calls` calls (calls >= 1); the previous window has ended.
  virtual void start(int calls) = 0;
  // Progresses the window without blocking; its span once every call has completed.
  virtual std::optional<WindowSpan> poll() = 0;
  // Whether what this rank received in the last window is right.
  virtual bool received_correctly() = 0;
};

}  // namespace eppsim::runtime
