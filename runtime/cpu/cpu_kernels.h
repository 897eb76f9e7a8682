#pragma once
// Runs a KernelPlan on the CPU with real fp32 buffers: each GEMM as
// cblas_sgemm, attention as runtime/cpu/cpu_attention.h, element-wise work as
// y = a*x + y streamed through a buffer larger than the caches. Buffers are
// owned here and reused: they grow to the largest shape seen and are never
// freed between ops; new elements are filled with a fixed pattern, so every run
// computes on the same inputs. Outputs are written to buffers no kernel reads
// as input, so values stay bounded however many ops run.
#include <cstdint>
#include <vector>

#include "runtime/cpu/cpu_attention.h"
#include "runtime/kernel_plan.h"

namespace eppsim::runtime {

// Largest buffer the element-wise stream uses (each of x and y): past the
// last-level cache of a CPU socket, so the bytes go through memory.
inline constexpr std::uint64_t kDefaultStreamBufferBytes = 64ull << 20;

class CpuKernels {
 public:
  explicit CpuKernels(std::uint64_t stream_buffer_bytes = kDefaultStreamBufferBytes);

  // Every kernel of the plan, in order: the GEMMs, the attention (forward for
  // Forward and Recompute, backward for Backward), then the element-wise work.
  void run(const KernelPlan& plan);
  // One of each, `count` times (shape.count).
  void run_gemm(const GemmShape& shape);
  void run_attention(const AttentionShape& shape, Pass pass);
  void run_elementwise(std::uint64_t bytes);

 private:
  std::uint64_t stream_buffer_bytes_;
  // GEMM operands and result.
  std::vector<float> a_, b_, c_;
  // Attention inputs (q, k, v, d_o), outputs (o, dq, dk, dv) and scratch.
  std::vector<float> q_, k_, v_, d_o_, o_, dq_, dk_, dv_;
  AttentionScratch scratch_;
  // Element-wise stream.
  std::vector<float> x_, y_;
};

// The fixed input pattern: values in [-0.25, 0.25), different along the buffer.
void fill_deterministic(float* data, std::uint64_t begin, std::uint64_t end);

}  // namespace eppsim::runtime
