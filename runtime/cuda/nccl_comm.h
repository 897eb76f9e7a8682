#pragma once
// The CommEngine on NCCL (the cuda backend): one NCCL communicator per
// Schedule group this rank belongs to (ranks in the group's order) plus one
// over every rank for point-to-point traffic, each bootstrapped through MPI
// (the group's first rank makes the unique id, MPI_Bcast on the group's MPI
// communicator, ncclCommInitRank). Counts and buffers as runtime/comm_plan.h
// (float32 device buffers, reused by size); SEND/RECV as ncclSend/ncclRecv,
// ALL_TO_ALL as a grouped send/recv per peer (ncclGroupStart/End),
// ALL_REDUCE/REDUCE_SCATTER as sums, BROADCAST from the group's first rank.
// Each op runs on its own CUDA stream, in order per Schedule stream; its end
// is the host time of its start plus the CUDA-event time between its start
// and end events (never later than the poll that saw it).
//
// NCCL matches point-to-point by order per peer, not by tag: ops between two
// ranks meet in the order they are issued, which the Schedule's per-(peer,
// tag) order equals when each pair of ranks uses its tags in one order (what
// the planners write). Built only with CUDA and NCCL (EPPSIM_WITH_NCCL); runs
// only on a machine with a GPU.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "runtime/comm_engine.h"
#include "runtime/comm_plan.h"
#include "runtime/mpi/mpi_groups.h"
#include "runtime/step_clock.h"
#include "proto/schedule.pb.h"

namespace eppsim::runtime {

class NcclCommEngine final : public CommEngine {
 public:
  // Collective over MPI_COMM_WORLD. Selects the GPU of this rank's local rank
  // (MPI_Comm_split_type SHARED); std::runtime_error when there is no GPU.
  NcclCommEngine(const proto::Schedule& schedule, const MpiGroups& groups, const StepClock& clock);
  ~NcclCommEngine() override;

  void start(ActivityId id, OpRef ref) override;
  std::vector<Completion> poll() override;
  std::size_t in_flight() const override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace eppsim::runtime
