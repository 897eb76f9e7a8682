#include "runtime/mpi/mpi_comm_engine.h"

#include <algorithm>
#include <climits>
#include <iterator>

#include <fmt/format.h>

#include "base/errors.h"
#include "runtime/mpi/mpi_wait.h"

namespace eppsim::runtime {

namespace {

int mpi_count(std::uint64_t count, const proto::Schedule& schedule, OpRef ref) {
  if (count > static_cast<std::uint64_t>(INT_MAX)) {
    throw std::runtime_error(fmt::format("{}: {} elements in one MPI call, more than MPI's int count allows",
                                         describe_op(schedule, ref), count));
  }
  return static_cast<int>(count);
}

}  // namespace

MpiCommEngine::MpiCommEngine(const proto::Schedule& schedule, const MpiGroups& groups, const StepClock& clock)
    : schedule_(schedule), groups_(groups), clock_(clock), group_sizes_(group_sizes(schedule)) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(groups.point_to_point(), &rank), "MPI_Comm_rank");
  fill_ = static_cast<float>(rank + 1);
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(groups.point_to_point(), MPI_TAG_UB, &value, &found), "MPI_Comm_get_attr(MPI_TAG_UB)");
  const std::uint32_t tag_ub = found ? static_cast<std::uint32_t>(*static_cast<int*>(value)) : 32767u;
  if (const auto tag = max_tag(schedule); tag > tag_ub) {
    throw InputError(fmt::format("schedule: programs: tag {} exceeds this MPI's largest tag (MPI_TAG_UB {})", tag, tag_ub));
  }
}

MpiCommEngine::~MpiCommEngine() {
  if (active_.empty()) return;
  // Only a failed run destroys the engine with transfers in flight, and it ends
  // in MPI_Abort. Until then MPI may still read and write their buffers (a
  // collective cannot be cancelled), so they are kept to the process's end.
  static auto& abandoned = *new std::vector<Active>();
  std::move(active_.begin(), active_.end(), std::back_inserter(abandoned));
}

MpiCommEngine::Buffer MpiCommEngine::take(std::multimap<std::size_t, Buffer>& pool, std::uint64_t elements, float fill) {
  const auto it = pool.find(elements);
  if (it != pool.end()) {
    Buffer b = std::move(it->second);
    pool.erase(it);
    return b;
  }
  return Buffer(elements, fill);
}

void MpiCommEngine::start(ActivityId id, OpRef ref) {
  const CommShape shape = comm_shape(ops_of(schedule_, ref.rank)[ref.op], group_sizes_);
  Active a{id, take(send_pool_, shape.send_elements, fill_), take(recv_pool_, shape.recv_elements, 0.0f)};
  const int count = mpi_count(shape.count, schedule_, ref);
  mpi_count(std::max(shape.send_elements, shape.recv_elements), schedule_, ref);
  MPI_Request request = MPI_REQUEST_NULL;
  // The op's description only when MPI fails (formatting it for every op would cost more than a small transfer).
  const auto check = [&](int rc) {
    if (rc != MPI_SUCCESS) check_mpi(rc, describe_op(schedule_, ref));
  };
  switch (shape.kind) {
    case CommKind::SendRecv:
      if (shape.sends) {
        // Synchronous: the SEND ends only once its RECV has matched it, as in the engines (rendezvous),
        // not when MPI has buffered a small message.
        check(MPI_Issend(a.send.data(), count, MPI_FLOAT, groups_.world_rank(shape.peer), static_cast<int>(shape.tag),
                         groups_.point_to_point(), &request));
      } else {
        check(MPI_Irecv(a.recv.data(), count, MPI_FLOAT, groups_.world_rank(shape.peer), static_cast<int>(shape.tag),
                        groups_.point_to_point(), &request));
      }
      break;
    case CommKind::AllReduce:
      check(MPI_Iallreduce(a.send.data(), a.recv.data(), count, MPI_FLOAT, MPI_SUM, groups_.group(shape.group), &request));
      break;
    case CommKind::AllGather:
      check(MPI_Iallgather(a.send.data(), count, MPI_FLOAT, a.recv.data(), count, MPI_FLOAT, groups_.group(shape.group),
                           &request));
      break;
    case CommKind::ReduceScatter:
      check(MPI_Ireduce_scatter_block(a.send.data(), a.recv.data(), count, MPI_FLOAT, MPI_SUM, groups_.group(shape.group),
                                      &request));
      break;
    case CommKind::AllToAll:
      check(MPI_Ialltoall(a.send.data(), count, MPI_FLOAT, a.recv.data(), count, MPI_FLOAT, groups_.group(shape.group),
                          &request));
      break;
    case CommKind::Broadcast: {
      // The root (the group's first rank) sends its send buffer; the others receive.
      const MPI_Comm comm = groups_.group(shape.group);
      int position = 0;
      check(MPI_Comm_rank(comm, &position));
      float* data = position == 0 ? a.send.data() : a.recv.data();
      check(MPI_Ibcast(data, count, MPI_FLOAT, 0, comm, &request));
      break;
    }
  }
  requests_.push_back(request);
  active_.push_back(std::move(a));
}

std::vector<Completion> MpiCommEngine::poll() {
  std::vector<Completion> done;
  const std::vector<int> indices = completed_requests(requests_);
  if (indices.empty()) return done;
  const double now = clock_.now_s();
  for (const int i : indices) {
    auto& a = active_[static_cast<std::size_t>(i)];
    done.push_back({a.id, now});
    if (!a.send.empty()) send_pool_.emplace(a.send.size(), std::move(a.send));
    if (!a.recv.empty()) recv_pool_.emplace(a.recv.size(), std::move(a.recv));
  }
  // Drop the finished slots (their requests are MPI_REQUEST_NULL now), keeping order.
  std::size_t kept = 0;
  for (std::size_t i = 0, next = 0; i < requests_.size(); ++i) {
    if (next < indices.size() && static_cast<std::size_t>(indices[next]) == i) {
      ++next;
      continue;
    }
    if (kept != i) {  // a vector moved onto itself would drop its buffer under MPI's feet
      requests_[kept] = requests_[i];
      active_[kept] = std::move(active_[i]);
    }
    ++kept;
  }
  requests_.resize(kept);
  active_.resize(kept);
  return done;
}

}  // namespace eppsim::runtime
