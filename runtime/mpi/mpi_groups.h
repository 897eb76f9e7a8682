#pragma once
// MPI communicators for the Schedule: one for point-to-point traffic (a
// duplicate of the world, so the schedule's tags never meet the runtime's own
// messages) and one per Schedule group this rank belongs to, whose ranks are
// the group's in the order the Schedule lists them (so an all-gather's blocks
// come in that order). Built with MPI_Comm_create_group, which involves only
// the group's members, in Schedule order on every rank, so building them
// cannot deadlock.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "proto/schedule.pb.h"

namespace eppsim::runtime {

class MpiGroups {
 public:
  // Collective over `world`, whose rank r is the Schedule's rank r.
  MpiGroups(const proto::Schedule& schedule, MPI_Comm world);
  ~MpiGroups();
  MpiGroups(const MpiGroups&) = delete;
  MpiGroups& operator=(const MpiGroups&) = delete;

  MPI_Comm point_to_point() const { return p2p_; }
  // The communicator of Schedule group `group`; std::invalid_argument if this
  // rank is not a member.
  MPI_Comm group(std::uint32_t group) const;

 private:
  MPI_Comm p2p_ = MPI_COMM_NULL;
  std::vector<MPI_Comm> groups_;  // by group id; MPI_COMM_NULL where this rank is not a member
};

// The processes of the world on this one's machine, itself included
// (MPI_COMM_TYPE_SHARED): the ranks whose memory adds up beside its own.
// Collective over the world.
int ranks_on_this_machine();

}  // namespace eppsim::runtime
