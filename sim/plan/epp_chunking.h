#pragma once
// InfiniPipe's chunks and its workload-balanced chunking (Algorithm 1;
// infinipipe.md sections 1.1 and 1.3).
//
// A chunk is {C, S}: one or more segments run as one micro-batch (varlen
// attention: each segment attends only to itself and to its own context).
//   split    one non-final slice of a long sequence, context C = its earlier
//            slices; later slices read its K/V;
//   batched  whole short sequences packed together, C = 0;
//   hybrid   a long sequence's tail (final) slice, with its context, plus whole
//            short sequences. A chunk holds at most one tail slice: two would
//            force two long sequences to be co-scheduled.
// A long sequence's final slice becomes a hybrid chunk even when nothing joins
// it (then it is a hybrid chunk of one segment).
//
// Algorithm 1 with slice number K, as eppsim reads it (the paper's section
// III-B prose is missing; the choices are ours, tested in epp_chunking_test):
//   1. The longest sequence is cut into K slices of equal forward FLOPs
//      (balanced_slice_lengths, later slices shorter); the slice boundaries
//      are the mesh. The time target T_t is the costliest of these slices and
//      the token cap T_m the largest slice's tokens.
//   2. A sequence longer than the first mesh boundary is long: it is cut at
//      every mesh boundary below its length, so each full piece costs what
//      the longest sequence's slice at the same place costs (same context,
//      same length); its last piece is its tail slice. Other sequences are
//      short.
//   3. Every tail slice opens a bucket. Short sequences, by time descending,
//      go best-fit: when no bucket has token room (min tokens + n > T_m) a new
//      bucket opens; otherwise the first bucket, by ascending time per token
//      (the least long-sequence work), with time + t <= T_t and tokens + n <=
//      T_m takes it; if none, T_t is loosened to the smallest time + t among
//      the buckets with token room and that bucket takes it.
//   4. Buckets with a tail slice are hybrid chunks, the others batched.
// Chunk time is the caller's estimate (forward + backward of the whole model
// and its all-to-alls); a bucket's time is the sum of its segments' times.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "models/chunk.h"
#include "models/transformer_spec.h"

namespace eppsim {

enum class EppChunkKind { Split, Batched, Hybrid };

struct EppChunk {
  EppChunkKind kind = EppChunkKind::Batched;
  // Segments: for split and hybrid chunks the long sequence's slice comes
  // first (context_tokens = its earlier slices); short sequences have none.
  std::vector<Segment> segments;
  // The long sequence whose slice this is (index into the batch), or -1.
  std::int64_t long_sequence = -1;
  std::uint32_t slice = 0;              // its slice index for split and hybrid chunks
  std::vector<std::uint32_t> shorts;    // batch indices of the whole short sequences
  double seconds = 0.0;                 // estimated time (the sum over segments)

  std::uint64_t tokens() const;
  // Tokens later slices attend to: a split chunk's own tokens, else 0.
  std::uint64_t prefix_tokens() const { return kind == EppChunkKind::Split ? tokens() : 0; }
};

// A schedulable unit: a long sequence (its split chunks in order, then its
// hybrid chunk) or one batched chunk.
struct EppUnit {
  std::vector<EppChunk> chunks;
  std::uint64_t longest_tokens = 0;  // the long sequence's length, or the batched chunk's longest segment
};

struct EppChunking {
  std::uint32_t slices = 0;            // K
  double time_target_s = 0.0;          // T_t after loosening
  std::uint64_t token_cap = 0;         // T_m
  std::vector<EppUnit> units;          // long sequences (longest first), then batched chunks (costliest first)
  std::size_t chunk_count() const;
};

// Estimated seconds of one segment run alone (its context counted).
using SegmentSeconds = std::function<double(const Segment&)>;

// Algorithm 1 for slice number `slices` >= 1 over the batch `lengths` (all > 0).
// Every token of the batch lands in exactly one chunk.
EppChunking balanced_chunking(const TransformerSpec& model, std::span<const std::uint64_t> lengths,
                              std::uint32_t slices, const SegmentSeconds& seconds);

// `epp-even-split` (the paper's "w/o wbc" ablation): every sequence longer than
// ceil(max / slices) tokens is cut into pieces of exactly that many tokens (the
// last shorter), and the rest, short sequences and tails alike, are packed
// best-fit-decreasing into chunks of at most that many tokens with no regard to
// time; a tail still never shares a chunk with another tail.
EppChunking even_chunking(std::span<const std::uint64_t> lengths, std::uint32_t slices, const SegmentSeconds& seconds);

}  // namespace eppsim
