#include "sim/plan/seq1f1b.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "models/activation_memory.h"
#include "models/compute_cost.h"
#include "base/errors.h"
#include "models/memory_model.h"
#include "models/pipeline_traffic.h"
#include "models/sequence_parallel_cost.h"
#include "sim/plan/layer_pieces.h"
#include "sim/plan/packed_1f1b.h"
#include "sim/plan/packing.h"
#include "sim/plan/sliced_sequences.h"
#include "sim/plan/planner_registry.h"
#include "sim/plan/plan_estimate.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/stages_and_sp.h"

namespace eppsim {

std::vector<std::uint64_t> balanced_slice_lengths(const TransformerSpec& model, std::uint64_t length,
                                                  std::uint32_t slices) {
  const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::max<std::uint32_t>(slices, 1), length));
  if (n <= 1) return {length};
  // Forward FLOPs of the first x tokens; a slice [a, b) costs prefix(b) - prefix(a)
  // exactly (GEMMs are linear in tokens, causal attention pairs telescope).
  auto prefix = [&](std::uint64_t x) {
    const std::array<Segment, 1> one{Segment{x, 0}};
    return chunk_flops(model, Pass::Forward, ChunkWork{one, model.layers, false, false}).total();
  };
  const double total = prefix(length);
  std::vector<std::uint64_t> bounds{0};
  for (std::uint32_t k = 1; k < n; ++k) {
    const double target = total * k / n;
    // Smallest x with prefix(x) >= target, leaving room for the remaining slices.
    std::uint64_t lo = bounds.back() + 1, hi = length - (n - k);
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (prefix(mid) >= target) hi = mid; else lo = mid + 1;
    }
    // The closer of lo and lo - 1.
    if (lo - 1 > bounds.back() && target - prefix(lo - 1) < prefix(lo) - target) --lo;
    bounds.push_back(lo);
  }
  bounds.push_back(length);
  std::vector<std::uint64_t> lengths;
  for (std::size_t i = 1; i < bounds.size(); ++i) lengths.push_back(bounds[i] - bounds[i - 1]);
  return lengths;
}

void PartiallyOrderedQueue::push(std::uint32_t chunk, std::uint32_t sequence, bool last) {
  if (groups_.size() == front_ || groups_.back().complete || groups_.back().sequence != sequence) {
    groups_.push_back(Group{sequence, false, {}});
  }
  groups_.back().chunks.push_back(chunk);
  groups_.back().complete = last;
}

bool PartiallyOrderedQueue::ready() const { return front_ < groups_.size() && groups_[front_].complete; }

std::uint32_t PartiallyOrderedQueue::pop() {
  if (!ready()) throw std::logic_error("PartiallyOrderedQueue::pop: the oldest sequence is not complete");
  auto& group = groups_[front_];
  const std::uint32_t chunk = group.chunks.back();
  group.chunks.pop_back();
  if (group.chunks.empty()) ++front_;
  if (front_ == groups_.size()) {
    groups_.clear();
    front_ = 0;
  }
  return chunk;
}

std::uint64_t Seq1F1BChunk::tokens() const {
  std::uint64_t t = 0;
  for (const auto& s : segments) t += s.tokens;
  return t;
}

std::vector<std::pair<bool, std::uint32_t>> seq1f1b_order(std::uint32_t stage, std::uint32_t stages,
                                                          std::span<const Seq1F1BChunk> chunks) {
  const auto m = static_cast<std::uint32_t>(chunks.size());
  const std::uint32_t warmup = std::min(stages - stage - 1, m);
  // The forward position of the last chunk of each chunk's sequence (a sequence's
  // chunks are consecutive and end with its last slice).
  std::vector<std::uint32_t> sequence_end(m, 0);
  for (std::uint32_t j = m; j-- > 0;) {
    sequence_end[j] = chunks[j].last_slice || j + 1 == m ? j : sequence_end[j + 1];
  }
  // Backwards pop whole sequences in forward order, each in reverse.
  std::vector<std::uint32_t> backward_order;
  for (std::uint32_t j = 0; j < m; j = sequence_end[j] + 1) {
    for (std::uint32_t i = sequence_end[j] + 1; i-- > j;) backward_order.push_back(i);
  }
  std::vector<std::pair<bool, std::uint32_t>> order;
  order.reserve(2 * m);
  PartiallyOrderedQueue queue;
  std::uint32_t forwards = 0;
  for (std::uint32_t k = 0; k < m; ++k) {
    // Warm-up in whole sequences: before a sequence's backward, the forwards run
    // through the end of the `warmup`-th sequence after it (and, as 1F1B, at
    // least warmup + k + 1 of them).
    std::uint32_t end = sequence_end[backward_order[k]];
    for (std::uint32_t w = 0; w < warmup && end + 1 < m; ++w) end = sequence_end[end + 1];
    const std::uint32_t needed = std::min(m, std::max(warmup + k + 1, end + 1));
    while (forwards < needed || !queue.ready()) {
      queue.push(forwards, chunks[forwards].sequence, chunks[forwards].last_slice);
      order.emplace_back(true, forwards);
      ++forwards;
    }
    order.emplace_back(false, queue.pop());
  }
  return order;
}

namespace {

// The chunks of one replica (the batch sequences `mine`): split sequences
// first (longest first), then packed ones.
std::vector<Seq1F1BChunk> replica_chunks(const TransformerSpec& model, std::span<const std::uint64_t> lengths,
                                         std::span<const std::uint32_t> mine, std::uint32_t slices,
                                         std::uint64_t chunk_tokens, std::uint32_t* next_id) {
  std::vector<std::uint32_t> longs;
  std::vector<std::uint64_t> shorts;
  for (auto i : mine) {
    if (lengths[i] > chunk_tokens) {
      longs.push_back(i);
    } else {
      shorts.push_back(lengths[i]);
    }
  }
  std::stable_sort(longs.begin(), longs.end(), [&](std::uint32_t a, std::uint32_t b) { return lengths[a] > lengths[b]; });
  std::vector<Seq1F1BChunk> chunks;
  for (auto i : longs) {
    const std::uint32_t id = (*next_id)++;
    const auto parts = balanced_slice_lengths(model, lengths[i], slices);
    std::uint64_t context = 0;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      chunks.push_back(Seq1F1BChunk{{Segment{parts[k], context}}, id, k + 1 == parts.size(), static_cast<std::int64_t>(i)});
      context += parts[k];
    }
  }
  for (const auto& bin : best_fit_decreasing(shorts, chunk_tokens)) {
    Seq1F1BChunk chunk;
    chunk.sequence = (*next_id)++;
    for (auto k : bin) chunk.segments.push_back(Segment{shorts[k], 0});
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

std::uint64_t minus(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; }

}  // namespace

// Seq1F1B: defaults pipeline_stages = live nodes, sp_degree = gpus_per_node,
// slices = 4, chunk_tokens = ceil(max_length / slices), checkpointed_layers = 0.
Seq1F1BOptions resolve_seq1f1b_options(const ResolvedScenario& resolved) {
  const FieldLocator& where = resolved.where();
  const proto::Plan& plan = resolved.proto.plan();
  const proto::Seq1F1BOptions& options = plan.seq1f1b();
  const StagesAndSp layout =
      resolve_stages_and_sp(resolved, "plan.seq1f1b", options.pipeline_stages(), options.sp_degree());
  const std::uint32_t stages = layout.pipeline_stages;
  const std::uint32_t min_layers = resolved.model.layers / stages;
  if (options.checkpointed_layers() > min_layers) {
    where.fail("plan.seq1f1b.checkpointed_layers",
               fmt::format("must be <= the {} layers of the smallest stage, got {}", min_layers,
                           options.checkpointed_layers()));
  }
  if (plan.zero_stage() > 2) {
    where.fail("plan.zero_stage", fmt::format("seq1f1b supports ZeRO stages 0 to 2, got {}", plan.zero_stage()));
  }
  const std::uint32_t slices = options.slices() > 0 ? options.slices() : 4;
  const std::uint64_t chunk_tokens = options.chunk_tokens() > 0
                                         ? options.chunk_tokens()
                                         : std::max<std::uint64_t>(1, (resolved.workload.max_length + slices - 1) / slices);
  return Seq1F1BOptions{stages, layout.sp_degree, slices, chunk_tokens, options.checkpointed_layers(), plan.zero_stage()};
}

std::vector<PlannerRegistration> seq1f1b_registrations() {
  return {register_planner<Seq1F1BOptions>("seq1f1b", resolve_seq1f1b_options, [](Seq1F1BOptions options) {
    return std::make_unique<Seq1F1BPlanner>(options);
  })};
}

proto::Schedule Seq1F1BPlanner::plan(const PlanContext& sc, std::span<const std::uint64_t> lengths) const {
  const std::uint32_t num_ranks = sc.usable_gpus();
  const std::uint32_t stages = options_.pipeline_stages;
  const std::uint32_t sp = options_.sp_degree;
  const std::uint32_t slices = options_.slices;
  const std::uint64_t chunk_tokens = options_.chunk_tokens;
  const std::uint32_t zero_stage = options_.zero_stage;
  const auto& model = sc.model;
  const std::uint32_t checkpointed = options_.checkpointed_layers;
  const std::uint32_t data_parallel = num_ranks / (stages * sp);
  const std::uint32_t stage_ranks = data_parallel * sp;
  const auto shapes = stage_shapes(model, stages);

  // 1. Sequences to replicas, then chunks per replica.
  const Bins replicas = PlanEstimate(model, *sc.cost).balance_replicas(lengths, data_parallel);
  std::vector<std::vector<Seq1F1BChunk>> chunks(data_parallel);
  std::uint32_t next_id = 0;
  std::uint32_t most_chunks = 0;
  for (std::uint32_t d = 0; d < data_parallel; ++d) {
    chunks[d] = replica_chunks(model, lengths, replicas[d], slices, chunk_tokens, &next_id);
    most_chunks = std::max(most_chunks, static_cast<std::uint32_t>(chunks[d].size()));
  }

  ScheduleBuilder b(num_ranks, sc.name, name(), model);
  const auto [compute, recv_prev, send_next, recv_next, send_prev, comm] = add_pipeline_streams(b);
  auto rank_of = [&](std::uint32_t stage, std::uint32_t replica, std::uint32_t i) {
    return (stage * data_parallel + replica) * sp + i;
  };
  for (std::uint32_t r = 0; r < num_ranks; ++r) b.place(r, sc.node_of_rank(r), sc.local_gpu_of(r));
  std::vector<std::uint32_t> sp_groups(stages * data_parallel);
  if (sp > 1) {
    for (std::uint32_t s = 0; s < stages; ++s)
      for (std::uint32_t d = 0; d < data_parallel; ++d) {
        std::vector<std::uint32_t> ranks;
        for (std::uint32_t i = 0; i < sp; ++i) ranks.push_back(rank_of(s, d, i));
        sp_groups[s * data_parallel + d] = b.add_group(fmt::format("sequence-parallel stage {} replica {}", s, d), std::move(ranks));
      }
  }
  std::vector<std::uint32_t> grad_groups(stages);
  if (stage_ranks > 1) {
    for (std::uint32_t s = 0; s < stages; ++s) {
      std::vector<std::uint32_t> ranks;
      for (std::uint32_t r = 0; r < stage_ranks; ++r) ranks.push_back(s * stage_ranks + r);
      grad_groups[s] = b.add_group(fmt::format("gradients stage {}", s), std::move(ranks));
    }
  }

  const ActivationOptions activation_options{sp, LogitsMemory::FusedInPlace};
  double model_flops = 0.0;
  std::uint64_t total_tokens = 0;
  for (auto len : lengths) total_tokens += len;

  for (std::uint32_t s = 0; s < stages; ++s) {
    const auto& shape = shapes[s];
    const std::uint32_t l = shape.layer_count;
    const ModelStateBytes states = model_state_bytes(shape.params, zero_stage, stage_ranks);
    for (std::uint32_t d = 0; d < data_parallel; ++d) {
      const auto& mine = chunks[d];
      const auto order = seq1f1b_order(s, stages, mine);
      // dK/dV bytes of each split sequence's non-final slices, allocated at its last slice's backward.
      std::vector<std::uint64_t> dkv_of_sequence(next_id, 0);
      for (const auto& chunk : mine) {
        if (!chunk.last_slice) dkv_of_sequence[chunk.sequence] += prefix_dkv_buffer_bytes(model, chunk.tokens(), l, sp).count;
      }
      UlyssesGroup ulysses{sp_groups[s * data_parallel + d], sp, {}};
      ulysses.split.add(proto::SEQUENCE_PARALLEL, ulysses.group, sp);
      // A pass's pieces are the same on every rank of the SP group: built once per
      // (chunk, pass) and listed once in the shared computes (emit_pieces).
      std::map<std::pair<std::uint32_t, Pass>, std::vector<LayerPiece>> piece_cache;
      auto stage_pieces = [&](Pass pass, std::uint32_t j, std::uint32_t first_layer, std::uint32_t layers, bool lm_head,
                              std::span<const Segment> segments) -> std::vector<LayerPiece>& {
        auto [it, inserted] = piece_cache.try_emplace(std::make_pair(j, pass));
        if (inserted) it->second = ulysses_stage_pieces(sc, pass, s, j, first_layer, layers, lm_head, segments, ulysses);
        return it->second;
      };
      for (std::uint32_t i = 0; i < sp; ++i) {
        const auto rank = rank_of(s, d, i);
        OpIndex last = b.memory(rank, compute, {}, true, states.total().count, proto::MODEL_STATES);
        for (const auto& [forward, j] : order) {
          const auto& chunk = mine[j];
          const std::uint64_t tokens = chunk.tokens();
          const std::uint64_t boundary_bytes = pipeline_boundary_bytes(model, tokens, sp).count;
          const std::uint64_t prefix = chunk.last_slice ? 0 : tokens;
          const ActivationChunk act{chunk.segments, prefix, l, checkpointed, shape.last};
          const ActivationBreakdown kept = chunk_activation_bytes(model, act, activation_options);
          // K/V of this slice's tokens over the stage's layers, kept for later slices.
          const std::uint64_t kv = prefix > 0 ? prefix_dkv_buffer_bytes(model, prefix, l, sp).count : 0;
          const std::uint64_t activations = minus(kept.total().count, kept.dkv_buffer.count + kv);
          std::vector<OpIndex> deps;
          if (forward) {
            if (s > 0) deps.push_back(b.recv(rank, recv_prev, {}, rank_of(s - 1, d, i), boundary_bytes, 2 * j));
            b.memory(rank, compute, {}, true, activations, proto::ACTIVATIONS);
            if (kv > 0) b.memory(rank, compute, {}, true, kv, proto::KV_EARLIER_SLICES);
            auto& pieces = stage_pieces(Pass::Forward, j, shape.first_layer, l, shape.last, chunk.segments);
            model_flops += pieces_flops(pieces);
            last = emit_pieces(b, rank, compute, deps, pieces);
            const std::array<OpIndex, 1> after{last};
            if (s + 1 < stages) b.send(rank, send_next, after, rank_of(s + 1, d, i), boundary_bytes, 2 * j);
          } else {
            if (s + 1 < stages) deps.push_back(b.recv(rank, recv_next, {}, rank_of(s + 1, d, i), boundary_bytes, 2 * j + 1));
            const std::uint64_t dkv_total = chunk.last_slice ? dkv_of_sequence[chunk.sequence] : 0;
            if (dkv_total > 0) b.memory(rank, compute, {}, true, dkv_total, proto::DKV_BUFFER);
            const std::uint64_t workspace = chunk_backward_transient_bytes(model, act, activation_options).count;
            if (workspace > 0) b.memory(rank, compute, {}, true, workspace, proto::WORKSPACE);
            if (checkpointed > 0) {
              emit_pieces(b, rank, compute, deps,
                          stage_pieces(Pass::Recompute, j, shape.first_layer + l - checkpointed, checkpointed, false,
                                       chunk.segments));
            }
            auto& pieces = stage_pieces(Pass::Backward, j, shape.first_layer, l, shape.last, chunk.segments);
            model_flops += pieces_flops(pieces);
            last = emit_pieces(b, rank, compute, deps, pieces);
            if (workspace > 0) b.memory(rank, compute, {}, false, workspace, proto::WORKSPACE);
            b.memory(rank, compute, {}, false, activations, proto::ACTIVATIONS);
            if (kv > 0) {
              b.memory(rank, compute, {}, false, kv, proto::KV_EARLIER_SLICES);
              // This slice's dK/dV are consumed by its own backward.
              b.memory(rank, compute, {}, false, prefix_dkv_buffer_bytes(model, tokens, l, sp).count, proto::DKV_BUFFER);
            }
            const std::array<OpIndex, 1> after{last};
            if (s > 0) b.send(rank, send_prev, after, rank_of(s - 1, d, i), boundary_bytes, 2 * j + 1);
          }
        }

        // Gradients reduced over the stage's dp * sp ranks (Ulysses replicates the weights).
        emit_gradient_step(b, sc, rank, compute, comm, grad_groups[s], stage_ranks, shape, s, shape.params, zero_stage,
                           last);
      }
    }
  }

  {
    auto* decisions = b.summary()->mutable_decisions();
    decisions->set_reproduces("Seq1F1B");
    decisions->set_pipeline_stages(stages);
    decisions->add_sp_degrees(sp);
    decisions->set_data_parallel(data_parallel);
    decisions->set_tensor_parallel(1);
    decisions->set_context_parallel(1);
    std::uint32_t total_chunks = 0;
    for (const auto& mine : chunks) total_chunks += static_cast<std::uint32_t>(mine.size());
    decisions->set_chunks(total_chunks);
    decisions->add_slice_counts(slices);
    SlicedSequences sliced;
    for (std::uint32_t d = 0; d < data_parallel; ++d) {
      std::vector<std::uint32_t> replica_ranks;
      for (std::uint32_t s = 0; s < stages; ++s)
        for (std::uint32_t i = 0; i < sp; ++i) replica_ranks.push_back(rank_of(s, d, i));
      for (std::uint32_t j = 0; j < chunks[d].size(); ++j) {
        const auto& chunk = chunks[d][j];
        if (chunk.batch_sequence >= 0) {
          sliced.add(static_cast<std::uint64_t>(chunk.batch_sequence), d, j, chunk.segments.front().tokens, replica_ranks);
        }
      }
    }
    sliced.write_to(decisions);
    for (std::uint32_t s = 0; s < stages; ++s) {
      const std::uint32_t recomputed = std::min(checkpointed, shapes[s].layer_count);
      add_stage_checkpointing(decisions, s, shapes[s].layer_count, total_chunks, recomputed * total_chunks,
                              recomputed);
    }
  }
  const PlanSummary summary{lengths.size(), total_tokens, most_chunks, model_flops, stages, data_parallel};
  return finish_plan(
      b, sc, summary, name(), [&](std::uint32_t r) { return fmt::format(" (pipeline stage {})", r / stage_ranks); },
      fmt::format("lower plan.seq1f1b.chunk_tokens ({}), raise plan.seq1f1b.slices ({}), checkpointed_layers ({}) or "
                  "pipeline_stages ({}), or raise plan.zero_stage ({})",
                  chunk_tokens, slices, checkpointed, stages, zero_stage));
}

}  // namespace eppsim
