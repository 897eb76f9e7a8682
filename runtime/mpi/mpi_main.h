#pragma once
// The frame of an MPI subcommand (eppsim-bench comm, eppsim-bench
// interference): MPI_Init_thread (funneled: compute workers never call MPI),
// the body, MPI_Finalize. Bad input (InputError) is exit status 2, printed by
// rank 0 only, since every rank sees the same options; any other error is
// printed with the rank and ends every rank through MPI_Abort.
#include <functional>
#include <string_view>

namespace eppsim::runtime {

// `body(rank, size)` returns the exit status. `name` starts the messages.
int run_under_mpi(std::string_view name, int argc, char** argv, const std::function<int(int rank, int size)>& body);

}  // namespace eppsim::runtime
