// The CUDA backend, where a GPU is present (skipped otherwise: this file is
// built whenever the CUDA backend is, and the CI machines have no GPU):
// attention against the double-precision reference, and the queue's
// completions.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "runtime/cuda/cuda_attention.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_compute.h"
#include "tests/runtime/cuda_device_copies.h"
#include "tests/runtime/attention_reference.h"

namespace eppsim::runtime {
namespace {

class CudaCompute : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// Forward then backward of `a` in query blocks of `block`, against the
// double-precision reference on the bf16-rounded inputs.
void expect_attention_matches_reference(const AttentionShape& a, const AttentionBlock& block) {
  const Inputs in = inputs_for(a);
  Inputs rounded;
  CudaAttentionTensors t;
  t.q = upload<const __nv_bfloat16>(in.q, &rounded.q);
  t.k = upload<const __nv_bfloat16>(in.k, &rounded.k);
  t.v = upload<const __nv_bfloat16>(in.v, &rounded.v);
  t.d_o = upload<const __nv_bfloat16>(in.d_o, &rounded.d_o);
  t.o = upload<__nv_bfloat16>(std::vector<double>(in.q.size()));
  t.dq = upload<__nv_bfloat16>(std::vector<double>(in.q.size()));
  t.dk = upload<__nv_bfloat16>(std::vector<double>(in.k.size(), 9.0));  // dirty: must be overwritten
  t.dv = upload<__nv_bfloat16>(std::vector<double>(in.v.size(), 9.0));
  const std::uint64_t scratch = cuda_attention_score_elements(a, block);
  check(cudaMalloc(&t.scores, scratch * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&t.prob_grads, scratch * sizeof(float)), "cudaMalloc");
  t.probabilities = upload<__nv_bfloat16>(std::vector<double>(scratch));
  const std::uint64_t head_copies = cuda_attention_head_elements(a);
  if (head_copies > 0) {
    for (__nv_bfloat16** copy : {&t.k_heads, &t.v_heads, &t.dk_heads, &t.dv_heads})
      *copy = upload<__nv_bfloat16>(std::vector<double>(head_copies, 9.0));
  }
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  check(cublasCreate(&blas), "cublasCreate");
  check(cublasSetStream(blas, stream), "cublasSetStream");
  cuda_attention(blas, stream, a, Pass::Forward, block, t);
  cuda_attention(blas, stream, a, Pass::Backward, block, t);
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  expect_close(download(t.o, in.q.size()), naive_forward(a, rounded.q, rounded.k, rounded.v), "O");
  const Grads g = naive_backward(a, rounded);
  expect_close(download(t.dq, in.q.size()), g.dq, "dQ");
  expect_close(download(t.dk, in.k.size()), g.dk, "dK");
  expect_close(download(t.dv, in.v.size()), g.dv, "dV");
  cublasDestroy(blas);
  cudaStreamDestroy(stream);
  for (const void* p : {static_cast<const void*>(t.q), static_cast<const void*>(t.k), static_cast<const void*>(t.v),
                        static_cast<const void*>(t.d_o), static_cast<const void*>(t.o), static_cast<const void*>(t.dq),
                        static_cast<const void*>(t.dk), static_cast<const void*>(t.dv),
                        static_cast<const void*>(t.scores), static_cast<const void*>(t.prob_grads),
                        static_cast<const void*>(t.probabilities), static_cast<const void*>(t.k_heads),
                        static_cast<const void*>(t.v_heads), static_cast<const void*>(t.dk_heads),
                        static_cast<const void*>(t.dv_heads)})
    cudaFree(const_cast<void*>(p));
}

TEST_F(CudaCompute, AttentionMatchesTheReference) {
  // Several 64-row query blocks of every head, grouped K/V heads (each query
  // head gets its own copy of its K/V head, and the gradients are summed back).
  expect_attention_matches_reference({.tokens = 150, .context_tokens = 20, .heads = 4, .kv_heads = 2, .head_dim = 32},
                                     {.rows = 64, .heads = 4});
}

TEST_F(CudaCompute, AttentionMatchesTheReferenceInBlocksOfSomeHeads) {
  // 3 of 6 heads, then the other 3, each across a K/V head's group.
  expect_attention_matches_reference({.tokens = 100, .context_tokens = 30, .heads = 6, .kv_heads = 2, .head_dim = 16},
                                     {.rows = 64, .heads = 3});
  expect_attention_matches_reference({.tokens = 70, .context_tokens = 0, .heads = 4, .kv_heads = 4, .head_dim = 16},
                                     {.rows = 64, .heads = 3});
}

TEST_F(CudaCompute, AttentionMatchesTheReferenceWithAKvHeadPerQueryHead) {
  expect_attention_matches_reference({.tokens = 130, .context_tokens = 0, .heads = 3, .kv_heads = 3, .head_dim = 16},
                                     {.rows = 64, .heads = 3});
}

class CudaQueue : public CudaCompute, public ::testing::WithParamInterface<CudaAttention> {};

TEST_P(CudaQueue, CompletesEveryOp) {
  StepClock clock;
  CudaComputeOptions options;
  options.attention = GetParam();
  const auto queue = make_cuda_compute_queue(clock, options);
  KernelPlan plan;
  plan.pass = Pass::Backward;
  plan.gemms.push_back(GemmShape{.m = 512, .n = 512, .k = 512, .count = 2, .name = "qkv_dgrad"});
  plan.attention.push_back(AttentionShape{.tokens = 256, .context_tokens = 128, .heads = 8, .kv_heads = 2, .head_dim = 64});
  plan.elementwise_bytes = 1 << 20;
  for (ActivityId id = 0; id < 4; ++id) queue->submit(id, id % 2, plan);
  EXPECT_EQ(queue->in_flight(), 4u);
  std::set<ActivityId> done;
  double last = 0.0;
  while (done.size() < 4) {
    queue->wait(-1.0);
    for (const Completion& c : queue->poll()) {
      EXPECT_TRUE(done.insert(c.id).second);
      EXPECT_GE(c.end_s, last);
      last = c.end_s;
    }
  }
  EXPECT_GT(last, 0.0);
  EXPECT_LE(last, clock.now_s());
  EXPECT_EQ(queue->in_flight(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Attention, CudaQueue, ::testing::Values(default_cuda_attention(), CudaAttention::Reference),
                         [](const ::testing::TestParamInfo<CudaAttention>& info) {
                           return std::string(cuda_attention_name(info.param)) + std::to_string(info.index);
                         });

}  // namespace
}  // namespace eppsim::runtime
