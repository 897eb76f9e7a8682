#pragma once
// The `eppsim-run` command on one rank (one MPI process per rank):
//   mpirun -np N eppsim-run SCHEDULE --backend cpu|cuda -o TRACE
//          [--warmup-steps K (1)] [--steps S (3)] [--timeout SECONDS (300)]
//          [--attention flash|reference]   (cuda: runtime/cuda/cuda_compute.h)
//          [--ranks LIST --virtual SIM_TRACE]   (hybrid emulation)
// Every rank reads the Schedule (.pb, .json or .textproto), checks that N is
// its num_ranks, builds the communicators of its groups, runs K warm-up and S
// measured steps of its program (each after a barrier and a clock restart)
// through the RankExecutor, and after each measured step measures the clock
// offsets onto rank 0 and the step time (the latest end minus the earliest
// start, on rank 0's clock). Rank 0 writes the Trace of the step with the
// median step time, merged onto its clock (runtime/trace_merge.h), atomically.
//
// Hybrid emulation (--ranks R --virtual SIM_TRACE, N = |R|): world rank i runs
// the Schedule's rank R[i] (R ascending); every other rank is virtual, timed by
// SIM_TRACE, a calibrated simulation of the whole Schedule
// (runtime/virtual_peers.h, runtime/hybrid_comm_engine.h). The Trace holds the
// real ranks' measured events and the virtual ranks' simulated ones on one
// clock (Trace.real_ranks names the real ones); the step time spans both.
//
// Faults: an op waiting longer than the timeout on its peers fails the rank
// with a message naming the rank and op; waits outside a step (barriers,
// gathering) fail after twice the timeout, so that the rank stuck on an op
// reports first. A failure on any rank prints its message on stderr and ends
// every rank (MPI_Abort) with exit status 2 for bad input, 1 otherwise; rank 0
// writes the trace of what completed on it to TRACE when it is the one failing.
#include <functional>
#include <memory>
#include <string>

#include "runtime/comm_engine.h"
#include "runtime/compute_queue.h"
#include "runtime/mpi/mpi_groups.h"
#include "runtime/step_clock.h"
#include "proto/schedule.pb.h"

namespace eppsim::runtime {

// A backend's two engines for this rank.
struct Backend {
  std::unique_ptr<ComputeQueue> compute;
  std::unique_ptr<CommEngine> comm;
};

// What the command line asks of the backend.
struct BackendRequest {
  std::string name;       // "cpu" or "cuda"
  std::string attention;  // cuda: "flash" or "reference"; empty: the build's default
};

// Builds the requested backend; InputError for a name or attention kernel it
// does not know or this build lacks.
using BackendFactory = std::function<Backend(const BackendRequest& request, const proto::Schedule& schedule,
                                             const MpiGroups& groups, const StepClock& clock)>;

// main() of eppsim-run: initialises and finalises MPI; returns the exit status
// (or ends the process through MPI_Abort on a failure).
int run_eppsim_run(int argc, char** argv, const BackendFactory& make_backend);

}  // namespace eppsim::runtime
