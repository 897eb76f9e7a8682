#include "runtime/cuda/nccl_bench.h"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "runtime/cuda/nccl_util.h"
#include "runtime/mpi/mpi_wait.h"

namespace eppsim::runtime {
namespace {

// Device memory freed on scope exit.
struct DeviceBuffer {
  explicit DeviceBuffer(std::size_t elements) {
    if (elements > 0) check_cuda(cudaMalloc(&data, elements * sizeof(float)), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* data = nullptr;
};

}  // namespace

void nccl_bench_setup() { select_local_gpu(); }

BenchPoint measure_nccl(BenchOp op, MPI_Comm comm, std::uint64_t bytes, int iterations, int warmup) {
  int me = 0, n = 0;
  check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &n), "MPI_Comm_size");
  const CommShape shape = bench_shape(op, bytes, static_cast<std::uint32_t>(n));
  const std::vector<float> send = bench_send_buffer(shape, static_cast<std::uint32_t>(me));
  DeviceBuffer d_send(send.size()), d_recv(shape.recv_elements);
  if (!send.empty()) {
    check_cuda(cudaMemcpy(d_send.data, send.data(), send.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ncclComm_t nccl = make_nccl_comm(comm, "the benchmark's NCCL communicator");
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, end = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&end), "cudaEventCreate");
  const std::size_t count = shape.count;
  const std::string what = fmt::format("{} of {} bytes", bench_op_name(op), bytes);
  auto call = [&] {
    switch (op) {
      case BenchOp::SendRecv:
        if (me == 0) check_nccl(ncclSend(d_send.data, count, ncclFloat, 1, nccl, stream), what);
        if (me == 1) check_nccl(ncclRecv(d_recv.data, count, ncclFloat, 0, nccl, stream), what);
        break;
      case BenchOp::AllReduce:
        check_nccl(ncclAllReduce(d_send.data, d_recv.data, count, ncclFloat, ncclSum, nccl, stream), what);
        break;
      case BenchOp::AllGather:
        check_nccl(ncclAllGather(d_send.data, d_recv.data, count, ncclFloat, nccl, stream), what);
        break;
      case BenchOp::ReduceScatter:
        check_nccl(ncclReduceScatter(d_send.data, d_recv.data, count, ncclFloat, ncclSum, nccl, stream), what);
        break;
      case BenchOp::AllToAll:
        check_nccl(ncclGroupStart(), what);
        for (int p = 0; p < n; ++p) {
          check_nccl(ncclSend(d_send.data + p * count, count, ncclFloat, p, nccl, stream), what);
          check_nccl(ncclRecv(d_recv.data + p * count, count, ncclFloat, p, nccl, stream), what);
        }
        check_nccl(ncclGroupEnd(), what);
        break;
    }
  };
  for (int i = 0; i < warmup; ++i) call();
  check_cuda(cudaStreamSynchronize(stream), what);
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  check_cuda(cudaEventRecord(start, stream), what);
  for (int i = 0; i < iterations; ++i) call();
  check_cuda(cudaEventRecord(end, stream), what);
  check_cuda(cudaEventSynchronize(end), what);
  float ms = 0.0f;
  check_cuda(cudaEventElapsedTime(&ms, start, end), what);
  std::vector<float> received(shape.recv_elements);
  if (!received.empty()) {
    check_cuda(cudaMemcpy(received.data(), d_recv.data, received.size() * sizeof(float), cudaMemcpyDeviceToHost), what);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  cudaStreamDestroy(stream);
  ncclCommDestroy(nccl);
  const bool correct = bench_received_correctly(op, shape, static_cast<std::uint32_t>(me), static_cast<std::uint32_t>(n), received);
  return {static_cast<double>(ms) * 1e-3 / iterations, correct};
}

std::string nccl_device_name() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  return properties.name;
}

}  // namespace eppsim::runtime
