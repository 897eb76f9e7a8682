#include "sim/plan/epp_schedule.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/activation_memory.h"
#include "models/memory_model.h"
#include "models/pipeline_traffic.h"
#include "sim/plan/layer_pieces.h"
#include "sim/plan/planner.h"
#include "sim/plan/seq1f1b.h"
#include "sim/plan/sliced_sequences.h"

namespace eppsim {
namespace {

std::uint64_t minus(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; }

}  // namespace

EmittedEpp emit_epp(const PlanContext& sc, std::span<const StageShape> shapes, std::uint32_t zero_stage,
                    const EppPlan& decisions, const std::string& strategy) {
  const auto& model = sc.model;
  const std::uint32_t stages = decisions.stages, sp = decisions.sp_degree;
  const auto dp = static_cast<std::uint32_t>(decisions.replicas.size());
  const std::uint32_t num_ranks = stages * dp * sp;
  const std::uint32_t stage_ranks = dp * sp;  // the replicas emitted (all, or one to score a pipeline)

  ScheduleBuilder b(num_ranks, sc.name, strategy, model);
  const auto [compute, recv_prev, send_next, recv_next, send_prev, comm] = add_pipeline_streams(b);
  auto rank_of = [&](std::uint32_t stage, std::uint32_t replica, std::uint32_t i) { return (stage * dp + replica) * sp + i; };
  for (std::uint32_t r = 0; r < num_ranks; ++r) b.place(r, sc.node_of_rank(r), sc.local_gpu_of(r));
  // Identical replicas: replica 0's programs alone (replica d's rank i of
  // stage s is sp ranks on from replica d - 1's).
  const bool replica_zero_only = decisions.identical_replicas && dp > 1;
  if (replica_zero_only) b.identical_replicas(dp, sp);
  double replica_zero_flops = 0.0;
  std::vector<std::uint32_t> grad_groups(stages);
  if (stage_ranks > 1) {
    for (std::uint32_t s = 0; s < stages; ++s) {
      std::vector<std::uint32_t> ranks(stage_ranks);
      std::iota(ranks.begin(), ranks.end(), s * stage_ranks);
      grad_groups[s] = b.add_group(fmt::format("gradients stage {}", s), std::move(ranks));
    }
  }
  // SP groups per (stage, replica, degree, lane).
  std::map<std::array<std::uint32_t, 4>, std::uint32_t> sp_groups;
  auto sp_group = [&](std::uint32_t s, std::uint32_t d, std::uint32_t degree, std::uint32_t lane) {
    const std::array<std::uint32_t, 4> key{s, d, degree, lane};
    if (auto it = sp_groups.find(key); it != sp_groups.end()) return it->second;
    std::vector<std::uint32_t> ranks;
    for (std::uint32_t i = 0; i < degree; ++i) ranks.push_back(rank_of(s, d, lane * degree + i));
    const auto g = b.add_group(fmt::format("sequence-parallel stage {} replica {} degree {} lane {}", s, d, degree, lane),
                               std::move(ranks));
    sp_groups.emplace(key, g);
    return g;
  };

  double model_flops = 0.0;
  std::uint32_t most_chunks = 0;
  SlicedSequences sliced;

  for (std::uint32_t d = 0; d < dp; ++d) {
    const auto& replica = decisions.replicas[d];
    // Runs of overlapping pipelines: per lane, the merged chunks and each chunk's plan.
    struct RunChunk {
      Seq1F1BChunk chunk;
      const CheckpointPlan* plan;
      std::uint32_t index;  // in its own pipeline's lane
    };
    struct Run {
      std::uint32_t degree = 1;
      std::vector<std::vector<RunChunk>> lanes;
    };
    std::vector<Run> runs;
    for (const auto& p : replica.pipelines) {
      if (runs.empty() || !p.overlaps_previous) runs.push_back(Run{p.sp_degree, std::vector<std::vector<RunChunk>>(p.lanes.size())});
      Run& run = runs.back();
      for (std::size_t j = 0; j < p.lanes.size(); ++j) {
        std::uint32_t offset = 0;
        for (const auto& rc : run.lanes[j]) offset = std::max(offset, rc.chunk.sequence + 1);
        for (std::uint32_t k = 0; k < p.lanes[j].chunks.size(); ++k) {
          Seq1F1BChunk c = p.lanes[j].chunks[k];
          c.sequence += offset;
          run.lanes[j].push_back(RunChunk{std::move(c), &p.lanes[j].checkpoint, k});
        }
      }
    }
    // Chunk ids count on over a replica's runs (as the tags below do).
    std::uint32_t chunks_here = 0;
    for (const auto& run : runs) {
      std::size_t longest_lane = 0;
      for (std::uint32_t lane = 0; lane < run.lanes.size(); ++lane) {
        longest_lane = std::max(longest_lane, run.lanes[lane].size());
        std::vector<std::uint32_t> lane_ranks;
        for (std::uint32_t s = 0; s < stages; ++s)
          for (std::uint32_t i = 0; i < run.degree; ++i) lane_ranks.push_back(rank_of(s, d, lane * run.degree + i));
        for (std::uint32_t k = 0; k < run.lanes[lane].size(); ++k) {
          const Seq1F1BChunk& chunk = run.lanes[lane][k].chunk;
          if (chunk.batch_sequence >= 0) {
            sliced.add(static_cast<std::uint64_t>(chunk.batch_sequence), d, chunks_here + k,
                       chunk.segments.front().tokens, lane_ranks);
          }
        }
      }
      chunks_here += static_cast<std::uint32_t>(longest_lane);
    }
    most_chunks = std::max(most_chunks, chunks_here);
    if (replica_zero_only && d > 0) {
      model_flops += replica_zero_flops;
      continue;
    }

    for (std::uint32_t s = 0; s < stages; ++s) {
      const auto& shape = shapes[s];
      const std::uint32_t l = shape.layer_count;
      const std::uint64_t states = model_state_bytes(shape.params, zero_stage, stage_ranks).total().count;
      // A pass's pieces are the same on every rank of its lane: built once per
      // (chunk, lane, pass) and listed once in the shared computes (emit_pieces).
      std::map<std::array<std::uint32_t, 3>, std::vector<LayerPiece>> piece_cache;
      for (std::uint32_t i = 0; i < sp; ++i) {
        const auto rank = rank_of(s, d, i);
        OpIndex last = b.memory(rank, compute, {}, true, states, proto::MODEL_STATES);
        std::uint32_t tag_base = 0;
        for (const auto& run : runs) {
          const std::uint32_t degree = run.degree;
          const std::uint32_t lane = i / degree;
          const auto& lane_chunks = run.lanes[lane];
          std::vector<Seq1F1BChunk> chunks;
          for (const auto& rc : lane_chunks) chunks.push_back(rc.chunk);
          UlyssesGroup ulysses{degree > 1 ? sp_group(s, d, degree, lane) : 0, degree, {}};
          ulysses.split.add(proto::SEQUENCE_PARALLEL, ulysses.group, degree);
          auto stage_pieces = [&](Pass pass, std::uint32_t chunk_id, std::uint32_t first_layer, std::uint32_t layers,
                                  bool lm_head, std::span<const Segment> segments) -> std::vector<LayerPiece>& {
            const std::array<std::uint32_t, 3> key{chunk_id, lane, static_cast<std::uint32_t>(pass)};
            auto [it, inserted] = piece_cache.try_emplace(key);
            if (inserted) it->second = ulysses_stage_pieces(sc, pass, s, chunk_id, first_layer, layers, lm_head, segments, ulysses);
            return it->second;
          };
          const ActivationOptions options{degree, LogitsMemory::FusedInPlace};
          for (const auto& [forward, k] : seq1f1b_order(s, stages, chunks)) {
            const auto& rc = lane_chunks[k];
            const auto& chunk = rc.chunk;
            const std::uint32_t ckpt = rc.plan->layers.empty() ? 0 : rc.plan->layers[s][rc.index];
            const std::uint64_t tokens = chunk.tokens();
            const std::uint64_t boundary = pipeline_boundary_bytes(model, tokens, degree).count;
            const std::uint64_t prefix = chunk.last_slice ? 0 : tokens;
            const ActivationChunk act{chunk.segments, prefix, l, ckpt, shape.last};
            const ActivationBreakdown kept = chunk_activation_bytes(model, act, options);
            const std::uint64_t activations = minus(kept.total().count, kept.prefix_kv.count + kept.dkv_buffer.count);
            const std::uint32_t tag = 2 * (tag_base + k);
            std::vector<OpIndex> deps;
            if (forward) {
              if (s > 0) deps.push_back(b.recv(rank, recv_prev, {}, rank_of(s - 1, d, i), boundary, tag));
              b.memory(rank, compute, {}, true, activations, proto::ACTIVATIONS);
              if (kept.prefix_kv.count > 0) b.memory(rank, compute, {}, true, kept.prefix_kv.count, proto::KV_EARLIER_SLICES);
              if (kept.dkv_buffer.count > 0) b.memory(rank, compute, {}, true, kept.dkv_buffer.count, proto::DKV_BUFFER);
              auto& pieces =
                  stage_pieces(Pass::Forward, tag_base + k, shape.first_layer, l, shape.last, chunk.segments);
              model_flops += pieces_flops(pieces);
              last = emit_pieces(b, rank, compute, deps, pieces);
              const std::array<OpIndex, 1> after{last};
              if (s + 1 < stages) b.send(rank, send_next, after, rank_of(s + 1, d, i), boundary, tag);
            } else {
              if (s + 1 < stages) deps.push_back(b.recv(rank, recv_next, {}, rank_of(s + 1, d, i), boundary, tag + 1));
              const std::uint64_t workspace = chunk_backward_transient_bytes(model, act, options).count;
              if (workspace > 0) b.memory(rank, compute, {}, true, workspace, proto::WORKSPACE);
              if (ckpt > 0) {
                const auto recomputed =
                    emit_pieces(b, rank, compute, deps,
                                stage_pieces(Pass::Recompute, tag_base + k, shape.first_layer + l - ckpt, ckpt, false,
                                             chunk.segments));
                deps.assign(1, recomputed);
              }
              auto& pieces =
                  stage_pieces(Pass::Backward, tag_base + k, shape.first_layer, l, shape.last, chunk.segments);
              model_flops += pieces_flops(pieces);
              last = emit_pieces(b, rank, compute, deps, pieces);
              if (workspace > 0) b.memory(rank, compute, {}, false, workspace, proto::WORKSPACE);
              b.memory(rank, compute, {}, false, activations, proto::ACTIVATIONS);
              if (kept.prefix_kv.count > 0) b.memory(rank, compute, {}, false, kept.prefix_kv.count, proto::KV_EARLIER_SLICES);
              if (kept.dkv_buffer.count > 0) b.memory(rank, compute, {}, false, kept.dkv_buffer.count, proto::DKV_BUFFER);
              const std::array<OpIndex, 1> after{last};
              if (s > 0) b.send(rank, send_prev, after, rank_of(s - 1, d, i), boundary, tag + 1);
            }
          }
          std::size_t longest_lane = 0;
          for (const auto& ln : run.lanes) longest_lane = std::max(longest_lane, ln.size());
          tag_base += static_cast<std::uint32_t>(longest_lane);
        }
        emit_gradient_step(b, sc, rank, compute, comm, grad_groups[s], stage_ranks, shape, s, shape.params,
                           zero_stage, last);
      }
    }
    if (d == 0) replica_zero_flops = model_flops;
  }

  sliced.write_to(b.summary()->mutable_decisions());
  return EmittedEpp{std::move(b), model_flops, most_chunks};
}

proto::Schedule EppPlanner::plan(const PlanContext& sc, std::span<const std::uint64_t> lengths) const {
  const EppPlan decisions = plan_epp(sc, options_, lengths, variant_);
  const std::vector<StageShape> shapes = stage_shapes(sc.model, decisions.stages);
  EmittedEpp emitted = emit_epp(sc, shapes, options_.zero_stage, decisions, name());
  std::uint64_t total_tokens = 0;
  for (auto len : lengths) total_tokens += len;
  {
    auto* d = emitted.builder.summary()->mutable_decisions();
    d->set_reproduces("InfiniPipe");
    d->set_pipeline_stages(decisions.stages);
    d->set_data_parallel(decisions.data_parallel);
    d->set_tensor_parallel(1);
    d->set_context_parallel(1);
    std::set<std::uint32_t, std::greater<>> degrees;
    std::uint32_t chunks = 0, pipelines = 0;
    std::vector<std::uint32_t> checkpointed(decisions.stages, 0);
    std::vector<std::uint32_t> most(decisions.stages, 0);
    for (std::size_t r = 0; r < decisions.replicas.size(); ++r) {
      const auto& replica = decisions.replicas[r];
      if (replica.pipelines.empty()) continue;  // no sequences
      d->add_slice_counts(replica.slices);
      for (std::size_t q = 0; q < replica.pipelines.size(); ++q) {
        const auto& pipeline = replica.pipelines[q];
        ++pipelines;
        degrees.insert(pipeline.sp_degree);
        for (std::size_t l = 0; l < pipeline.lanes.size(); ++l) {
          const auto& lane = pipeline.lanes[l];
          chunks += static_cast<std::uint32_t>(lane.chunks.size());
          for (std::uint32_t s = 0; s < lane.checkpoint.layers.size() && s < decisions.stages; ++s) {
            for (auto layers : lane.checkpoint.layers[s]) {
              checkpointed[s] += layers;
              most[s] = std::max(most[s], layers);
            }
          }
          auto* solve = d->add_solves();
          solve->set_problem(pipeline.lanes.size() == 1
                                 ? fmt::format("epp replica {} pipeline {} checkpointing", r, q)
                                 : fmt::format("epp replica {} pipeline {} lane {} checkpointing", r, q, l));
          solve->set_status(lane.checkpoint.solve);
        }
      }
    }
    for (auto degree : degrees) d->add_sp_degrees(degree);
    if (degrees.empty()) d->add_sp_degrees(decisions.sp_degree);
    d->set_chunks(chunks);
    d->set_pipelines(pipelines);
    for (std::uint32_t s = 0; s < decisions.stages; ++s) {
      add_stage_checkpointing(d, s, shapes[s].layer_count, chunks, checkpointed[s], most[s]);
    }
  }
  const PlanSummary summary{lengths.size(), total_tokens, emitted.most_chunks, emitted.model_flops, decisions.stages,
                            decisions.data_parallel};
  return finish_plan(emitted.builder, sc, summary, name(),
                     [&](std::uint32_t r) { return fmt::format(" (pipeline stage {})", r / (decisions.data_parallel * decisions.sp_degree)); },
                     "add pipeline stages or GPUs, or lower workload.max_length");
}

}  // namespace eppsim
