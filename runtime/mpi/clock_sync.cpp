#include "runtime/mpi/clock_sync.h"

#include <array>
#include <string>

#include <fmt/format.h>

#include "runtime/mpi/mpi_wait.h"
#include "base/proto_io.h"

namespace eppsim::runtime {

namespace {

constexpr int kPingTag = 1;
constexpr int kPongTag = 2;

}  // namespace

std::vector<double> measure_clock_offsets(MPI_Comm comm, const StepClock& clock, int rounds, double timeout_s) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::vector<double> offsets;
  if (rank == 0) offsets.assign(static_cast<std::size_t>(size), 0.0);
  for (int peer = 1; peer < size; ++peer) {
    if (rank != 0 && rank != peer) continue;
    std::vector<PingPong> exchanges;
    for (int k = 0; k < rounds; ++k) {
      std::array<MPI_Request, 2> requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      double ping = 0.0, pong = 0.0;
      if (rank == 0) {
        check_mpi(MPI_Irecv(&pong, 1, MPI_DOUBLE, peer, kPongTag, comm, &requests[1]), "clock ping-pong");
        const double sent = clock.now_s();
        check_mpi(MPI_Isend(&ping, 1, MPI_DOUBLE, peer, kPingTag, comm, &requests[0]), "clock ping-pong");
        wait_all(requests, timeout_s, fmt::format("rank 0: clock ping-pong with rank {}", peer));
        exchanges.push_back({sent, pong, clock.now_s()});
      } else {
        check_mpi(MPI_Irecv(&ping, 1, MPI_DOUBLE, 0, kPingTag, comm, &requests[0]), "clock ping-pong");
        wait_all(std::span(requests).first(1), timeout_s, fmt::format("rank {}: clock ping-pong with rank 0", rank));
        pong = clock.now_s();
        check_mpi(MPI_Isend(&pong, 1, MPI_DOUBLE, 0, kPongTag, comm, &requests[1]), "clock ping-pong");
        wait_all(std::span(requests).last(1), timeout_s, fmt::format("rank {}: clock ping-pong with rank 0", rank));
      }
    }
    if (rank == 0) offsets[static_cast<std::size_t>(peer)] = estimate_clock_offset(exchanges);
  }
  return offsets;
}

std::vector<RankSpan> gather_spans(MPI_Comm comm, RankSpan mine, double timeout_s) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const std::array<double, 2> send{mine.start_s, mine.end_s};
  std::vector<double> all(rank == 0 ? 2 * static_cast<std::size_t>(size) : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Igather(send.data(), 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, comm, &request), "gathering step spans");
  wait_all(std::span(&request, 1), timeout_s, fmt::format("rank {}: gathering step times", rank));
  std::vector<RankSpan> spans;
  for (std::size_t r = 0; r < all.size() / 2; ++r) spans.push_back({all[2 * r], all[2 * r + 1]});
  return spans;
}

std::vector<proto::Trace> gather_traces(MPI_Comm comm, const proto::Trace& mine, double timeout_s) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const std::string bytes = to_binary(mine);
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX)) {
    throw std::runtime_error(fmt::format("rank {}: its trace is {} bytes, more than one MPI message carries", rank, bytes.size()));
  }
  const int length = static_cast<int>(bytes.size());
  std::vector<int> lengths(rank == 0 ? static_cast<std::size_t>(size) : 0);
  const std::string what = fmt::format("rank {}: gathering traces on rank 0", rank);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm, &request), what);
  wait_all(std::span(&request, 1), timeout_s, what);
  std::vector<int> displacements(lengths.size(), 0);
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    displacements[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[r]);
  }
  if (total > static_cast<std::size_t>(INT32_MAX)) throw std::runtime_error("gathering traces: more than 2 GiB of traces");
  std::string all(total, '\0');
  check_mpi(MPI_Igatherv(bytes.data(), length, MPI_BYTE, all.data(), lengths.data(), displacements.data(), MPI_BYTE, 0, comm,
                         &request),
            what);
  wait_all(std::span(&request, 1), timeout_s, what);
  std::vector<proto::Trace> traces(lengths.size());
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    from_binary(std::string_view(all).substr(static_cast<std::size_t>(displacements[r]), static_cast<std::size_t>(lengths[r])),
                &traces[r], fmt::format("the trace of rank {}", r));
  }
  return traces;
}

}  // namespace eppsim::runtime
