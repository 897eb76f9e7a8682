#pragma once
// What `eppsim-bench interference` (runtime/bench/interference_bench.h) does
// the same on every backend, without MPI calls of its own: how many calls a
// window holds, one window of communication (runtime/comm_window.h)
// beside the layer run back to back on a ComputeQueue, and the BENCH.json row
// of a point.
#include <cstdint>
#include <string_view>
#include <vector>

#include <google/protobuf/struct.pb.h>

#include "runtime/comm_bench_data.h"
#include "runtime/comm_window.h"
#include "runtime/compute_queue.h"
#include "runtime/kernel_plan.h"
#include "runtime/step_clock.h"

namespace eppsim::runtime {

// The median of `values` (not empty): the middle one, or the mean of the two middle ones.
double median(std::vector<double> values);

// K, the calls of a window: enough for about twice the layer's time,
// ceil(2 compute_alone_s / max(comm_alone_s, min_call_s)), at least 1.
int window_calls(double compute_alone_s, double comm_alone_s, double min_call_s);

// One window beside compute: the layers that ended inside it and its length per call.
struct WindowTimes {
  std::vector<double> compute_s;  // each layer from the end of the one before (the first: from the window's start)
  double comm_per_call_s = 0.0;
};

// Starts `window` for `calls` calls beside `plan` run back to back on `queue`
// (two queued, so that the queue never waits for this loop), polling as
// runtime/rank_executor polls beside compute: the window, the queue, then
// ComputeQueue::wait(poll_s); a layer is resubmitted as each ends until the
// window has ended, then the queue is drained. Throws MpiTimeout
// "<what> beside compute: no answer within T s" when the window has not ended
// `timeout_s` after it started.
WindowTimes run_window(ComputeQueue& queue, const StepClock& clock, const KernelPlan& plan, CommWindow& window,
                       int calls, double poll_s, double timeout_s, std::string_view what);

// One (op, bytes) point: the slowest rank's medians and whether every rank received right.
struct InterferencePoint {
  double compute_alone_s = 0, compute_beside_s = 0, comm_alone_s = 0, comm_beside_s = 0;
  int iterations = 0;  // K
  bool correct = true;
};

// Where the point was measured (the row's other keys).
struct InterferenceSetting {
  CommKind op = CommKind::SendRecv;
  std::uint64_t bytes = 0;
  int group_size = 0;
  bool crosses_nodes = false;
  std::uint64_t tokens = 0;
  int repeats = 0;
};

// The BENCH.json row (proto/bench.proto, kind "interference"): the
// setting, the four times and compute_slowdown / comm_slowdown (beside / alone).
google::protobuf::Struct interference_row(const InterferenceSetting& setting, const InterferencePoint& point);

}  // namespace eppsim::runtime
