#include "runtime/cuda/cudnn_attention.h"

#include <cudnn.h>
#include <cudnn_frontend.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "runtime/cuda/cuda_check.h"

namespace eppsim::runtime {
namespace {

namespace fe = cudnn_frontend;
using Tensor = std::shared_ptr<fe::graph::Tensor_attributes>;
using Uid = fe::graph::Tensor_attributes::uid_t;

// The graph's tensors; every ragged tensor has an offsets tensor of its own
// (the batch's query or key offsets, bound to the same device array).
enum : Uid {
  kQ = 1, kK, kV, kO, kStats, kDo, kDq, kDk, kDv,
  kSeqLenQ, kSeqLenKv,
  kQOffsets, kKOffsets, kVOffsets, kOOffsets, kDoOffsets, kDqOffsets, kDkOffsets, kDvOffsets,
};

void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) throw std::runtime_error(fmt::format("cuDNN: {}: {}", what, cudnnGetErrorString(status)));
}

std::string describe(const AttentionGraphKey& key) {
  return fmt::format("{} of {} sequences (up to {} queries, {} keys), {} heads, {} K/V heads, head_dim {}",
                     key.pass == Pass::Backward ? "backward" : "forward", key.sequences, key.max_query_tokens,
                     key.max_key_tokens, key.heads, key.kv_heads, key.head_dim);
}

// A tensor of `heads` x `tokens` x head_dim per sequence, token-major
// ([token][head][dim]), its sequences at the ragged offsets `offsets_uid` holds.
void lay_out_token_major(fe::graph::Graph& graph, const Tensor& tensor, const AttentionGraphKey& key, std::int64_t heads,
                         std::int64_t tokens, Uid offsets_uid) {
  const std::int64_t d = key.head_dim;
  const Tensor offsets = graph.tensor(fe::graph::Tensor_attributes()
                                          .set_name(fmt::format("offsets_{}", offsets_uid))
                                          .set_uid(offsets_uid)
                                          .set_dim({key.sequences + 1, 1, 1, 1})
                                          .set_stride({1, 1, 1, 1})
                                          .set_data_type(fe::DataType_t::INT32));
  tensor->set_dim({key.sequences, heads, tokens, d}).set_stride({tokens * heads * d, d, heads * d, 1}).set_ragged_offset(offsets);
}

Tensor token_major_input(fe::graph::Graph& graph, const char* name, Uid uid, const AttentionGraphKey& key,
                         std::int64_t heads, std::int64_t tokens, Uid offsets_uid) {
  const Tensor tensor = graph.tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid));
  lay_out_token_major(graph, tensor, key, heads, tokens, offsets_uid);
  return tensor;
}

Tensor lengths_input(fe::graph::Graph& graph, const char* name, Uid uid, std::int64_t sequences) {
  return graph.tensor(fe::graph::Tensor_attributes()
                          .set_name(name)
                          .set_uid(uid)
                          .set_dim({sequences, 1, 1, 1})
                          .set_stride({1, 1, 1, 1})
                          .set_data_type(fe::DataType_t::INT32));
}

void lay_out_stats(const Tensor& stats, const AttentionGraphKey& key) {
  const std::int64_t h = key.heads, s = key.max_query_tokens;
  stats->set_uid(kStats).set_data_type(fe::DataType_t::FLOAT).set_dim({key.sequences, h, s, 1}).set_stride({h * s, s, 1, 1});
}

// `sm_version` 0: the current device's.
std::shared_ptr<fe::graph::Graph> make_graph(const AttentionGraphKey& key, int sm_version = 0) {
  auto graph = std::make_shared<fe::graph::Graph>();
  if (sm_version > 0) graph->set_sm_version(sm_version);  // before the nodes, which copy the graph's context
  graph->set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const std::int64_t h = key.heads, hk = key.kv_heads, sq = key.max_query_tokens, skv = key.max_key_tokens;
  const Tensor q = token_major_input(*graph, "Q", kQ, key, h, sq, kQOffsets);
  const Tensor k = token_major_input(*graph, "K", kK, key, hk, skv, kKOffsets);
  const Tensor v = token_major_input(*graph, "V", kV, key, hk, skv, kVOffsets);
  const Tensor seq_len_q = lengths_input(*graph, "seq_len_q", kSeqLenQ, key.sequences);
  const Tensor seq_len_kv = lengths_input(*graph, "seq_len_kv", kSeqLenKv, key.sequences);
  const float scale = 1.0f / std::sqrt(static_cast<float>(key.head_dim));
  if (key.pass != Pass::Backward) {
    auto options = fe::graph::SDPA_attributes()
                       .set_name("flash_attention")
                       .set_generate_stats(true)
                       .set_causal_mask_bottom_right(true)
                       .set_padding_mask(true)
                       .set_seq_len_q(seq_len_q)
                       .set_seq_len_kv(seq_len_kv)
                       .set_attn_scale(scale);
    auto [o, stats] = graph->sdpa(q, k, v, options);
    o->set_output(true).set_uid(kO);
    lay_out_token_major(*graph, o, key, h, sq, kOOffsets);
    stats->set_output(true);
    lay_out_stats(stats, key);
    return graph;
  }
  const Tensor o = token_major_input(*graph, "O", kO, key, h, sq, kOOffsets);
  const Tensor d_o = token_major_input(*graph, "dO", kDo, key, h, sq, kDoOffsets);
  const Tensor stats = graph->tensor(fe::graph::Tensor_attributes().set_name("Stats"));
  lay_out_stats(stats, key);
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("flash_attention_backward")
                     .set_causal_mask_bottom_right(true)
                     .set_padding_mask(true)
                     .set_seq_len_q(seq_len_q)
                     .set_seq_len_kv(seq_len_kv)
                     .set_attn_scale(scale);
  auto [dq, dk, dv] = graph->sdpa_backward(q, k, v, o, d_o, stats, options);
  dq->set_output(true).set_uid(kDq);
  lay_out_token_major(*graph, dq, key, h, sq, kDqOffsets);
  dk->set_output(true).set_uid(kDk);
  lay_out_token_major(*graph, dk, key, hk, skv, kDkOffsets);
  dv->set_output(true).set_uid(kDv);
  lay_out_token_major(*graph, dv, key, hk, skv, kDvOffsets);
  return graph;
}

struct CachedGraph {
  std::shared_ptr<fe::graph::Graph> graph;
  std::int64_t workspace_bytes = 0;
};

// A batch's lengths and offsets on the device, one int32 array:
// seq_len_q[b], seq_len_kv[b], query_offsets[b+1], key_offsets[b+1].
struct DeviceLengths {
  std::int32_t* data = nullptr;
  std::uint32_t sequences = 0;
  std::int32_t* seq_len_q() const { return data; }
  std::int32_t* seq_len_kv() const { return data + sequences; }
  std::int32_t* query_offsets() const { return data + 2 * sequences; }
  std::int32_t* key_offsets() const { return data + 3 * sequences + 1; }
};

}  // namespace

struct CudnnAttention::State {
  cudaStream_t stream = nullptr;
  cudnnHandle_t handle = nullptr;
  std::map<AttentionGraphKey, CachedGraph> graphs;
  std::map<std::vector<std::int32_t>, DeviceLengths> lengths;
  void* workspace = nullptr;
  std::int64_t workspace_bytes = 0;

  ~State() {
    if (stream) cudaStreamSynchronize(stream);
    for (auto& [host, device] : lengths) cudaFree(device.data);
    cudaFree(workspace);
    if (handle) cudnnDestroy(handle);
  }

  const CachedGraph& graph_for(const AttentionGraphKey& key) {
    auto it = graphs.find(key);
    if (it != graphs.end()) return it->second;
    CachedGraph cached{make_graph(key), 0};
    fe::error_t built = cached.graph->build(handle, {fe::HeurMode_t::A});
    if (!built.is_good()) {
      throw std::runtime_error(fmt::format("cuDNN {} has no flash-attention engine for the {}: {}", cudnn_version(),
                                           describe(key), built.get_message()));
    }
    fe::error_t sized = cached.graph->get_workspace_size(cached.workspace_bytes);
    if (!sized.is_good()) throw std::runtime_error(fmt::format("cuDNN: workspace of the {}: {}", describe(key), sized.get_message()));
    if (cached.workspace_bytes > workspace_bytes) {
      check(cudaFree(workspace), "cudaFree");  // synchronises: no graph still uses it
      workspace = nullptr;
      workspace_bytes = 0;
      check(cudaMalloc(&workspace, static_cast<std::size_t>(cached.workspace_bytes)), "cudaMalloc");
      workspace_bytes = cached.workspace_bytes;
    }
    return graphs.emplace(key, std::move(cached)).first->second;
  }

  const DeviceLengths& lengths_for(const AttentionBatch& batch) {
    std::vector<std::int32_t> host = batch.query_tokens;
    host.insert(host.end(), batch.key_tokens.begin(), batch.key_tokens.end());
    host.insert(host.end(), batch.query_offsets.begin(), batch.query_offsets.end());
    host.insert(host.end(), batch.key_offsets.begin(), batch.key_offsets.end());
    auto it = lengths.find(host);
    if (it != lengths.end()) return it->second;
    DeviceLengths device{nullptr, batch.sequences()};
    check(cudaMalloc(&device.data, host.size() * sizeof(std::int32_t)), "cudaMalloc");
    check(cudaMemcpy(device.data, host.data(), host.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice), "cudaMemcpy");
    return lengths.emplace(std::move(host), device).first->second;
  }
};

std::uint64_t cudnn_attention_stats_elements(const AttentionGraphKey& key) {
  return std::uint64_t{key.sequences} * key.heads * static_cast<std::uint64_t>(key.max_query_tokens);
}

CudnnAttention::CudnnAttention(cudaStream_t stream) : state_(std::make_unique<State>()) {
  state_->stream = stream;
  check_cudnn(cudnnCreate(&state_->handle), "cudnnCreate");
  check_cudnn(cudnnSetStream(state_->handle, stream), "cudnnSetStream");
}

CudnnAttention::~CudnnAttention() = default;

std::size_t CudnnAttention::cached_graphs() const { return state_->graphs.size(); }

void CudnnAttention::run(const AttentionBatch& batch, Pass pass, const CudnnAttentionTensors& t) {
  if (batch.sequences() == 0) return;
  const AttentionGraphKey key = attention_graph_key(batch, pass);
  const CachedGraph& cached = state_->graph_for(key);
  const DeviceLengths& lengths = state_->lengths_for(batch);
  std::unordered_map<Uid, void*> pack = {
      {kQ, const_cast<void*>(t.q)},      {kK, const_cast<void*>(t.k)},     {kV, const_cast<void*>(t.v)},
      {kO, t.o},                         {kStats, t.stats},                {kSeqLenQ, lengths.seq_len_q()},
      {kSeqLenKv, lengths.seq_len_kv()},
  };
  for (Uid uid : {kQOffsets, kOOffsets}) pack[uid] = lengths.query_offsets();
  for (Uid uid : {kKOffsets, kVOffsets}) pack[uid] = lengths.key_offsets();
  if (key.pass == Pass::Backward) {
    pack[kDo] = const_cast<void*>(t.d_o);
    pack[kDq] = t.dq;
    pack[kDk] = t.dk;
    pack[kDv] = t.dv;
    for (Uid uid : {kDoOffsets, kDqOffsets}) pack[uid] = lengths.query_offsets();
    for (Uid uid : {kDkOffsets, kDvOffsets}) pack[uid] = lengths.key_offsets();
  }
  fe::error_t executed = cached.graph->execute(state_->handle, pack, state_->workspace);
  if (!executed.is_good()) {
    throw std::runtime_error(fmt::format("cuDNN: flash attention, {}: {}", describe(key), executed.get_message()));
  }
}

std::string cudnn_attention_graph_error(const AttentionGraphKey& key, int sm_version) {
  fe::error_t valid = make_graph(key, sm_version)->validate();
  return valid.is_good() ? std::string() : valid.get_message();
}

std::string cudnn_version() {
  const std::size_t v = cudnnGetVersion();
  return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

}  // namespace eppsim::runtime
