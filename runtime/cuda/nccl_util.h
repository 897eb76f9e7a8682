#pragma once
// What the NCCL engine and the NCCL benchmark share: error checks, the GPU of
// this rank, and NCCL communicators bootstrapped through MPI (the first rank
// of the MPI communicator makes the unique id, MPI_Bcast, ncclCommInitRank).
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <string_view>

namespace eppsim::runtime {

// Throw std::runtime_error "CUDA: <what>: <error>" / "NCCL: <what>: <error>".
void check_cuda(cudaError_t rc, std::string_view what);
void check_nccl(ncclResult_t rc, std::string_view what);

// Selects the GPU of this rank's local rank (MPI_Comm_split_type SHARED, modulo
// the GPUs present) and returns its index; std::runtime_error when there is
// none. Collective over the world.
int select_local_gpu();

// An NCCL communicator over the members of `comm`, in its rank order.
// Collective over `comm`.
ncclComm_t make_nccl_comm(MPI_Comm comm, std::string_view what);

}  // namespace eppsim::runtime
