#pragma once
// Communication of sequence parallelism inside a transformer layer, per GPU of a
// degree-d group working on a chunk of T tokens (each GPU holds a T/d-token shard).
// e = bytes per element, h = hidden size, kv = kv_dim (= h without GQA).
//
// Ulysses (DeepSpeed-Ulysses, FlexSP, InfiniPipe): all-to-alls switch between
// sequence-sharded and head-sharded layouts. Per layer and pass, 4 all-to-alls:
//   forward / recompute  Q (h), K (kv), V (kv) before attention, output (h) after
//   backward             d(output) (h) before attention's backward, dQ (h), dK (kv),
//                        dV (kv) after
//   per-GPU buffer of one all-to-all  = T/d * width * e   (schedule.proto's size_bytes)
//   bytes leaving the GPU             = (d-1)/d of it     (the 1/d for itself stays)
//   per layer and pass: buffer = 2 * T/d * (h + kv) * e  (FlexSP: 4 * T/d * h * e, MHA).
//   A Schedule runs them as 2 collectives per layer and pass (ulysses_layer_exchanges):
//   Q, K and V in one all-to-all before attention and the output after it (forward,
//   recompute); d(output) before attention's backward and dQ, dK, dV in one after it;
//   time = the sum of those 2, each priced by the cost model's all-to-all over the group.
//   Only the chunk's new tokens move: the K/V of earlier slices (Segment::context_tokens)
//   were exchanged when those slices ran and are kept head-sharded.
//   Heads are split over the group, so d should divide heads and kv_heads
//   (ulysses_degree_fits); the volumes do not enforce it.
//
// Ring context parallelism (Megatron-Core CP with TransformerEngine's P2P ring):
// every GPU keeps its Q shard; K/V shards travel round a ring of d GPUs in d-1 steps,
// each overlapped with the attention of the block that has arrived (packed_1f1b.h
// emits the steps as sends and receives beside the attention op; the executor
// times them, so a layer exposes what its attention does not hide).
//   forward / recompute  per step each GPU sends its current K+V block:
//                          step bytes = 2 * KV/d * kv * e   (KV = tokens whose K/V are attended)
//                          per layer:  (d-1) steps = 2(d-1)/d * KV * kv * e
//   backward             K/V circulate again (the blocks' attention is recomputed) and
//                        dK/dV blocks circulate to accumulate: twice the forward bytes
//                        per step (RingOptions::backward_resends_kv = false: dK/dV only,
//                        flexsp.md section 6's "same for dK/dV").
//   KV counts new and context tokens: T for whole sequences; for a slice with a
//   context, the context's K/V (sharded over the group too) also travels.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "models/chunk.h"
#include "models/cost_model.h"
#include "models/transformer_spec.h"
#include "base/units.h"

namespace eppsim {

// Whether a Ulysses group of `degree` splits the model's heads and KV heads evenly.
bool ulysses_degree_fits(const TransformerSpec& model, std::uint32_t degree);

// One Ulysses all-to-all of a layer, in execution order.
struct UlyssesAllToAll {
  std::string_view tensor;  // "q", "k", "v", "out" forward; "dout", "dq", "dk", "dv" backward
  Bytes buffer;             // per-GPU send buffer (the collective's size_bytes)
  Bytes sent;               // leaving the GPU: (d-1)/d * buffer
};

// The 4 all-to-alls of one layer in `pass` for `tokens` new tokens at `degree`
// (degree 1: empty buffers). Throws InputError for degree 0.
std::array<UlyssesAllToAll, 4> ulysses_layer_all_to_alls(const TransformerSpec& model, std::uint64_t tokens,
                                                          std::uint32_t degree, Pass pass);

// The per-GPU buffers (size_bytes) of the 2 all-to-alls a layer runs in `pass`, in
// execution order: [0] before the attention kernel (forward: Q+K+V; backward:
// d(output)), [1] after it (forward: output; backward: dQ+dK+dV). Degree 1: zeros.
std::array<Bytes, 2> ulysses_layer_exchanges(const TransformerSpec& model, std::uint64_t tokens,
                                             std::uint32_t degree, Pass pass);

struct UlyssesLayerCost {
  Bytes buffer;  // sum of the 4 per-GPU buffers: 2 * T/d * (h + kv) * e
  Bytes sent;    // sum of what leaves the GPU: (d-1)/d of it
};

// Per layer and pass. Throws InputError for degree 0.
UlyssesLayerCost ulysses_layer_cost(const TransformerSpec& model, std::uint64_t tokens, std::uint32_t degree,
                                    Pass pass);
// The same for a packed chunk: the segments' new tokens (context tokens do not move).
UlyssesLayerCost ulysses_layer_cost(const TransformerSpec& model, std::span<const Segment> segments,
                                    std::uint32_t degree, Pass pass);
// The time of the layer's 2 all-to-alls (ulysses_layer_exchanges) over `group` (its size is the degree;
// 0 for one rank), each priced by `cost` (CollectiveAlgorithm::Auto).
Seconds ulysses_layer_time(const TransformerSpec& model, std::uint64_t tokens, std::span<const std::uint32_t> group,
                           Pass pass, const CostModel& cost);

struct RingOptions {
  bool backward_resends_kv = true;  // TransformerEngine: backward sends K/V and dK/dV
  // Tensor parallelism splits the heads: each rank circulates 1/head_shards of
  // the K/V (and dK/dV) blocks. 0 means 1.
  std::uint32_t head_shards = 1;
};

// Bytes each GPU sends per ring step of one layer in `pass` (K+V blocks forward;
// with dK/dV backward): 2 * KV/d * kv * e / head_shards per block. 0 at degree 1.
// `kv_tokens`: the tokens whose K/V the chunk's queries attend (new plus context);
// the segments overload sums tokens + context_tokens. Throws InputError for degree 0.
Bytes ring_attention_step_bytes(const TransformerSpec& model, std::uint64_t kv_tokens, std::uint32_t degree, Pass pass,
                                RingOptions options = {});
Bytes ring_attention_step_bytes(const TransformerSpec& model, std::span<const Segment> segments, std::uint32_t degree,
                                Pass pass, RingOptions options = {});

}  // namespace eppsim
