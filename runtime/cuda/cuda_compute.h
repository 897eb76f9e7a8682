#pragma once
// The CUDA ComputeQueue: the same KernelPlans as the CPU backend, in bf16 with
// fp32 accumulation. GEMMs are cuBLAS (cublasGemmEx); causal attention is
// cuDNN's flash attention (CudaAttention below) or the reference kernel;
// element-wise work is cublasSaxpy streamed
// through a buffer. Each schedule stream gets its own CUDA stream, cuBLAS
// handle and buffers (grown to the largest shape, filled with a fixed
// pattern), so ops of different streams overlap as the Schedule allows. Each
// op is bracketed by CUDA events; its end on the StepClock is the end event's
// time, mapped through an anchor event recorded whenever the queue is idle.
// wait() polls the events, sleeping 50 us between looks; with nothing in
// flight it sleeps out its timeout, or returns at once when it has none.
// Built only when CMake finds nvcc and NCCL (EPPSIM_WITH_CUDA).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/compute_queue.h"
#include "runtime/step_clock.h"

namespace eppsim::runtime {

// How the queue runs causal attention: Flash is cuDNN's fused flash attention,
// a packed micro-batch's sequences in one ragged batch (cudnn_attention.h), as
// training frameworks run it; Reference is this backend's own kernel, which
// materialises the scores (cuda_attention.h) and is what Flash is tested
// against. Flash needs a build with cuDNN (EPPSIM_WITH_CUDNN).
enum class CudaAttention { Flash, Reference };

// "flash" or "reference".
const char* cuda_attention_name(CudaAttention attention);
// Flash where this build has cuDNN, else Reference.
CudaAttention default_cuda_attention();
// "flash" or "reference" as a CudaAttention; InputError "OPTION: RULE" for
// another name, or for "flash" in a build without cuDNN.
CudaAttention parse_cuda_attention(const std::string& name, std::string_view option);

struct CudaComputeOptions {
  CudaAttention attention = default_cuda_attention();
  int device = 0;  // cudaSetDevice: the rank's GPU on its node
  // Element-wise work streams through buffers of this many bytes.
  std::uint64_t stream_buffer_bytes = 256ull << 20;
  // Scores of one attention query block (fp32 scores and gradients, bf16
  // probabilities) are kept under this many bytes by shrinking the block.
  std::uint64_t attention_block_bytes = 1ull << 30;
};

// `clock` must outlive the queue. Throws std::runtime_error when there is no
// such CUDA device or CUDA fails.
std::unique_ptr<ComputeQueue> make_cuda_compute_queue(const StepClock& clock, CudaComputeOptions options = {});

// "NVIDIA H100 80GB HBM3": the device's name (cudaGetDeviceProperties).
std::string cuda_device_name(int device);

}  // namespace eppsim::runtime
