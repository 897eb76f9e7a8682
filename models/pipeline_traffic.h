#pragma once
// Pipeline-parallel send/receive volume between adjacent stages.
//
// At a stage boundary the forward sends the boundary activations (the hidden state
// entering the next stage's first layer) of every token of the micro-batch, and
// the backward sends their gradient back, the same size:
//   bytes = T * h * e / shard
// where shard is the degree over which the boundary tensor is split: the SP
// degree (Ulysses and ring CP keep activations sequence-sharded between layers;
// each GPU sends its shard to its peer in the next stage), or the TP degree with
// Megatron sequence parallelism. 1 when each rank sends the whole tensor.
#include <cstdint>

#include "models/transformer_spec.h"
#include "base/units.h"

namespace eppsim {

// Bytes one rank sends to its peer stage per micro-batch and direction (the SEND's
// size_bytes), rounded to the nearest byte. Throws InputError for shard 0.
Bytes pipeline_boundary_bytes(const TransformerSpec& model, std::uint64_t tokens, std::uint32_t shard = 1);

}  // namespace eppsim
