#pragma once
// The CommEngine on MPI: SEND/RECV as MPI_Issend/MPI_Irecv on the point-to-point
// communicator with the op's tag (synchronous sends: a SEND ends only once its
// RECV has matched it, the engines' rendezvous, so a Schedule that relies on
// MPI buffering small messages deadlocks here as it does in simulation); COLLECTIVE as MPI_Iallreduce (sum, in place),
// MPI_Iallgather, MPI_Ireduce_scatter_block (sum), MPI_Ialltoall and MPI_Ibcast
// (from the group's first rank) on the group's communicator, with the counts
// of runtime/comm_plan.h over real float buffers. MPI's ordering rules give the
// Schedule's matching: messages between two ranks with one tag arrive in
// posting order, and collectives on a communicator meet in issue order.
//
// Buffers are reused across ops (pools by size; send buffers are filled once,
// with this rank's number plus one).
#include <mpi.h>

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/comm_engine.h"
#include "runtime/comm_plan.h"
#include "runtime/mpi/mpi_groups.h"
#include "runtime/step_clock.h"
#include "proto/schedule.pb.h"

namespace eppsim::runtime {

class MpiCommEngine final : public CommEngine {
 public:
  // Collective over `world` (builds the groups' communicators). Throws
  // InputError when a tag exceeds MPI_TAG_UB. The schedule, groups and clock
  // must outlive the engine.
  MpiCommEngine(const proto::Schedule& schedule, const MpiGroups& groups, const StepClock& clock);
  ~MpiCommEngine() override;

  // Throws std::runtime_error naming the op when a count exceeds MPI's int.
  void start(ActivityId id, OpRef ref) override;
  std::vector<Completion> poll() override;
  std::size_t in_flight() const override { return requests_.size(); }

 private:
  using Buffer = std::vector<float>;
  // A buffer of `elements` from the pool: send buffers hold the fill value,
  // receive buffers whatever the last op left.
  Buffer take(std::multimap<std::size_t, Buffer>& pool, std::uint64_t elements, float fill);

  struct Active {
    ActivityId id;
    Buffer send, recv;
  };
  const proto::Schedule& schedule_;
  const MpiGroups& groups_;
  const StepClock& clock_;
  std::vector<std::uint32_t> group_sizes_;
  float fill_;  // this rank + 1
  std::vector<MPI_Request> requests_;
  std::vector<Active> active_;  // parallel to requests_
  std::multimap<std::size_t, Buffer> send_pool_, recv_pool_;
};

}  // namespace eppsim::runtime
