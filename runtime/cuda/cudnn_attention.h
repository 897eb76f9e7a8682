#pragma once
// Causal attention as training frameworks run it: cuDNN's fused flash
// attention (the cuDNN 9 graph API's SDPA node, built through NVIDIA's
// cudnn-frontend headers), forward and backward, in bf16 with fp32 softmax,
// grouped K/V heads, and a packed micro-batch's sequences as one ragged batch
// (runtime/attention_batch.h: per-sequence lengths and offsets, a causal mask
// aligned to the bottom right so that a slice attends to its context). The
// forward writes the softmax statistics (log-sum-exp per query row and head)
// that the backward reads, as FlashAttention keeps them between the passes.
//
// A graph is built once per AttentionGraphKey (runtime/attention_batch.h) and
// cached with its workspace size; the batch's lengths and offsets are copied
// to the device once per distinct batch. Built only when CMake finds cuDNN and
// the frontend's headers (EPPSIM_WITH_CUDNN); runtime/cuda/cuda_attention.h's
// kernel is the reference its tests compare against.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/attention_batch.h"

namespace eppsim::runtime {

// Device tensors of one batch (bf16, layouts of runtime/attention_batch.h),
// and the softmax statistics, cudnn_attention_stats_elements long.
struct CudnnAttentionTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;            // written forward, read backward
  const void* d_o = nullptr;    // backward
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  float* stats = nullptr;       // written forward, read backward
};

// Floats of the statistics of a graph of `key`: sequences x heads x its query extent.
std::uint64_t cudnn_attention_stats_elements(const AttentionGraphKey& key);

class CudnnAttention {
 public:
  // Creates a cuDNN handle bound to `stream` on the current device.
  // Throws std::runtime_error when cuDNN cannot (no GPU, no driver).
  explicit CudnnAttention(cudaStream_t stream);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  // Enqueues `batch` (Forward and Recompute run the forward) on the stream.
  // Throws std::runtime_error naming the shape and cuDNN's message when cuDNN
  // has no engine for it or fails.
  void run(const AttentionBatch& batch, Pass pass, const CudnnAttentionTensors& tensors);

  std::size_t cached_graphs() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Builds the frontend graph of `key` and validates it for a GPU of
// `sm_version` (90: Hopper) with the frontend's own checks of shapes, layouts
// and masks; no GPU needed. The empty string when it is valid, else the
// frontend's message.
std::string cudnn_attention_graph_error(const AttentionGraphKey& key, int sm_version = 90);

// The cuDNN library's version, e.g. "9.19.0" (cudnnGetVersion).
std::string cudnn_version();

}  // namespace eppsim::runtime
