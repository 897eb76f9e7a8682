#pragma once
// One rank's interpreter of a Schedule on real hardware: the executor core
// (schedule/executor/executor_core.h, LocalExecutorHooks, for this rank) decides what
// may run; COMPUTE ops go to a ComputeQueue as the kernels of plan_kernels,
// SEND/RECV/COLLECTIVE ops to a CommEngine; the loop polls both and reports
// every completion to the core with its time on the step clock. So the
// runtime has the engines' semantics (streams, dependencies, matching,
// collectives, memory) and the same Trace.
//
// Waiting never burns the core the compute worker needs: while compute is in
// flight the loop sleeps in ComputeQueue::wait with a short timeout between
// polls of the communication (longer and longer on the CPU backend, whose
// worker shares the loop's core, until anything finishes); with only
// communication in flight it polls the library and yields.
//
// An op outstanding longer than `timeout_s` (a transfer whose peer never
// answered, a kernel that never returned) throws OpTimeout naming the rank
// and the op; a termination signal (runtime/fault_signals.h: mpirun ends
// every rank when one dies) throws Terminated naming the ops waited on. The
// ops in flight are published for the crash handler as they change.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/comm_engine.h"
#include "runtime/compute_queue.h"
#include "runtime/kernel_plan.h"
#include "runtime/step_clock.h"
#include "schedule/executor/executor_core.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim::runtime {

class OpTimeout : public std::runtime_error {
 public:
  explicit OpTimeout(const std::string& message) : std::runtime_error(message) {}
};

struct RankExecutorOptions {
  double timeout_s = 300.0;
  // How long the loop sleeps between polls of the communication when only
  // communication is in flight (after polling closely for its first 1 ms).
  double poll_interval_s = 50e-6;
  // The same while compute runs too: the loop shares the core with the compute
  // worker, and waking every 50 us slowed a pipeline stage's kernels by 15-25%
  // (scenarios/validation/pp2: measured step 2.56 s against 2.20 s at 500 us,
  // whose figure the calibrated simulation predicts within 1%).
  double poll_interval_beside_compute_s = 500e-6;
  // Where the kernels share the loop's core (ComputeQueue::shares_host_core: the
  // CPU backend), the interval beside compute doubles with each poll that
  // finds nothing, up to this, and starts again from the one above once
  // anything finishes: a thread waking every 500 us on a kernel's core slowed
  // its layers by 11-24% on a 2-core VM, every 8 ms by 1.5-3%. The price: a
  // transfer that progresses only when polled (MPI beside compute) is seen
  // later (runtime/README.md).
  double poll_interval_beside_compute_max_s = 8e-3;
  std::string engine = "cpu";  // the Trace's engine name
  // Called as each op of the rank starts (eppsim-run's --inject-fault).
  std::function<void(OpRef)> on_op_started;
};

// How long the loop waits on the compute before polling the communication
// again, after `quiet_polls` polls beside compute that found nothing.
double poll_interval_beside_compute_s(const RankExecutorOptions& options, bool compute_shares_core,
                                      std::uint32_t quiet_polls);

class RankExecutor final : public LocalExecutorHooks {
 public:
  // Plans every COMPUTE op of `rank` once (plan_kernels with the Schedule's
  // header.model). The schedule, queues and clock must outlive the executor.
  RankExecutor(const proto::Schedule& schedule, std::uint32_t rank, ComputeQueue& compute, CommEngine& comm,
               const StepClock& clock, RankExecutorOptions options = {});
  ~RankExecutor() override;

  // Runs one step of the rank's program from the clock's now to its end and
  // returns the rank's Trace (this rank's events on its step clock). Throws
  // OpTimeout (see above), ScheduleMismatch from the core, or what the
  // engines throw; partial_trace() then holds what completed.
  proto::Trace run_step();
  // The trace of the ops that completed in the last (possibly failed) step.
  proto::Trace partial_trace() const;
  // The kernels of the rank's ops (empty for non-compute ones).
  const std::vector<KernelPlan>& plans() const { return plans_; }

  void compute_ready(ActivityId id, OpRef op, double now) override;
  void communication_ready(ActivityId id, OpRef op, double now) override;

 private:
  struct Outstanding {
    ActivityId id;
    OpRef op;
    double start_s;
  };
  void started(ActivityId id, OpRef op, double now);
  std::string in_flight() const;  // the outstanding ops, described
  void publish_in_flight() const;
  void check_timeouts(double now) const;
  void finished(const std::vector<Completion>& done);

  const proto::Schedule& schedule_;
  std::uint32_t rank_;
  ComputeQueue& compute_;
  CommEngine& comm_;
  const StepClock& clock_;
  RankExecutorOptions options_;
  std::vector<KernelPlan> plans_;  // per op of the rank (empty for non-compute)
  std::vector<std::string> descriptions_;  // per op of the rank: describe_op
  std::unique_ptr<ExecutorCore> core_;
  std::vector<Outstanding> outstanding_;
  double last_s_ = 0.0;  // the latest time given to the core
};

}  // namespace eppsim::runtime
