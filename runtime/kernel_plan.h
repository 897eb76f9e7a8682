#pragma once
// One COMPUTE op of a Schedule as the kernels a device runs for it, with this
// rank's real shapes: the layers' GEMMs and causal attention per segment, for
// a forward, backward or recompute pass of `layer_count` layers (a LayerPart
// runs only its share of each layer), after the op's splits (sequence
// parallelism: tokens / degree for the GEMMs, heads / degree for attention
// over the whole sequence; tensor parallelism: weight columns or rows /
// degree; context parallelism: tokens / degree with the ring's K/V). Shared by
// the CPU and CUDA backends and by `eppsim-bench compute`, so that what is
// benchmarked is what the runtime executes.
#include <cstdint>
#include <string_view>
#include <vector>

#include "models/chunk.h"
#include "models/layer_gemms.h"
#include "proto/schedule.pb.h"

namespace eppsim::runtime {

// GemmShape: models/layer_gemms.h, where the layer's GEMMs are listed.

// Causal attention of `tokens` queries over `context_tokens + tokens` keys of
// one sequence (query i sees the context and queries 0..i), `heads` query heads
// sharing `kv_heads` K/V heads of `head_dim`, `count` times.
struct AttentionShape {
  std::uint64_t tokens = 0, context_tokens = 0;
  std::uint32_t heads = 0, kv_heads = 0, head_dim = 0;
  std::uint32_t count = 1;
  bool operator==(const AttentionShape&) const = default;
};

struct KernelPlan {
  Pass pass = Pass::Forward;  // Recompute runs forward kernels
  std::vector<GemmShape> gemms;
  std::vector<AttentionShape> attention;
  // Bytes of element-wise work (norms, activations, residuals, optimizer
  // updates): streamed once through memory.
  std::uint64_t elementwise_bytes = 0;
  bool empty() const { return gemms.empty() && attention.empty() && elementwise_bytes == 0; }
};

// Model FLOPs of causal attention (models/compute_cost.h): forward 4 * head_dim
// * heads * (s*c + s*(s+1)/2) per sequence, backward 2.5 times that (the
// scores are recomputed), `count` times.
double attention_flops(const AttentionShape& shape, Pass pass);
// Every GEMM and attention FLOP of the plan (element-wise work has none).
double plan_flops(const KernelPlan& plan);

// The operands of plans, each the largest any of them has: a backend's
// kernels hold a buffer per operand, grown to the largest shape given and
// never freed (runtime/cpu/cpu_kernels.h, runtime/cuda/cuda_compute.h), so
// these bound the memory they take (ComputeQueue::host_bytes). In elements.
struct KernelBuffers {
  std::uint64_t gemm_a = 0, gemm_b = 0, gemm_c = 0;
  std::uint64_t queries = 0, keys = 0;  // each of q, o, dq, d_o and of k, v, dk, dv
  std::uint64_t scores = 0;             // a 64-row query block's scores against the keys it sees
  std::uint64_t stream = 0;             // the element-wise work's elements (x and y each)
  void grow(const KernelPlan& plan);
  // Every buffer, the element-wise stream's two capped at `stream_buffer_elements`:
  // three GEMM operands, four of queries and of keys, two of scores (scores and
  // their gradients) and two of the stream.
  std::uint64_t elements(std::uint64_t stream_buffer_elements) const;
  // The largest of them: while it grows, the old and the new copy are both held.
  std::uint64_t largest(std::uint64_t stream_buffer_elements) const;
};

// The kernels of `op` on this rank. `group_sizes[g]` is the size of the
// Schedule's group g (splits name groups). Throws InputError naming the op's
// field for shapes the model cannot have (a split that does not divide the
// heads, a layer range past the model).
KernelPlan plan_kernels(const proto::ModelShape& model, const proto::ComputeOp& op,
                        const std::vector<std::uint32_t>& group_sizes);

}  // namespace eppsim::runtime
