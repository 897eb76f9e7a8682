#pragma once
// CUDA and cuBLAS status checks for the CUDA backend: a failure throws
// std::runtime_error naming the call.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace eppsim::runtime {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(status));
}

inline void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS: ") + what + ": " + cublasGetStatusString(status));
}

// cuBLAS takes int dimensions.
inline int blas_int(std::uint64_t value, const char* what) {
  if (value > 0x7fffffffull) throw std::length_error(std::string(what) + ": dimension too large for cuBLAS");
  return static_cast<int>(value);
}

}  // namespace eppsim::runtime
