#include "runtime/cuda/nccl_util.h"

#include <stdexcept>

#include <fmt/format.h>

#include "runtime/mpi/mpi_wait.h"

namespace eppsim::runtime {

void check_cuda(cudaError_t rc, std::string_view what) {
  if (rc != cudaSuccess) throw std::runtime_error(fmt::format("CUDA: {}: {}", what, cudaGetErrorString(rc)));
}

void check_nccl(ncclResult_t rc, std::string_view what) {
  if (rc != ncclSuccess) throw std::runtime_error(fmt::format("NCCL: {}: {}", what, ncclGetErrorString(rc)));
}

ncclComm_t make_nccl_comm(MPI_Comm comm, std::string_view what) {
  int position = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &position), what);
  check_mpi(MPI_Comm_size(comm, &size), what);
  ncclUniqueId id;
  if (position == 0) check_nccl(ncclGetUniqueId(&id), what);
  check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm), what);
  ncclComm_t nccl = nullptr;
  check_nccl(ncclCommInitRank(&nccl, size, id, position), what);
  return nccl;
}

int select_local_gpu() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    throw std::runtime_error("the cuda backend needs a GPU: cudaGetDeviceCount found none");
  }
  MPI_Comm local = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  int local_rank = 0;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  const int device = local_rank % devices;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  return device;
}

}  // namespace eppsim::runtime
