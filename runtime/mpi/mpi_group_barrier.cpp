#include "runtime/mpi/mpi_group_barrier.h"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/mpi/mpi_wait.h"

namespace eppsim::runtime {

// A failed run may leave barriers entered; it ends in MPI_Abort, and a barrier
// holds no buffer, so its requests are simply dropped.
MpiGroupBarrier::~MpiGroupBarrier() = default;

void MpiGroupBarrier::start(ActivityId id, std::uint32_t group) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(groups_.group(group), &request), fmt::format("the barrier of group {}'s real members", group));
  requests_.push_back(request);
  ids_.push_back(id);
}

std::vector<Completion> MpiGroupBarrier::poll() {
  std::vector<Completion> done;
  const std::vector<int> indices = completed_requests(requests_);
  if (indices.empty()) return done;
  const double now = clock_.now_s();
  for (const int i : indices) done.push_back({ids_[static_cast<std::size_t>(i)], now});
  for (auto it = indices.rbegin(); it != indices.rend(); ++it) {
    requests_.erase(requests_.begin() + *it);
    ids_.erase(ids_.begin() + *it);
  }
  return done;
}

}  // namespace eppsim::runtime
