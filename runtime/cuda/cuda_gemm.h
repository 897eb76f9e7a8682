#pragma once
// Row-major GEMMs on cuBLAS in bf16 with fp32 accumulation (cublasGemmEx and
// its strided-batched form), for the CUDA backend's kernels.
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "runtime/cuda/cuda_check.h"

namespace eppsim::runtime {

// A leading dimension of `elements` rounded up to 8: rows 16 bytes apart in
// bf16 (and in fp32), as cuBLAS's tensor-core kernels need.
inline std::uint64_t aligned_ld(std::uint64_t elements) { return (elements + 7) / 8 * 8; }

// Row-major C[m x n] = alpha * op(A) op(B) + beta * C as cuBLAS's column-major
// C^T = op(B)^T op(A)^T; A, B, C are bf16 (or C fp32) with leading dimensions
// of their row-major storage.
inline void gemm_rm(cublasHandle_t blas, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const __nv_bfloat16* a, int lda,
             const __nv_bfloat16* b, int ldb, float beta, void* c, cudaDataType c_type, int ldc) {
  check(cublasGemmEx(blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b,
                     CUDA_R_16BF, ldb, a, CUDA_R_16BF, lda, &beta, c, c_type, ldc, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

// The same over `batch` problems with element strides between them.
inline void gemm_rm_batched(cublasHandle_t blas, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const __nv_bfloat16* a,
                     int lda, long long stride_a, const __nv_bfloat16* b, int ldb, long long stride_b, float beta, void* c,
                     cudaDataType c_type, int ldc, long long stride_c, int batch) {
  check(cublasGemmStridedBatchedEx(blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                                   k, &alpha, b, CUDA_R_16BF, ldb, stride_b, a, CUDA_R_16BF, lda, stride_a, &beta, c,
                                   c_type, ldc, stride_c, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

}  // namespace eppsim::runtime
