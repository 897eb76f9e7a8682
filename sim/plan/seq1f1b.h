#pragma once
// `seq1f1b` (Seq1F1B, infinipipe.md section 5): pipeline parallelism across nodes
// and DeepSpeed-Ulysses sequence parallelism inside them, with sequence-level 1F1B.
//
// Layout: `pipeline_stages` stages (default: the live nodes), each stage made of
// data_parallel = GPUs / (stages * sp_degree) SP groups of `sp_degree` consecutive
// ranks (default: a node); rank = (stage * dp + replica) * sp + i.
//
// Work: sequences go to replicas longest-processing-time first (estimated
// whole-model forward time). On each replica every sequence longer than
// `chunk_tokens` is cut into `slices` slices of equal forward FLOPs (attention +
// GEMM terms of the cost model, boundaries by bisection on the cumulative FLOPs,
// so later slices are shorter: they attend to a longer context); each slice is a
// chunk of its own, carrying its context in Segment::context_tokens. Shorter
// sequences are packed best-fit-decreasing into chunks of at most `chunk_tokens`.
// Chunk order: split sequences (longest first, slices in order), then packed chunks.
//
// Order (partially ordered queue, Seq1F1B's sp_queue): forwards in chunk order;
// backwards FIFO across sequences and LIFO within a sequence, so a sequence's
// slices run backward in reverse and only once all of them have run forward. On
// stage s the k-th backward comes after max(warm-up + k + 1, forwards through the
// end of the warm-up-th sequence after the popped one) forwards (warm-up =
// stages - s - 1, as in 1F1B, but counted in whole sequences: counted in chunks,
// as InfiniPipe's Eq. 7 window reads, the next stage waits for a sequence's
// remaining chunks while this one runs backwards); this count never grows with
// the stage, which keeps the pipeline deadlock-free.
//
// Per chunk and stage, each rank (its 1/sp of the chunk: compute ops split
// SEQUENCE_PARALLEL over the SP group):
//   forward  [recv] MEMORY ACTIVATIONS (+ KV_EARLIER_SLICES for a non-final slice:
//            the K/V of its tokens over the stage's layers, which later slices read;
//            split out of chunk_activation_bytes, total unchanged) FORWARD of the
//            stage's layers, each as Ulysses runs it (layer_pieces.h: PRE_ATTENTION,
//            Q+K+V all-to-all, ATTENTION, output all-to-all, POST_ATTENTION; one
//            LAYER_WHOLE op for the stage at sp 1), [send]
//   backward [recv] (last slice of a split sequence: MEMORY DKV_BUFFER, the dK/dV of
//            all its earlier slices) WORKSPACE, RECOMPUTE of the stage's last
//            `checkpointed_layers` layers (pieces as forward), BACKWARD (pieces in
//            reverse, the last layer first), free ACTIVATIONS, KV_EARLIER_SLICES and
//            (non-final slices) this slice's share of the DKV_BUFFER, [send]
//   Boundary sends: pipeline_boundary_bytes(T, sp), each rank to the same position
//   of the next stage's group.
// Ulysses replicates the weights in an SP group, so gradients are reduced over all
// dp * sp ranks of a stage, and ZeRO-1/2 shards the states over them (an
// all-reduce / reduce-scatter then all-gather, as in packed-1f1b).
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "models/chunk.h"
#include "models/transformer_spec.h"
#include "sim/plan/planner.h"

namespace eppsim {

// plan.seq1f1b and plan.zero_stage, resolved and checked.
struct Seq1F1BOptions {
  std::uint32_t pipeline_stages = 1;      // default: the live nodes
  std::uint32_t sp_degree = 1;            // default: cluster.gpus_per_node
  std::uint32_t slices = 4;               // slices per long sequence
  std::uint64_t chunk_tokens = 0;         // default: ceil(max_length / slices)
  std::uint32_t checkpointed_layers = 0;  // per stage, recomputed in every chunk
  std::uint32_t zero_stage = 0;           // 0 to 2
};

// Resolves the defaults and checks: stages at most the model's layers; SP
// inside a node, dividing gpus_per_node and the model's attention and KV heads;
// stages x sp dividing the GPUs; checkpointed_layers at most the smallest
// stage's layers; ZeRO stage at most 2. InputError located by the scenario's
// FieldLocator.
Seq1F1BOptions resolve_seq1f1b_options(const ResolvedScenario& scenario);

class Seq1F1BPlanner final : public Planner {
 public:
  explicit Seq1F1BPlanner(Seq1F1BOptions options) : options_(options) {}
  std::string name() const override { return "seq1f1b"; }
  proto::Schedule plan(const PlanContext& scenario, std::span<const std::uint64_t> sequence_lengths) const override;

 private:
  Seq1F1BOptions options_;
};

// Lengths of `slices` slices of a `length`-token sequence with equal forward FLOPs
// over the whole model (later slices shorter); min(slices, length) slices, each
// >= 1 token, summing to `length`.
std::vector<std::uint64_t> balanced_slice_lengths(const TransformerSpec& model, std::uint64_t length,
                                                  std::uint32_t slices);

// Seq1F1B's queue of chunks waiting for their backward: FIFO across sequences,
// LIFO within one. A sequence's chunks become poppable once its last is pushed.
class PartiallyOrderedQueue {
 public:
  // `last`: the sequence's final chunk (a packed chunk is a sequence of one).
  void push(std::uint32_t chunk, std::uint32_t sequence, bool last);
  bool ready() const;     // the oldest sequence is complete
  std::uint32_t pop();    // its latest chunk; requires ready()
  bool empty() const { return groups_.empty(); }

 private:
  struct Group {
    std::uint32_t sequence = 0;
    bool complete = false;
    std::vector<std::uint32_t> chunks;
  };
  std::vector<Group> groups_;  // front = oldest
  std::size_t front_ = 0;
};

struct Seq1F1BChunk {
  std::vector<Segment> segments;
  std::uint32_t sequence = 0;   // id of the split sequence, or a unique id for a packed chunk
  bool last_slice = true;       // false: a non-final slice (attended by later ones)
  // The batch index of the sequence this chunk is a slice of (its first
  // segment), or -1 for a chunk of whole sequences.
  std::int64_t batch_sequence = -1;
  std::uint64_t tokens() const;
};

// One stage's op order: (forward?, chunk) pairs, by the rule above.
std::vector<std::pair<bool, std::uint32_t>> seq1f1b_order(std::uint32_t stage, std::uint32_t stages,
                                                          std::span<const Seq1F1BChunk> chunks);

}  // namespace eppsim
