#include "runtime/cuda/cuda_compute.h"

#include "runtime/attention_blocks.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace eppsim::runtime {
namespace {

using bf16 = __nv_bfloat16;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS: ") + what + ": " + cublasGetStatusString(status));
}

int blas_int(std::uint64_t value, const char* what) {
  if (value > 0x7fffffffull) throw std::length_error(std::string(what) + ": dimension too large for cuBLAS");
  return static_cast<int>(value);
}

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

// Row r of `rows_per_head`-row blocks: query row0 + r % rows_per_head, which
// sees keys 0 .. context + row0 + r % rows_per_head. Scores in, probabilities out
// (masked columns 0).
__global__ void causal_softmax(const float* scores, bf16* probabilities, int keys, int rows_per_head,
                               std::uint64_t first_visible) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float shared;
  const std::uint64_t row = blockIdx.x;
  const float* s = scores + row * keys;
  bf16* p = probabilities + row * keys;
  const int visible = static_cast<int>(first_visible) + static_cast<int>(row % rows_per_head);
  float max = -INFINITY;
  for (int j = threadIdx.x; j < visible; j += blockDim.x) max = fmaxf(max, s[j]);
  max = Reduce(storage).Reduce(max, [](float a, float b) { return fmaxf(a, b); });
  if (threadIdx.x == 0) shared = max;
  __syncthreads();
  max = shared;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < visible; j += blockDim.x) sum += __expf(s[j] - max);
  __syncthreads();
  sum = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0) shared = 1.0f / sum;
  __syncthreads();
  const float inverse = shared;
  for (int j = threadIdx.x; j < keys; j += blockDim.x)
    p[j] = __float2bfloat16(j < visible ? __expf(s[j] - max) * inverse : 0.0f);
}

// dS = P * (dP - rowsum(P * dP)) * scale, written over P.
__global__ void softmax_backward(bf16* probabilities, const float* prob_grads, int keys, float scale) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float shared;
  const std::uint64_t row = blockIdx.x;
  bf16* p = probabilities + row * keys;
  const float* dp = prob_grads + row * keys;
  float dot = 0.0f;
  for (int j = threadIdx.x; j < keys; j += blockDim.x) dot += __bfloat162float(p[j]) * dp[j];
  dot = Reduce(storage).Sum(dot);
  if (threadIdx.x == 0) shared = dot;
  __syncthreads();
  dot = shared;
  for (int j = threadIdx.x; j < keys; j += blockDim.x) {
    const float pj = __bfloat162float(p[j]);
    p[j] = __float2bfloat16(pj * (dp[j] - dot) * scale);
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
  DeviceBuffer<float> scores, prob_grads;            // one query block, fp32
  DeviceBuffer<bf16> probabilities;                  // and its probabilities (or dS)
  DeviceBuffer<float> x, y;                          // element-wise stream

  StreamState() {
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cublasCreate(&blas), "cublasCreate");
    check(cublasSetStream(blas, stream), "cublasSetStream");
  }
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;
  ~StreamState() {
    cublasDestroy(blas);
    cudaStreamDestroy(stream);
  }
};

// Row-major C[m x n] = alpha * op(A) op(B) + beta * C as cuBLAS's column-major
// C^T = op(B)^T op(A)^T; A, B, C are bf16 (or C fp32) with leading dimensions
// of their row-major storage.
void gemm_rm(cublasHandle_t blas, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const bf16* a, int lda,
             const bf16* b, int ldb, float beta, void* c, cudaDataType c_type, int ldc) {
  check(cublasGemmEx(blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b,
                     CUDA_R_16BF, ldb, a, CUDA_R_16BF, lda, &beta, c, c_type, ldc, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

// The same over `batch` problems with element strides between them.
void gemm_rm_batched(cublasHandle_t blas, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const bf16* a,
                     int lda, long long stride_a, const bf16* b, int ldb, long long stride_b, float beta, void* c,
                     cudaDataType c_type, int ldc, long long stride_c, int batch) {
  check(cublasGemmStridedBatchedEx(blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                                   k, &alpha, b, CUDA_R_16BF, ldb, stride_b, a, CUDA_R_16BF, lda, stride_a, &beta, c,
                                   c_type, ldc, stride_c, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

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
    for (const AttentionShape& a : plan.attention) run_attention(s, a, plan.pass);
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

  void run_gemm(StreamState& s, const GemmShape& g) {
    const int m = blas_int(g.m, "gemm"), n = blas_int(g.n, "gemm"), k = blas_int(g.k, "gemm");
    if (m == 0 || n == 0 || k == 0) return;
    const bf16* a = s.a.ensure(g.m * g.k, s.stream);
    const bf16* b = s.b.ensure(g.k * g.n, s.stream);
    bf16* c = s.c.ensure(g.m * g.n, s.stream);
    for (std::uint32_t i = 0; i < g.count; ++i) gemm_rm(s.blas, false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, CUDA_R_16BF, n);
  }

  void run_attention(StreamState& s, const AttentionShape& a, Pass pass) {
    if (a.tokens == 0) return;
    if (a.heads == 0 || a.kv_heads == 0 || a.head_dim == 0 || a.heads % a.kv_heads != 0)
      throw std::invalid_argument("attention: the K/V heads must divide the heads, and none may be 0");
    const std::uint32_t group = a.heads / a.kv_heads;
    const std::uint64_t keys_total = a.context_tokens + a.tokens;
    const std::uint64_t query_elements = a.tokens * a.heads * std::uint64_t{a.head_dim};
    const std::uint64_t key_elements = keys_total * a.kv_heads * std::uint64_t{a.head_dim};
    const int d = blas_int(a.head_dim, "attention");
    const int ld_q = blas_int(std::uint64_t{a.heads} * a.head_dim, "attention");
    const int ld_k = blas_int(std::uint64_t{a.kv_heads} * a.head_dim, "attention");
    blas_int(keys_total, "attention");
    const float scale = 1.0f / std::sqrt(static_cast<float>(a.head_dim));
    // fp32 scores and their gradients, bf16 probabilities.
    const std::uint64_t rows_max = attention_block_rows(a, options_.attention_block_bytes, 4 + 4 + 2);
    const std::uint64_t block = std::uint64_t{group} * rows_max * keys_total;
    const bool backward = pass == Pass::Backward;
    const bf16* q = s.q.ensure(query_elements, s.stream);
    const bf16* k = s.k.ensure(key_elements, s.stream);
    const bf16* v = s.v.ensure(key_elements, s.stream);
    float* scores = s.scores.ensure(block, s.stream);
    bf16* p = s.probabilities.ensure(block, s.stream);
    bf16* o = backward ? nullptr : s.o.ensure(query_elements, s.stream);
    const bf16* d_o = backward ? s.d_o.ensure(query_elements, s.stream) : nullptr;
    bf16* dq = backward ? s.dq.ensure(query_elements, s.stream) : nullptr;
    bf16* dk = backward ? s.dk.ensure(key_elements, s.stream) : nullptr;
    bf16* dv = backward ? s.dv.ensure(key_elements, s.stream) : nullptr;
    float* prob_grads = backward ? s.prob_grads.ensure(block, s.stream) : nullptr;

    for (std::uint32_t repeat = 0; repeat < a.count; ++repeat) {
      if (backward) {
        check(cudaMemsetAsync(dk, 0, key_elements * sizeof(bf16), s.stream), "cudaMemsetAsync");
        check(cudaMemsetAsync(dv, 0, key_elements * sizeof(bf16), s.stream), "cudaMemsetAsync");
      }
      for (std::uint32_t kv = 0; kv < a.kv_heads; ++kv) {
        const std::uint64_t head0 = std::uint64_t{kv} * group;  // first query head of this K/V head
        const bf16* k_head = k + std::uint64_t{kv} * a.head_dim;
        const bf16* v_head = v + std::uint64_t{kv} * a.head_dim;
        for (std::uint64_t row0 = 0; row0 < a.tokens; row0 += rows_max) {
          const int rows = static_cast<int>(std::min(rows_max, a.tokens - row0));
          const int keys = static_cast<int>(attention_block_keys(a, row0, rows));
          const long long score_stride = static_cast<long long>(rows) * keys;
          const std::uint64_t q_offset = row0 * ld_q + head0 * a.head_dim;
          // S[h] = Q_b[h] K^T * scale, for the group's heads; then P = causal softmax.
          gemm_rm_batched(s.blas, false, true, rows, keys, d, scale, q + q_offset, ld_q, d, k_head, ld_k, 0, 0.0f,
                          scores, CUDA_R_32F, keys, score_stride, static_cast<int>(group));
          causal_softmax<<<group * rows, kThreads, 0, s.stream>>>(scores, p, keys, rows, a.context_tokens + row0 + 1);
          check(cudaGetLastError(), "causal_softmax");
          if (!backward) {
            // O_b[h] = P[h] V
            gemm_rm_batched(s.blas, false, false, rows, d, keys, 1.0f, p, keys, score_stride, v_head, ld_k, 0, 0.0f,
                            o + q_offset, CUDA_R_16BF, ld_q, d, static_cast<int>(group));
            continue;
          }
          // dV += P[h]^T dO_b[h] (one GEMM per head: they share dV)
          for (std::uint32_t h = 0; h < group; ++h) {
            gemm_rm(s.blas, true, false, keys, d, rows, 1.0f, p + h * score_stride, keys, d_o + q_offset + h * d, ld_q,
                    1.0f, dv + std::uint64_t{kv} * a.head_dim, CUDA_R_16BF, ld_k);
          }
          // dP[h] = dO_b[h] V^T ; dS = softmax backward, over P
          gemm_rm_batched(s.blas, false, true, rows, keys, d, 1.0f, d_o + q_offset, ld_q, d, v_head, ld_k, 0, 0.0f,
                          prob_grads, CUDA_R_32F, keys, score_stride, static_cast<int>(group));
          softmax_backward<<<group * rows, kThreads, 0, s.stream>>>(p, prob_grads, keys, scale);
          check(cudaGetLastError(), "softmax_backward");
          // dQ_b[h] = dS[h] K ; dK += dS[h]^T Q_b[h]
          gemm_rm_batched(s.blas, false, false, rows, d, keys, 1.0f, p, keys, score_stride, k_head, ld_k, 0, 0.0f,
                          dq + q_offset, CUDA_R_16BF, ld_q, d, static_cast<int>(group));
          for (std::uint32_t h = 0; h < group; ++h) {
            gemm_rm(s.blas, true, false, keys, d, rows, 1.0f, p + h * score_stride, keys, q + q_offset + h * d, ld_q,
                    1.0f, dk + std::uint64_t{kv} * a.head_dim, CUDA_R_16BF, ld_k);
          }
        }
      }
    }
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

std::unique_ptr<ComputeQueue> make_cuda_compute_queue(const StepClock& clock, CudaComputeOptions options) {
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (options.device < 0 || options.device >= devices) {
    throw std::runtime_error("CUDA: no device " + std::to_string(options.device) + " (" + std::to_string(devices) +
                             " devices)");
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
