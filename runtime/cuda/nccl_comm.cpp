#include "runtime/cuda/nccl_comm.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/cuda/nccl_util.h"
#include "runtime/mpi/mpi_wait.h"

namespace eppsim::runtime {
struct NcclCommEngine::State {
  struct Active {
    ActivityId id;
    cudaEvent_t end;
    float* send;
    std::size_t send_elements;
    float* recv;
    std::size_t recv_elements;
  };

  State(const proto::Schedule& s, const MpiGroups& g, const StepClock& c)
      : schedule(s), mpi_groups(g), clock(c), sizes(group_sizes(s)) {}

  float* take(std::multimap<std::size_t, float*>& pool, std::size_t elements) {
    if (elements == 0) return nullptr;
    const auto it = pool.find(elements);
    if (it != pool.end()) {
      float* p = it->second;
      pool.erase(it);
      return p;
    }
    float* p = nullptr;
    check_cuda(cudaMalloc(&p, elements * sizeof(float)), "cudaMalloc");
    check_cuda(cudaMemset(p, 0, elements * sizeof(float)), "cudaMemset");
    return p;
  }

  cudaStream_t stream(std::uint32_t index) {
    if (index >= streams.size()) streams.resize(index + 1, nullptr);
    if (!streams[index]) check_cuda(cudaStreamCreateWithFlags(&streams[index], cudaStreamNonBlocking), "cudaStreamCreate");
    return streams[index];
  }

  const proto::Schedule& schedule;
  const MpiGroups& mpi_groups;  // the world ranks of the Schedule's
  const StepClock& clock;
  std::vector<std::uint32_t> sizes;
  ncclComm_t world = nullptr;
  std::vector<ncclComm_t> groups;  // by group id; nullptr where this rank is not a member
  std::vector<cudaStream_t> streams;  // per Schedule stream
  cudaStream_t reference_stream = nullptr;
  cudaEvent_t reference = nullptr;  // recorded on an idle stream when the engine was idle
  double reference_s = 0.0;         // the step-clock time it was recorded at
  std::vector<Active> active;
  std::multimap<std::size_t, float*> send_pool, recv_pool;
};

NcclCommEngine::NcclCommEngine(const proto::Schedule& schedule, const MpiGroups& groups, const StepClock& clock)
    : state_(std::make_unique<State>(schedule, groups, clock)) {
  select_local_gpu();
  auto& s = *state_;
  check_cuda(cudaStreamCreateWithFlags(&s.reference_stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaEventCreate(&s.reference), "cudaEventCreate");
  s.world = make_nccl_comm(groups.point_to_point(), "NCCL communicator for point-to-point traffic");
  s.groups.assign(static_cast<std::size_t>(schedule.groups_size()), nullptr);
  for (const std::uint32_t g : groups_of_rank(schedule, groups.schedule_rank())) {
    s.groups[g] = make_nccl_comm(groups.group(g), fmt::format("NCCL communicator for group {}", g));
  }
}

NcclCommEngine::~NcclCommEngine() {
  auto& s = *state_;
  // With operations in flight (a failed run), abort them; else a clean destroy.
  const auto release = [&](ncclComm_t c) { s.active.empty() ? ncclCommDestroy(c) : ncclCommAbort(c); };
  for (auto* c : s.groups) {
    if (c) release(c);
  }
  if (s.world) release(s.world);
  for (auto& a : s.active) {
    cudaEventDestroy(a.end);
    cudaFree(a.send);
    cudaFree(a.recv);
  }
  for (auto& [size, p] : s.send_pool) cudaFree(p);
  for (auto& [size, p] : s.recv_pool) cudaFree(p);
  for (auto* stream : s.streams) {
    if (stream) cudaStreamDestroy(stream);
  }
  if (s.reference) cudaEventDestroy(s.reference);
  if (s.reference_stream) cudaStreamDestroy(s.reference_stream);
}

std::size_t NcclCommEngine::in_flight() const { return state_->active.size(); }

void NcclCommEngine::start(ActivityId id, OpRef ref) {
  auto& s = *state_;
  const OpView op = ops_of(s.schedule, ref.rank)[ref.op];
  const CommShape shape = comm_shape(op, s.sizes);
  // The op's description for errors (NCCL ops are large: formatting it costs nothing in comparison).
  const std::string what = describe_op(s.schedule, ref);
  if (s.active.empty()) {
    // Idle: a fresh reference maps event times onto the step clock (which restarts between steps).
    check_cuda(cudaEventRecord(s.reference, s.reference_stream), what);
    check_cuda(cudaEventSynchronize(s.reference), what);
    s.reference_s = s.clock.now_s();
  }
  State::Active a{id, nullptr, s.take(s.send_pool, shape.send_elements), shape.send_elements,
                  s.take(s.recv_pool, shape.recv_elements), shape.recv_elements};
  check_cuda(cudaEventCreate(&a.end), what);
  const cudaStream_t stream = s.stream(op.stream());
  const std::size_t count = shape.count;
  const int peer = shape.kind == CommKind::SendRecv ? s.mpi_groups.world_rank(shape.peer) : 0;
  switch (shape.kind) {
    case CommKind::SendRecv:
      if (shape.sends) {
        check_nccl(ncclSend(a.send, count, ncclFloat, peer, s.world, stream), what);
      } else {
        check_nccl(ncclRecv(a.recv, count, ncclFloat, peer, s.world, stream), what);
      }
      break;
    case CommKind::AllReduce:
      check_nccl(ncclAllReduce(a.send, a.recv, count, ncclFloat, ncclSum, s.groups.at(shape.group), stream), what);
      break;
    case CommKind::AllGather:
      check_nccl(ncclAllGather(a.send, a.recv, count, ncclFloat, s.groups.at(shape.group), stream), what);
      break;
    case CommKind::ReduceScatter:
      check_nccl(ncclReduceScatter(a.send, a.recv, count, ncclFloat, ncclSum, s.groups.at(shape.group), stream), what);
      break;
    case CommKind::AllToAll: {
      ncclComm_t comm = s.groups.at(shape.group);
      check_nccl(ncclGroupStart(), what);
      for (std::uint32_t p = 0; p < shape.group_size; ++p) {
        check_nccl(ncclSend(a.send + p * count, count, ncclFloat, static_cast<int>(p), comm, stream), what);
        check_nccl(ncclRecv(a.recv + p * count, count, ncclFloat, static_cast<int>(p), comm, stream), what);
      }
      check_nccl(ncclGroupEnd(), what);
      break;
    }
    case CommKind::Broadcast:
      check_nccl(ncclBroadcast(a.send, a.recv, count, ncclFloat, 0, s.groups.at(shape.group), stream), what);
      break;
  }
  check_cuda(cudaEventRecord(a.end, stream), what);
  s.active.push_back(a);
}

std::vector<Completion> NcclCommEngine::poll() {
  auto& s = *state_;
  std::vector<Completion> done;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < s.active.size(); ++i) {
    auto& a = s.active[i];
    const cudaError_t status = cudaEventQuery(a.end);
    if (status == cudaErrorNotReady) {
      s.active[kept++] = a;
      continue;
    }
    check_cuda(status, "cudaEventQuery");
    float ms = 0.0f;
    check_cuda(cudaEventElapsedTime(&ms, s.reference, a.end), "cudaEventElapsedTime");
    done.push_back({a.id, std::min(s.clock.now_s(), s.reference_s + ms * 1e-3)});
    cudaEventDestroy(a.end);
    if (a.send) s.send_pool.emplace(a.send_elements, a.send);
    if (a.recv) s.recv_pool.emplace(a.recv_elements, a.recv);
  }
  s.active.resize(kept);
  std::stable_sort(done.begin(), done.end(), [](const Completion& a, const Completion& b) { return a.end_s < b.end_s; });
  return done;
}

}  // namespace eppsim::runtime
