#pragma once
// The unit of work that planners hand to cost models: a chunk of tokens from one
// or more sequences, run through a range of layers.
#include <cstdint>
#include <span>

namespace eppsim {

// `tokens` new tokens of one sequence, attending causally to themselves and to
// `context_tokens` earlier tokens of the same sequence (0 for a whole sequence).
struct Segment {
  std::uint64_t tokens = 0;
  std::uint64_t context_tokens = 0;
};

struct ChunkWork {
  std::span<const Segment> segments;
  std::uint32_t layer_count = 0;
  bool includes_embedding = false;  // first stage: token (and position) embedding
  bool includes_lm_head = false;    // last stage: final norm, output projection, loss
};

enum class Pass { Forward, Backward, Recompute };

}  // namespace eppsim
