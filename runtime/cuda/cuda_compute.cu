#include "runtime/cuda/cuda_compute.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/errors.h"
#include "runtime/attention_batch.h"
#include "runtime/attention_blocks.h"
#include "runtime/cuda/cuda_attention.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_gemm.h"
#ifdef EPPSIM_WITH_CUDNN
#include "runtime/cuda/cudnn_attention.h"
#endif

namespace eppsim::runtime {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kThreads = 256;

// The fixed input pattern of runtime/cpu/cpu_kernels.h: values in [-0.25, 0.25).
template <typename T>
__global__ void fill_pattern(T* data, std::uint64_t count) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint32_t bits = static_cast<std::uint32_t>(i * 2654435761u) >> 20;
    data[i] = static_cast<T>((static_cast<float>(bits) / 4096.0f - 0.5f) * 0.5f);
  }
}

// A device buffer that only grows; new storage is filled with the pattern.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }
  T* ensure(std::uint64_t count, cudaStream_t stream) {
    if (count > count_) {
      check(cudaFree(data_), "cudaFree");  // synchronises: no op still uses it
      data_ = nullptr;
      count_ = 0;
      check(cudaMalloc(&data_, count * sizeof(T)), "cudaMalloc");
      count_ = count;
      const std::uint64_t blocks = std::min<std::uint64_t>((count + kThreads - 1) / kThreads, 65535);
      fill_pattern<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(data_, count);
      check(cudaGetLastError(), "fill_pattern");
    }
    return data_;
  }

 private:
  T* data_ = nullptr;
  std::uint64_t count_ = 0;
};

// One schedule stream: its CUDA stream, cuBLAS handle and buffers.
struct StreamState {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  DeviceBuffer<bf16> a, b, c;                        // GEMM
  DeviceBuffer<bf16> q, k, v, o, d_o, dq, dk, dv;    // attention
  DeviceBuffer<bf16> k_heads, v_heads, dk_heads, dv_heads;  // per query head, when grouped
  DeviceBuffer<float> scores, prob_grads;            // one query block, fp32
  DeviceBuffer<bf16> probabilities;                  // and its probabilities (or dS)
  DeviceBuffer<float> x, y;                          // element-wise stream
#ifdef EPPSIM_WITH_CUDNN
  DeviceBuffer<float> stats;                         // flash attention's softmax statistics
  std::unique_ptr<CudnnAttention> flash;             // made at the first flash attention
#endif

  StreamState() {
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cublasCreate(&blas), "cublasCreate");
    check(cublasSetStream(blas, stream), "cublasSetStream");
  }
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;
  ~StreamState() {
#ifdef EPPSIM_WITH_CUDNN
    flash.reset();  // its handle and buffers, before the stream it is bound to
#endif
    cublasDestroy(blas);
    cudaStreamDestroy(stream);
  }
};

class CudaComputeQueue final : public ComputeQueue {
 public:
  CudaComputeQueue(const StepClock& clock, const CudaComputeOptions& options) : clock_(clock), options_(options) {
    check(cudaSetDevice(options.device), "cudaSetDevice");
    check(cudaEventCreate(&anchor_), "cudaEventCreate");
    reanchor();
  }

  ~CudaComputeQueue() override {
    cudaDeviceSynchronize();
    for (const Op& op : in_flight_ops_) {
      cudaEventDestroy(op.start);
      cudaEventDestroy(op.end);
    }
    for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
    cudaEventDestroy(anchor_);
  }

  void submit(ActivityId id, std::uint32_t stream, const KernelPlan& plan) override {
    // Event times are float milliseconds since the anchor: re-anchored
    // whenever the queue is idle, so they keep microsecond resolution.
    if (in_flight_ops_.empty()) reanchor();
    StreamState& s = stream_state(stream);
    Op op{id, event(), event()};
    check(cudaEventRecord(op.start, s.stream), "cudaEventRecord");
    for (const GemmShape& g : plan.gemms) run_gemm(s, g);
    if (options_.attention == CudaAttention::Flash) {
      run_flash_attention(s, plan.attention, plan.pass);
    } else {
      for (const AttentionShape& a : plan.attention) run_attention(s, a, plan.pass);
    }
    run_elementwise(s, plan.elementwise_bytes);
    check(cudaEventRecord(op.end, s.stream), "cudaEventRecord");
    in_flight_ops_.push_back(op);
  }

  std::vector<Completion> poll() override {
    collect();
    std::vector<Completion> done(finished_.begin(), finished_.end());
    finished_.clear();
    return done;
  }

  void wait(double timeout_s) override {
    const auto start = std::chrono::steady_clock::now();
    while (true) {
      collect();
      if (!finished_.empty() || (in_flight_ops_.empty() && timeout_s < 0.0)) return;
      if (timeout_s >= 0.0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= timeout_s)
        return;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  std::size_t in_flight() const override { return in_flight_ops_.size() + finished_.size(); }

 private:
  struct Op {
    ActivityId id;
    cudaEvent_t start, end;
  };

  // The anchor event, recorded and waited for on an idle device, and when.
  void reanchor() {
    check(cudaEventRecord(anchor_, nullptr), "cudaEventRecord");
    check(cudaEventSynchronize(anchor_), "cudaEventSynchronize");
    anchor_time_ = std::chrono::steady_clock::now();
  }

  StreamState& stream_state(std::uint32_t stream) {
    auto it = streams_.find(stream);
    if (it == streams_.end()) it = streams_.try_emplace(stream).first;
    return it->second;
  }

  cudaEvent_t event() {
    if (!free_events_.empty()) {
      cudaEvent_t e = free_events_.back();
      free_events_.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), "cudaEventCreate");
    return e;
  }

  // Moves the ops whose end event has happened to finished_, in end order,
  // with their end mapped onto the StepClock.
  void collect() {
    std::vector<Completion> ended;
    for (auto it = in_flight_ops_.begin(); it != in_flight_ops_.end();) {
      const cudaError_t status = cudaEventQuery(it->end);
      if (status == cudaErrorNotReady) {
        ++it;
        continue;
      }
      check(status, "cudaEventQuery");
      float since_anchor_ms = 0.0f;
      check(cudaEventElapsedTime(&since_anchor_ms, anchor_, it->end), "cudaEventElapsedTime");
      const auto end_time = anchor_time_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double, std::milli>(since_anchor_ms));
      const double end_s =
          clock_.now_s() - std::chrono::duration<double>(std::chrono::steady_clock::now() - end_time).count();
      ended.push_back(Completion{it->id, end_s});
      free_events_.push_back(it->start);
      free_events_.push_back(it->end);
      it = in_flight_ops_.erase(it);
    }
    std::stable_sort(ended.begin(), ended.end(), [](const Completion& a, const Completion& b) { return a.end_s < b.end_s; });
    finished_.insert(finished_.end(), ended.begin(), ended.end());
  }

  // The reduction dimension is rounded up to a multiple of 8 (and every row
  // starts 16-byte aligned), as frameworks pad a packed micro-batch: a weight
  // gradient reduces over the micro-batch's tokens, and at an odd count
  // cuBLAS's tensor-core kernels do not run (on an H100, qkv_wgrad took 0.27 ms
  // at 2,873 tokens, 0.043 ms rounded to 2,880, 0.047 ms at 3,072).
  void run_gemm(StreamState& s, const GemmShape& g) {
    if (g.m == 0 || g.n == 0 || g.k == 0) return;
    const std::uint64_t k_padded = aligned_ld(g.k), ld_b = aligned_ld(g.n);
    const int m = blas_int(g.m, "gemm"), n = blas_int(g.n, "gemm"), k = blas_int(k_padded, "gemm");
    const bf16* a = s.a.ensure(g.m * k_padded, s.stream);
    const bf16* b = s.b.ensure(k_padded * ld_b, s.stream);
    bf16* c = s.c.ensure(g.m * ld_b, s.stream);
    const int ldb = blas_int(ld_b, "gemm");
    for (std::uint32_t i = 0; i < g.count; ++i)
      gemm_rm(s.blas, false, false, m, n, k, 1.0f, a, k, b, ldb, 0.0f, c, CUDA_R_16BF, ldb);
  }

  void run_attention(StreamState& s, const AttentionShape& a, Pass pass) {
    if (a.tokens == 0) return;
    // fp32 scores and their gradients, bf16 probabilities.
    const AttentionBlock block = attention_block(a, options_.attention_block_bytes, 4 + 4 + 2);
    const std::uint64_t scores = cuda_attention_score_elements(a, block);
    const std::uint64_t head_copies = cuda_attention_head_elements(a);
    const std::uint64_t queries = a.tokens * a.heads * std::uint64_t{a.head_dim};
    const std::uint64_t keys = (a.context_tokens + a.tokens) * a.kv_heads * std::uint64_t{a.head_dim};
    CudaAttentionTensors t;
    t.q = s.q.ensure(queries, s.stream);
    t.k = s.k.ensure(keys, s.stream);
    t.v = s.v.ensure(keys, s.stream);
    t.scores = s.scores.ensure(scores, s.stream);
    t.probabilities = s.probabilities.ensure(scores, s.stream);
    if (head_copies > 0) {
      t.k_heads = s.k_heads.ensure(head_copies, s.stream);
      t.v_heads = s.v_heads.ensure(head_copies, s.stream);
    }
    if (pass == Pass::Backward) {
      if (head_copies > 0) {
        t.dk_heads = s.dk_heads.ensure(head_copies, s.stream);
        t.dv_heads = s.dv_heads.ensure(head_copies, s.stream);
      }
      t.d_o = s.d_o.ensure(queries, s.stream);
      t.dq = s.dq.ensure(queries, s.stream);
      t.dk = s.dk.ensure(keys, s.stream);
      t.dv = s.dv.ensure(keys, s.stream);
      t.prob_grads = s.prob_grads.ensure(scores, s.stream);
    } else {
      t.o = s.o.ensure(queries, s.stream);
    }
    for (std::uint32_t i = 0; i < a.count; ++i) cuda_attention(s.blas, s.stream, a, pass, block, t);
  }

  // The plan's sequences as ragged batches through cuDNN; the backward reads
  // O and the statistics from buffers a forward of the same shape fills.
  void run_flash_attention(StreamState& s, const std::vector<AttentionShape>& shapes, Pass pass) {
#ifdef EPPSIM_WITH_CUDNN
    if (shapes.empty()) return;
    if (!s.flash) s.flash = std::make_unique<CudnnAttention>(s.stream);
    for (const AttentionBatch& batch : attention_batches(shapes)) {
      CudnnAttentionTensors t;
      t.q = s.q.ensure(batch.query_elements(), s.stream);
      t.k = s.k.ensure(batch.key_elements(), s.stream);
      t.v = s.v.ensure(batch.key_elements(), s.stream);
      t.o = s.o.ensure(batch.query_elements(), s.stream);
      t.stats = s.stats.ensure(cudnn_attention_stats_elements(attention_graph_key(batch, pass)), s.stream);
      if (pass == Pass::Backward) {
        t.d_o = s.d_o.ensure(batch.query_elements(), s.stream);
        t.dq = s.dq.ensure(batch.query_elements(), s.stream);
        t.dk = s.dk.ensure(batch.key_elements(), s.stream);
        t.dv = s.dv.ensure(batch.key_elements(), s.stream);
      }
      s.flash->run(batch, pass, t);
    }
#else
    (void)s, (void)shapes, (void)pass;
    throw std::logic_error("CUDA queue: flash attention in a build without cuDNN");
#endif
  }

  // y = a*x + y: 12 bytes per element, passes over one buffer, alternating sign.
  void run_elementwise(StreamState& s, std::uint64_t bytes) {
    std::uint64_t remaining = bytes / (3 * sizeof(float));
    if (remaining == 0) return;
    const std::uint64_t size = std::min(remaining, std::max<std::uint64_t>(1, options_.stream_buffer_bytes / sizeof(float)));
    const float* x = s.x.ensure(size, s.stream);
    float* y = s.y.ensure(size, s.stream);
    float alpha = 0.5f;
    while (remaining > 0) {
      const std::uint64_t n = std::min(remaining, size);
      check(cublasSaxpy(s.blas, blas_int(n, "element-wise"), &alpha, x, 1, y, 1), "cublasSaxpy");
      remaining -= n;
      alpha = -alpha;
    }
  }

  const StepClock& clock_;
  CudaComputeOptions options_;
  cudaEvent_t anchor_ = nullptr;
  std::chrono::steady_clock::time_point anchor_time_;
  std::map<std::uint32_t, StreamState> streams_;
  std::deque<Op> in_flight_ops_;
  std::deque<Completion> finished_;
  std::vector<cudaEvent_t> free_events_;
};

}  // namespace

const char* cuda_attention_name(CudaAttention attention) {
  return attention == CudaAttention::Flash ? "flash" : "reference";
}

CudaAttention default_cuda_attention() {
#ifdef EPPSIM_WITH_CUDNN
  return CudaAttention::Flash;
#else
  return CudaAttention::Reference;
#endif
}

CudaAttention parse_cuda_attention(const std::string& name, std::string_view option) {
  if (name == "reference") return CudaAttention::Reference;
  if (name != "flash") throw InputError(std::string(option) + ": must be flash or reference, got '" + name + "'");
  if (default_cuda_attention() != CudaAttention::Flash) {
    throw InputError(std::string(option) +
                     ": flash: this build has no cuDNN flash attention (CMake found no cuDNN or cudnn-frontend)");
  }
  return CudaAttention::Flash;
}

std::unique_ptr<ComputeQueue> make_cuda_compute_queue(const StepClock& clock, CudaComputeOptions options) {
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (options.device < 0 || options.device >= devices) {
    throw std::runtime_error("CUDA: no device " + std::to_string(options.device) + " (" + std::to_string(devices) +
                             " devices)");
  }
  if (options.attention == CudaAttention::Flash && default_cuda_attention() != CudaAttention::Flash) {
    throw std::runtime_error("CUDA: flash attention: this build has no cuDNN");
  }
  return std::make_unique<CudaComputeQueue>(clock, options);
}

std::string cuda_device_name(int device) {
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (device < 0 || device >= devices) {
    throw std::runtime_error("CUDA: no device " + std::to_string(device) + " (" + std::to_string(devices) +
                             " devices)");
  }
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  return properties.name;
}

}  // namespace eppsim::runtime
