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
#include <span>
#include <vector>

#include "proto/schedule.pb.h"

namespace eppsim::runtime {

class MpiGroups {
 public:
  // Collective over `world`, whose rank r is the Schedule's rank r; or, in a
  // hybrid emulation (eppsim-run --ranks), the Schedule's rank real_ranks[r]
  // (ascending), each group's communicator then holding its real members.
  MpiGroups(const proto::Schedule& schedule, MPI_Comm world, std::span<const std::uint32_t> real_ranks = {});
  ~MpiGroups();
  MpiGroups(const MpiGroups&) = delete;
  MpiGroups& operator=(const MpiGroups&) = delete;

  MPI_Comm point_to_point() const { return p2p_; }
  // The Schedule's rank this process runs.
  std::uint32_t schedule_rank() const { return schedule_rank_; }
  // The rank on point_to_point() of the process that runs Schedule rank
  // `rank`; std::invalid_argument for a rank no process runs.
  int world_rank(std::uint32_t rank) const;
  // The communicator of Schedule group `group`; std::invalid_argument if this
  // rank is not a member.
  MPI_Comm group(std::uint32_t group) const;

 private:
  MPI_Comm p2p_ = MPI_COMM_NULL;
  std::uint32_t schedule_rank_ = 0;
  std::vector<std::uint32_t> real_ranks_;  // empty: every rank, world rank r = Schedule rank r
  std::vector<MPI_Comm> groups_;  // by group id; MPI_COMM_NULL where this rank is not a member
};

// The processes of the world on this one's machine, itself included
// (MPI_COMM_TYPE_SHARED): the ranks whose memory adds up beside its own.
// Collective over the world.
int ranks_on_this_machine();

}  // namespace eppsim::runtime
