#pragma once
// Waiting on MPI requests without hanging forever: every blocking step of the
// runtime outside the executor's loop (barriers, trace gathering, clock
// ping-pongs) polls its requests until they complete or a timeout passes, so a
// rank that died or hangs ends the run instead of stalling it (issue 11, item 8).
#include <mpi.h>

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace eppsim::runtime {

class MpiTimeout : public std::runtime_error {
 public:
  explicit MpiTimeout(const std::string& message) : std::runtime_error(message) {}
};

// Throws std::runtime_error "MPI: <what>: <MPI's error string>" unless rc is MPI_SUCCESS.
void check_mpi(int rc, std::string_view what);

// Completes every request or throws MpiTimeout "<what>: no answer within T s"
// (or Terminated, runtime/fault_signals.h, when the process is told to end).
// Yields the core between polls.
void wait_all(std::span<MPI_Request> requests, double timeout_s, std::string_view what);

// The requests that completed (MPI_Testsome, without waiting), their indices
// ascending; each is then MPI_REQUEST_NULL.
std::vector<int> completed_requests(std::span<MPI_Request> requests);

// MPI_Ibarrier on `comm`, waited with wait_all.
void barrier(MPI_Comm comm, double timeout_s, std::string_view what);

}  // namespace eppsim::runtime
