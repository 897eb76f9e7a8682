#include "runtime/bench/comm_measure.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "base/errors.h"
#include "runtime/mpi/mpi_wait.h"
#ifdef EPPSIM_WITH_NCCL
#include "runtime/cuda/nccl_bench.h"
#endif

namespace eppsim::runtime {
namespace {

// One (op, group, size) point with MPI on the members of `comm`.
BenchPoint measure_mpi(CommKind op, MPI_Comm comm, std::uint64_t bytes, int iterations, int warmup) {
  int me = 0, n = 0;
  check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &n), "MPI_Comm_size");
  const CommShape shape = bench_shape(op, bytes, static_cast<std::uint32_t>(n));
  if (std::max({shape.count, shape.send_elements, shape.recv_elements}) > static_cast<std::uint64_t>(INT32_MAX)) {
    throw InputError(fmt::format("eppsim-bench: --bytes: {} is more than one MPI call moves", bytes));
  }
  std::vector<float> send = bench_send_buffer(shape, static_cast<std::uint32_t>(me));
  std::vector<float> recv(shape.recv_elements, -1.0f);
  const int count = static_cast<int>(shape.count);
  auto call = [&] {
    switch (op) {
      case CommKind::SendRecv:
        if (me == 0) check_mpi(MPI_Send(send.data(), count, MPI_FLOAT, 1, 0, comm), "MPI_Send");
        if (me == 1) check_mpi(MPI_Recv(recv.data(), count, MPI_FLOAT, 0, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv");
        break;
      case CommKind::AllReduce:
        check_mpi(MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, comm), "MPI_Allreduce");
        break;
      case CommKind::AllGather:
        check_mpi(MPI_Allgather(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, comm), "MPI_Allgather");
        break;
      case CommKind::ReduceScatter:
        check_mpi(MPI_Reduce_scatter_block(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, comm),
                  "MPI_Reduce_scatter_block");
        break;
      case CommKind::AllToAll:
        check_mpi(MPI_Alltoall(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, comm), "MPI_Alltoall");
        break;
      case CommKind::Broadcast:  // from position 0's send buffer into the others' receive buffers
        check_mpi(MPI_Bcast(me == 0 ? send.data() : recv.data(), count, MPI_FLOAT, 0, comm), "MPI_Bcast");
        break;
    }
  };
  for (int i = 0; i < warmup; ++i) call();
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) call();
  const double mean_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
  const bool correct = bench_received_correctly(op, shape, static_cast<std::uint32_t>(me), static_cast<std::uint32_t>(n), recv);
  return {mean_s, correct};
}

}  // namespace

BenchPoint measure_comm(const std::string& backend, CommKind op, MPI_Comm comm, std::uint64_t bytes, int iterations,
                        int warmup) {
#ifdef EPPSIM_WITH_NCCL
  if (backend == "cuda") return measure_nccl(op, comm, bytes, iterations, warmup);
#else
  (void)backend;
#endif
  return measure_mpi(op, comm, bytes, iterations, warmup);
}

bool group_crosses_nodes(MPI_Comm comm) {
  int n = 0;
  check_mpi(MPI_Comm_size(comm, &n), "MPI_Comm_size");
  MPI_Comm local = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  int local_size = 0;
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  int crosses = local_size < n ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &crosses, 1, MPI_INT, MPI_LOR, comm), "MPI_Allreduce");
  return crosses != 0;
}

}  // namespace eppsim::runtime
