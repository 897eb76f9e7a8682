#pragma once
// The RealMembersBarrier of a hybrid emulation on MPI (runtime/hybrid_comm_engine.h):
// MPI_Ibarrier on the communicator of a group's real members (runtime/mpi/mpi_groups.h),
// polled with MPI_Testsome. The k-th barrier a rank enters on a group meets
// the k-th of its other real members, as the Schedule's collectives meet.
#include <mpi.h>

#include <vector>

#include "runtime/hybrid_comm_engine.h"
#include "runtime/mpi/mpi_groups.h"
#include "runtime/step_clock.h"

namespace eppsim::runtime {

class MpiGroupBarrier final : public RealMembersBarrier {
 public:
  // `groups` and `clock` must outlive the barrier.
  MpiGroupBarrier(const MpiGroups& groups, const StepClock& clock) : groups_(groups), clock_(clock) {}
  ~MpiGroupBarrier() override;

  void start(ActivityId id, std::uint32_t group) override;
  std::vector<Completion> poll() override;

 private:
  const MpiGroups& groups_;
  const StepClock& clock_;
  std::vector<MPI_Request> requests_;
  std::vector<ActivityId> ids_;  // parallel to requests_
};

}  // namespace eppsim::runtime
