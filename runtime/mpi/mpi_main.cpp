#include "runtime/mpi/mpi_main.h"

#include <mpi.h>

#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "base/errors.h"

namespace eppsim::runtime {

int run_under_mpi(std::string_view name, int argc, char** argv, const std::function<int(int rank, int size)>& body) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    status = body(rank, size);
  } catch (const InputError& e) {
    status = 2;
    if (rank == 0) fmt::print(stderr, "{}: error: {}\n", name, e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: rank {}: error: {}\n", name, rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}

}  // namespace eppsim::runtime
