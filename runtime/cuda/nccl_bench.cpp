#include "runtime/cuda/nccl_bench.h"

#include <algorithm>
#include <memory>
#include <string>
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

// One call of `op` enqueued on `stream` by the rank at `me` of `n` (send-recv: position 0 to 1).
void enqueue_op(CommKind op, int me, int n, std::size_t count, const float* send, float* recv, ncclComm_t nccl,
                cudaStream_t stream, const std::string& what) {
  switch (op) {
    case CommKind::SendRecv:
      if (me == 0) check_nccl(ncclSend(send, count, ncclFloat, 1, nccl, stream), what);
      if (me == 1) check_nccl(ncclRecv(recv, count, ncclFloat, 0, nccl, stream), what);
      break;
    case CommKind::AllReduce:
      check_nccl(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, nccl, stream), what);
      break;
    case CommKind::AllGather:
      check_nccl(ncclAllGather(send, recv, count, ncclFloat, nccl, stream), what);
      break;
    case CommKind::ReduceScatter:
      check_nccl(ncclReduceScatter(send, recv, count, ncclFloat, ncclSum, nccl, stream), what);
      break;
    case CommKind::AllToAll:
      check_nccl(ncclGroupStart(), what);
      for (int p = 0; p < n; ++p) {
        check_nccl(ncclSend(send + p * count, count, ncclFloat, p, nccl, stream), what);
        check_nccl(ncclRecv(recv + p * count, count, ncclFloat, p, nccl, stream), what);
      }
      check_nccl(ncclGroupEnd(), what);
      break;
    case CommKind::Broadcast:  // from position 0 (out of place: every rank's receive buffer gets it)
      check_nccl(ncclBroadcast(send, recv, count, ncclFloat, 0, nccl, stream), what);
      break;
  }
}

// The benchmark's buffers on this rank's GPU, an NCCL communicator over `comm`,
// a stream and two events: what measure_nccl and the NCCL window share.
struct NcclPoint {
  NcclPoint(CommKind bench_op, MPI_Comm comm, std::uint64_t bytes)
      : op(bench_op), what(fmt::format("{} of {} bytes", comm_kind_name(bench_op), bytes)) {
    check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &n), "MPI_Comm_size");
    shape = bench_shape(op, bytes, static_cast<std::uint32_t>(n));
    const std::vector<float> send = bench_send_buffer(shape, static_cast<std::uint32_t>(me));
    d_send = std::make_unique<DeviceBuffer>(send.size());
    d_recv = std::make_unique<DeviceBuffer>(shape.recv_elements);
    if (!send.empty()) {
      check_cuda(cudaMemcpy(d_send->data, send.data(), send.size() * sizeof(float), cudaMemcpyHostToDevice),
                 "cudaMemcpy");
    }
    nccl = make_nccl_comm(comm, "the benchmark's NCCL communicator");
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&end), "cudaEventCreate");
  }
  ~NcclPoint() {
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    cudaStreamDestroy(stream);
    ncclCommDestroy(nccl);
  }
  NcclPoint(const NcclPoint&) = delete;
  NcclPoint& operator=(const NcclPoint&) = delete;

  void call() { enqueue_op(op, me, n, shape.count, d_send->data, d_recv->data, nccl, stream, what); }
  // `calls` calls between the start and end events.
  void enqueue_timed(int calls) {
    check_cuda(cudaEventRecord(start, stream), what);
    for (int i = 0; i < calls; ++i) call();
    check_cuda(cudaEventRecord(end, stream), what);
  }
  double elapsed_s() const {
    float ms = 0.0f;
    check_cuda(cudaEventElapsedTime(&ms, start, end), what);
    return static_cast<double>(ms) * 1e-3;
  }
  bool received_correctly() const {
    std::vector<float> received(shape.recv_elements);
    if (!received.empty()) {
      check_cuda(cudaMemcpy(received.data(), d_recv->data, received.size() * sizeof(float), cudaMemcpyDeviceToHost),
                 what);
    }
    return bench_received_correctly(op, shape, static_cast<std::uint32_t>(me), static_cast<std::uint32_t>(n), received);
  }

  CommKind op;
  std::string what;
  int me = 0, n = 0;
  CommShape shape;
  std::unique_ptr<DeviceBuffer> d_send, d_recv;
  ncclComm_t nccl = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, end = nullptr;
};

// The cuda backend's window: all the calls enqueued at once on the point's own
// stream between its events. Its end on the step clock is the host time of
// the enqueue plus the events' elapsed time, never later than the poll that
// saw the end event complete (as NcclCommEngine times its ops).
class NcclWindow final : public CommWindow {
 public:
  NcclWindow(CommKind op, MPI_Comm comm, std::uint64_t bytes, const StepClock& clock) : point_(op, comm, bytes), clock_(clock) {}

  double min_call_s() const override { return 0.0; }

  void start(int calls) override {
    start_s_ = clock_.now_s();
    point_.enqueue_timed(calls);
  }

  std::optional<WindowSpan> poll() override {
    const cudaError_t rc = cudaEventQuery(point_.end);
    if (rc == cudaErrorNotReady) return std::nullopt;
    check_cuda(rc, point_.what);
    const double seen_s = clock_.now_s(), length_s = point_.elapsed_s();
    return WindowSpan{std::min(seen_s, start_s_ + length_s), length_s};
  }

  bool received_correctly() override { return point_.received_correctly(); }

 private:
  NcclPoint point_;
  const StepClock& clock_;
  double start_s_ = 0.0;
};

}  // namespace

int nccl_bench_setup() { return select_local_gpu(); }

BenchPoint measure_nccl(CommKind op, MPI_Comm comm, std::uint64_t bytes, int iterations, int warmup) {
  NcclPoint point(op, comm, bytes);
  for (int i = 0; i < warmup; ++i) point.call();
  check_cuda(cudaStreamSynchronize(point.stream), point.what);
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  point.enqueue_timed(iterations);
  check_cuda(cudaEventSynchronize(point.end), point.what);
  return {point.elapsed_s() / iterations, point.received_correctly()};
}

std::unique_ptr<CommWindow> make_nccl_window(CommKind op, MPI_Comm comm, std::uint64_t bytes, const StepClock& clock) {
  return std::make_unique<NcclWindow>(op, comm, bytes, clock);
}

std::string nccl_device_name() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  return properties.name;
}

}  // namespace eppsim::runtime
