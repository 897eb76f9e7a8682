#pragma once
// Where a rank's SEND, RECV and COLLECTIVE ops run on real hardware: MPI
// (runtime/mpi/mpi_comm_engine.h) or NCCL (runtime/cuda/nccl_comm.h). The rank
// executor (runtime/rank_executor.h) starts an op when the executor core says
// it is ready on this rank; the engine matches it with the peers (the library
// does: point-to-point in posting order per peer and tag, the k-th collective
// on a group with the k-th of every member) and reports when it ended.
#include <cstddef>
#include <limits>
#include <vector>

#include "runtime/compute_queue.h"
#include "schedule/executor/executor_core.h"

namespace eppsim::runtime {

class CommEngine {
 public:
  virtual ~CommEngine() = default;
  // Starts the transfer of op `ref` (a SEND, RECV or COLLECTIVE of this rank)
  // with real buffers; returns at once.
  virtual void start(ActivityId id, OpRef ref) = 0;
  // The activities that finished since the last call, with their end on the
  // rank's step clock. Also drives the library's progress.
  virtual std::vector<Completion> poll() = 0;
  // Started and not yet returned by poll().
  virtual std::size_t in_flight() const = 0;
  // The earliest step-clock time at which an op in flight is known to end (a
  // virtual peer's transfer, runtime/hybrid_comm_engine.h), so that the rank
  // executor sleeps no longer; infinity when no end is known in advance.
  virtual double next_end_s() const { return std::numeric_limits<double>::infinity(); }
  // The rank executor's news, for an engine that follows the rank's progress
  // (a closed-loop hybrid emulation): a step starts (the clock at 0), and an
  // op of the rank, of any kind, ended at `end_s`.
  virtual void step_started() {}
  virtual void op_ended(OpRef, double /*end_s*/) {}
};

}  // namespace eppsim::runtime
