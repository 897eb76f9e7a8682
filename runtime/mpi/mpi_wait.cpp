#include "runtime/mpi/mpi_wait.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "runtime/fault_signals.h"

namespace eppsim::runtime {

void check_mpi(int rc, std::string_view what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(fmt::format("MPI: {}: {}", what, std::string_view(text, static_cast<std::size_t>(length))));
}

void wait_all(std::span<MPI_Request> requests, double timeout_s, std::string_view what) {
  const auto start = std::chrono::steady_clock::now();
  for (long spins = 0;; ++spins) {
    int done = 0;
    check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE), what);
    if (done) return;
    const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited_s > timeout_s) throw MpiTimeout(fmt::format("{}: no answer within {} s", what, timeout_s));
    if (termination_signal() != 0) throw_if_terminated(fmt::format("in {}", what));
    // Poll closely at first (ping-pongs), then back off so a long wait leaves the core to others.
    if (waited_s < 1e-3) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

std::vector<int> completed_requests(std::span<MPI_Request> requests) {
  std::vector<int> indices(requests.size());
  if (requests.empty()) return indices;
  int count = 0;
  check_mpi(MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count, indices.data(), MPI_STATUSES_IGNORE),
            "MPI_Testsome");
  indices.resize(count > 0 ? static_cast<std::size_t>(count) : 0);  // MPI_UNDEFINED: nothing active
  std::sort(indices.begin(), indices.end());
  return indices;
}

void barrier(MPI_Comm comm, double timeout_s, std::string_view what) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &request), what);
  wait_all(std::span<MPI_Request>(&request, 1), timeout_s, what);
}

}  // namespace eppsim::runtime
