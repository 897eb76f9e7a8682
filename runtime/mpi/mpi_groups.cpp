#include "runtime/mpi/mpi_groups.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/comm_plan.h"
#include "runtime/mpi/mpi_wait.h"

namespace eppsim::runtime {

MpiGroups::MpiGroups(const proto::Schedule& schedule, MPI_Comm world, std::span<const std::uint32_t> real_ranks)
    : real_ranks_(real_ranks.begin(), real_ranks.end()) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(world, &rank), "MPI_Comm_rank");
  schedule_rank_ = real_ranks_.empty() ? static_cast<std::uint32_t>(rank) : real_ranks_.at(static_cast<std::size_t>(rank));
  check_mpi(MPI_Comm_dup(world, &p2p_), "MPI_Comm_dup");
  groups_.assign(static_cast<std::size_t>(schedule.groups_size()), MPI_COMM_NULL);
  MPI_Group world_group;
  check_mpi(MPI_Comm_group(world, &world_group), "MPI_Comm_group");
  for (const std::uint32_t g : groups_of_rank(schedule, schedule_rank_)) {
    std::vector<int> ranks;  // the real members' world ranks, in the group's order
    for (const std::uint32_t member : schedule.groups(static_cast<int>(g)).ranks()) {
      const auto at = std::lower_bound(real_ranks_.begin(), real_ranks_.end(), member);
      if (real_ranks_.empty()) {
        ranks.push_back(static_cast<int>(member));
      } else if (at != real_ranks_.end() && *at == member) {
        ranks.push_back(static_cast<int>(at - real_ranks_.begin()));
      }
    }
    MPI_Group group;
    check_mpi(MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &group), "MPI_Group_incl");
    // The tag keeps concurrent creations of different groups apart.
    check_mpi(MPI_Comm_create_group(world, group, static_cast<int>(g), &groups_[g]),
              fmt::format("MPI_Comm_create_group for group {}", g));
    MPI_Group_free(&group);
  }
  MPI_Group_free(&world_group);
}

int MpiGroups::world_rank(std::uint32_t rank) const {
  if (real_ranks_.empty()) return static_cast<int>(rank);
  const auto at = std::lower_bound(real_ranks_.begin(), real_ranks_.end(), rank);
  if (at == real_ranks_.end() || *at != rank) {
    throw std::invalid_argument(fmt::format("MpiGroups: rank {} is virtual: no process runs it", rank));
  }
  return static_cast<int>(at - real_ranks_.begin());
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
