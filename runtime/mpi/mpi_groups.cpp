#include "runtime/mpi/mpi_groups.h"

#include <stdexcept>

#include <fmt/format.h>

#include "runtime/comm_plan.h"
#include "runtime/mpi/mpi_wait.h"

namespace eppsim::runtime {

MpiGroups::MpiGroups(const proto::Schedule& schedule, MPI_Comm world) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(world, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_dup(world, &p2p_), "MPI_Comm_dup");
  groups_.assign(static_cast<std::size_t>(schedule.groups_size()), MPI_COMM_NULL);
  MPI_Group world_group;
  check_mpi(MPI_Comm_group(world, &world_group), "MPI_Comm_group");
  for (const std::uint32_t g : groups_of_rank(schedule, static_cast<std::uint32_t>(rank))) {
    const auto& members = schedule.groups(static_cast<int>(g)).ranks();
    std::vector<int> ranks(members.begin(), members.end());
    MPI_Group group;
    check_mpi(MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &group), "MPI_Group_incl");
    // The tag keeps concurrent creations of different groups apart.
    check_mpi(MPI_Comm_create_group(world, group, static_cast<int>(g), &groups_[g]),
              fmt::format("MPI_Comm_create_group for group {}", g));
    MPI_Group_free(&group);
  }
  MPI_Group_free(&world_group);
}

MpiGroups::~MpiGroups() {
  for (auto& c : groups_) {
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
  if (p2p_ != MPI_COMM_NULL) MPI_Comm_free(&p2p_);
}

MPI_Comm MpiGroups::group(std::uint32_t group) const {
  if (group >= groups_.size() || groups_[group] == MPI_COMM_NULL) {
    throw std::invalid_argument(fmt::format("MpiGroups: this rank is not a member of group {}", group));
  }
  return groups_[group];
}

int ranks_on_this_machine() {
  MPI_Comm machine = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine), "MPI_Comm_split_type");
  int ranks = 1;
  check_mpi(MPI_Comm_size(machine, &ranks), "MPI_Comm_size");
  MPI_Comm_free(&machine);
  return ranks;
}

}  // namespace eppsim::runtime
