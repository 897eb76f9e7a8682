#pragma once
// The MPI side of merging traces (runtime/trace_merge.h): measuring every
// rank's clock offset against rank 0's by ping-pongs, and gathering small
// figures and whole traces on rank 0. Every wait is bounded by `timeout_s`
// (MpiTimeout from runtime/mpi/mpi_wait.h), so a dead peer ends the run.
#include <mpi.h>

#include <vector>

#include "runtime/step_clock.h"
#include "runtime/trace_merge.h"
#include "proto/trace.pb.h"

namespace eppsim::runtime {

// Collective over `comm`. On rank 0: the offset of each rank's clock onto rank
// 0's (index = rank; rank 0's is 0), each from `rounds` ping-pongs; on the
// other ranks: empty.
std::vector<double> measure_clock_offsets(MPI_Comm comm, const StepClock& clock, int rounds, double timeout_s);

// Collective over `comm`: every rank's span, on rank 0 (index = rank); empty elsewhere.
std::vector<RankSpan> gather_spans(MPI_Comm comm, RankSpan mine, double timeout_s);

// Collective over `comm`: every rank's trace, on rank 0 (index = rank); empty elsewhere.
std::vector<proto::Trace> gather_traces(MPI_Comm comm, const proto::Trace& mine, double timeout_s);

}  // namespace eppsim::runtime
