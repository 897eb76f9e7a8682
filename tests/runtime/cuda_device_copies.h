#pragma once
// Host <-> device copies in bf16 and a tolerance check, for the CUDA kernel
// tests (cuda_compute_test.cpp, cudnn_attention_test.cpp).
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/cuda/cuda_check.h"

namespace eppsim::runtime {

// A device copy of `values` in bf16; `rounded` gets the values bf16 holds.
template <typename T>
T* upload(const std::vector<double>& values, std::vector<double>* rounded = nullptr) {
  std::vector<__nv_bfloat16> host(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) host[i] = __float2bfloat16(static_cast<float>(values[i]));
  if (rounded) {
    rounded->resize(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) (*rounded)[i] = __bfloat162float(host[i]);
  }
  void* device = nullptr;
  check(cudaMalloc(&device, host.size() * sizeof(__nv_bfloat16)), "cudaMalloc");
  check(cudaMemcpy(device, host.data(), host.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice), "cudaMemcpy");
  return static_cast<T*>(device);
}

inline std::vector<float> download(const __nv_bfloat16* device, std::size_t count) {
  std::vector<__nv_bfloat16> host(count);
  check(cudaMemcpy(host.data(), device, count * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = __bfloat162float(host[i]);
  return values;
}

// Every element within 3% of the largest magnitude of `want`.
inline void expect_close(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  double scale = 0.0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 3e-2 * scale) << what << " element " << i;
}

}  // namespace eppsim::runtime
