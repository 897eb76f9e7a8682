#include "runtime/cpu/cpu_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace eppsim::runtime {
namespace {

int blas_int(std::uint64_t value, const char* what) {
  if (value > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw std::length_error(fmt::format("{}: dimension {} is too large for BLAS", what, value));
  return static_cast<int>(value);
}

// Grows `buffer` to at least `elements`, filling only what is new.
float* ensure(std::vector<float>& buffer, std::uint64_t elements) {
  const std::uint64_t old = buffer.size();
  if (old < elements) {
    buffer.resize(elements);
    fill_deterministic(buffer.data(), old, elements);
  }
  return buffer.data();
}

}  // namespace

void fill_deterministic(float* data, std::uint64_t begin, std::uint64_t end) {
  for (std::uint64_t i = begin; i < end; ++i) {
    // A multiplicative hash of the index, folded into [-0.25, 0.25).
    const std::uint32_t bits = static_cast<std::uint32_t>(i * 2654435761u) >> 20;  // 12 bits
    data[i] = (static_cast<float>(bits) / 4096.0f - 0.5f) * 0.5f;
  }
}

CpuKernels::CpuKernels(std::uint64_t stream_buffer_bytes) : stream_buffer_bytes_(stream_buffer_bytes) {
  if (stream_buffer_bytes_ < sizeof(float)) throw std::invalid_argument("cpu kernels: stream buffer must hold a float");
}

void CpuKernels::run(const KernelPlan& plan) {
  for (const GemmShape& g : plan.gemms) run_gemm(g);
  for (const AttentionShape& a : plan.attention) run_attention(a, plan.pass);
  run_elementwise(plan.elementwise_bytes);
}

void CpuKernels::run_gemm(const GemmShape& g) {
  const int m = blas_int(g.m, "gemm"), n = blas_int(g.n, "gemm"), k = blas_int(g.k, "gemm");
  if (m == 0 || n == 0 || k == 0) return;
  const float* a = ensure(a_, g.m * g.k);
  const float* b = ensure(b_, g.k * g.n);
  float* c = ensure(c_, g.m * g.n);
  for (std::uint32_t i = 0; i < g.count; ++i) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  }
}

void CpuKernels::run_attention(const AttentionShape& shape, Pass pass) {
  if (shape.tokens == 0) return;
  const std::uint64_t queries = attention_query_elements(shape);
  const std::uint64_t keys = attention_key_elements(shape);
  const float* q = ensure(q_, queries);
  const float* k = ensure(k_, keys);
  const float* v = ensure(v_, keys);
  for (std::uint32_t i = 0; i < shape.count; ++i) {
    if (pass == Pass::Backward) {
      attention_backward(shape, q, k, v, ensure(d_o_, queries), ensure(dq_, queries), ensure(dk_, keys),
                         ensure(dv_, keys), scratch_);
    } else {
      attention_forward(shape, q, k, v, ensure(o_, queries), scratch_);
    }
  }
}

// y = a*x + y moves 12 bytes per element (x and y read, y written); passes over
// one buffer until `bytes` have moved, flipping the sign of a so y stays bounded.
void CpuKernels::run_elementwise(std::uint64_t bytes) {
  constexpr std::uint64_t kBytesPerElement = 3 * sizeof(float);
  std::uint64_t remaining = bytes / kBytesPerElement;
  if (remaining == 0) return;
  const std::uint64_t capacity = std::max<std::uint64_t>(1, stream_buffer_bytes_ / sizeof(float));
  const std::uint64_t size = std::min(remaining, capacity);
  const float* x = ensure(x_, size);
  float* y = ensure(y_, size);
  float a = 0.5f;
  while (remaining > 0) {
    const std::uint64_t n = std::min(remaining, size);
    cblas_saxpy(blas_int(n, "element-wise"), a, x, 1, y, 1);
    remaining -= n;
    a = -a;
  }
}

}  // namespace eppsim::runtime
