// cuDNN's flash attention (runtime/cuda/cudnn_attention.h): the graphs it
// builds pass the frontend's validation for the shapes the runtime runs (no
// GPU needed), and, where a GPU is present, a packed batch of sequences with
// context and grouped K/V heads matches the double-precision reference
// forward and backward, sequence by sequence.
#include "runtime/cuda/cudnn_attention.h"

#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <regex>
#include <vector>

#include "tests/runtime/attention_reference.h"
#include "tests/runtime/cuda_device_copies.h"

namespace eppsim::runtime {
namespace {

AttentionGraphKey key(Pass pass, std::uint32_t heads, std::uint32_t kv_heads, std::uint32_t head_dim) {
  return AttentionGraphKey{.pass = pass, .heads = heads, .kv_heads = kv_heads, .head_dim = head_dim,
                           .sequences = 5, .max_query_tokens = 8192, .max_key_tokens = 8192};
}

TEST(CudnnAttentionGraph, TheRuntimesShapesValidate) {
  EXPECT_TRUE(std::regex_match(cudnn_version(), std::regex(R"(9\.\d+\.\d+)"))) << cudnn_version();
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    EXPECT_EQ(cudnn_attention_graph_error(key(pass, 32, 4, 64)), "");    // gpu1: TinyLlama-shaped
    EXPECT_EQ(cudnn_attention_graph_error(key(pass, 32, 32, 128)), "");  // Llama 2 7B
    EXPECT_EQ(cudnn_attention_graph_error(key(pass, 64, 8, 128)), "");   // Llama 2 70B
  }
}

TEST(CudnnAttentionGraph, KvHeadsThatDoNotDivideTheHeadsAreRefused) {
  EXPECT_NE(cudnn_attention_graph_error(key(Pass::Forward, 6, 4, 64)), "");
  EXPECT_NE(cudnn_attention_graph_error(key(Pass::Backward, 6, 4, 64)), "");
}

TEST(CudnnAttentionGraph, StatisticsAreOneFloatPerQueryRowAndHead) {
  EXPECT_EQ(cudnn_attention_stats_elements(key(Pass::Forward, 32, 4, 64)), 5u * 32 * 8192);
}

class CudnnAttentionOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// One sequence's part of a packed buffer.
std::vector<float> part(const std::vector<float>& packed, std::int32_t begin, std::int32_t end) {
  return std::vector<float>(packed.begin() + begin, packed.begin() + end);
}

void append(std::vector<double>& packed, const std::vector<double>& values) {
  packed.insert(packed.end(), values.begin(), values.end());
}

TEST_F(CudnnAttentionOnGpu, APackedBatchMatchesTheReference) {
  // A slice after its context, a whole sequence and a short one: the causal
  // mask aligned to the bottom right, per sequence.
  const std::vector<AttentionShape> shapes = {
      {.tokens = 150, .context_tokens = 20, .heads = 4, .kv_heads = 2, .head_dim = 64},
      {.tokens = 70, .context_tokens = 0, .heads = 4, .kv_heads = 2, .head_dim = 64},
      {.tokens = 33, .context_tokens = 100, .heads = 4, .kv_heads = 2, .head_dim = 64},
  };
  const std::vector<AttentionBatch> batches = attention_batches(shapes);
  ASSERT_EQ(batches.size(), 1u);
  const AttentionBatch& batch = batches[0];
  std::vector<Inputs> inputs;
  Inputs packed;
  for (const AttentionShape& a : shapes) {
    inputs.push_back(inputs_for(a));
    append(packed.q, inputs.back().q);
    append(packed.k, inputs.back().k);
    append(packed.v, inputs.back().v);
    append(packed.d_o, inputs.back().d_o);
  }
  Inputs rounded;
  CudnnAttentionTensors t;
  t.q = upload<const __nv_bfloat16>(packed.q, &rounded.q);
  t.k = upload<const __nv_bfloat16>(packed.k, &rounded.k);
  t.v = upload<const __nv_bfloat16>(packed.v, &rounded.v);
  t.d_o = upload<const __nv_bfloat16>(packed.d_o, &rounded.d_o);
  auto* o = upload<__nv_bfloat16>(std::vector<double>(packed.q.size()));
  auto* dq = upload<__nv_bfloat16>(std::vector<double>(packed.q.size()));
  auto* dk = upload<__nv_bfloat16>(std::vector<double>(packed.k.size(), 9.0));  // dirty: must be overwritten
  auto* dv = upload<__nv_bfloat16>(std::vector<double>(packed.v.size(), 9.0));
  t.o = o, t.dq = dq, t.dk = dk, t.dv = dv;
  check(cudaMalloc(&t.stats, cudnn_attention_stats_elements(attention_graph_key(batch, Pass::Forward)) * sizeof(float)),
        "cudaMalloc");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  {
    CudnnAttention flash(stream);
    flash.run(batch, Pass::Forward, t);
    flash.run(batch, Pass::Backward, t);
    flash.run(batch, Pass::Recompute, t);  // the forward's graph again
    EXPECT_EQ(flash.cached_graphs(), 2u);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  const std::vector<float> got_o = download(o, packed.q.size()), got_dq = download(dq, packed.q.size());
  const std::vector<float> got_dk = download(dk, packed.k.size()), got_dv = download(dv, packed.v.size());
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    SCOPED_TRACE("sequence " + std::to_string(i));
    const std::int32_t q0 = batch.query_offsets[i], q1 = batch.query_offsets[i + 1];
    const std::int32_t k0 = batch.key_offsets[i], k1 = batch.key_offsets[i + 1];
    const Inputs in{{rounded.q.begin() + q0, rounded.q.begin() + q1}, {rounded.k.begin() + k0, rounded.k.begin() + k1},
                    {rounded.v.begin() + k0, rounded.v.begin() + k1}, {rounded.d_o.begin() + q0, rounded.d_o.begin() + q1}};
    expect_close(part(got_o, q0, q1), naive_forward(shapes[i], in.q, in.k, in.v), "O");
    const Grads g = naive_backward(shapes[i], in);
    expect_close(part(got_dq, q0, q1), g.dq, "dQ");
    expect_close(part(got_dk, k0, k1), g.dk, "dK");
    expect_close(part(got_dv, k0, k1), g.dv, "dV");
  }
  cudaStreamDestroy(stream);
  for (const void* p : {t.q, t.k, t.v, t.d_o, static_cast<const void*>(o), static_cast<const void*>(dq),
                        static_cast<const void*>(dk), static_cast<const void*>(dv), static_cast<const void*>(t.stats)})
    cudaFree(const_cast<void*>(p));
}

}  // namespace
}  // namespace eppsim::runtime
