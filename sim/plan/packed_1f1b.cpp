#include "sim/plan/packed_1f1b.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "models/chunk.h"
#include "base/errors.h"
#include "models/memory_model.h"
#include "models/pipeline_traffic.h"
#include "models/sequence_parallel_cost.h"
#include "sim/plan/layer_pieces.h"
#include "sim/plan/packing.h"
#include "sim/plan/planner_registry.h"
#include "sim/plan/plan_estimate.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/stages_and_sp.h"

namespace eppsim {

std::vector<std::uint32_t> split_layers(std::uint32_t layers, std::uint32_t stages) {
  std::vector<std::uint32_t> per_stage(stages, layers / stages);
  for (std::uint32_t s = 0; s < layers % stages; ++s) ++per_stage[s];
  return per_stage;
}

std::vector<bool> one_f_one_b_order(std::uint32_t stage, std::uint32_t stages, std::uint32_t micro_batches) {
  const std::uint32_t warmup = std::min(stages - stage - 1, micro_batches);
  std::vector<bool> order;
  order.reserve(2 * micro_batches);
  order.insert(order.end(), warmup, true);
  for (std::uint32_t i = warmup; i < micro_batches; ++i) {
    order.push_back(true);
    order.push_back(false);
  }
  order.insert(order.end(), warmup, false);
  return order;
}

std::vector<StageShape> stage_shapes(const TransformerSpec& model, std::uint32_t stages) {
  const auto layers = split_layers(model.layers, stages);
  const double hidden = model.hidden_size;
  const double input_embedding = (static_cast<double>(model.vocab_size) + static_cast<double>(model.position_embeddings)) * hidden;
  // Output side: final norm and head; a tied head is a copy kept in sync on the last stage.
  const double output_side = model.tied_embeddings ? static_cast<double>(model.vocab_size) * hidden + (model.embedding_params() - input_embedding)
                                                   : model.embedding_params() - input_embedding;
  std::vector<StageShape> shapes(stages);
  std::uint32_t first_layer = 0;
  for (std::uint32_t s = 0; s < stages; ++s) {
    auto& shape = shapes[s];
    shape.first_layer = first_layer;
    shape.layer_count = layers[s];
    shape.first = s == 0;
    shape.last = s + 1 == stages;
    shape.params = model.params_per_layer() * layers[s];
    if (shape.first) shape.params += input_embedding;
    if (shape.last) shape.params += output_side;
    if (shape.first && shape.last && model.tied_embeddings) shape.params -= static_cast<double>(model.vocab_size) * hidden;
    first_layer += layers[s];
  }
  return shapes;
}

void emit_gradient_step(ScheduleBuilder& b, const PlanContext& sc, std::uint32_t rank, std::uint32_t compute,
                        std::uint32_t comm, std::uint32_t group, std::uint32_t group_size, const StageShape& shape,
                        std::uint32_t stage, double params, std::uint32_t zero_stage, std::uint32_t last) {
  const auto gradient_bytes = static_cast<std::uint64_t>(params) * sc.model.bytes_per_element;
  std::array<OpIndex, 1> after{last};
  if (group_size > 1) {
    const auto kind = zero_stage >= 2 ? proto::REDUCE_SCATTER : proto::ALL_REDUCE;
    after[0] = b.collective(rank, comm, after, kind, group, gradient_bytes);
  }
  const double shard_params = zero_stage >= 1 ? params / group_size : params;
  after[0] = b.compute(rank, compute, after, adam_step_op(sc, shard_params, stage, shape.first_layer, shape.layer_count));
  if (zero_stage >= 1 && group_size > 1) {
    b.collective(rank, comm, after, proto::ALL_GATHER, group, gradient_bytes / group_size);
  }
}

namespace {

// Tag of the context-parallel ring's sends and receives (pipeline tags are 2j and
// 2j + 1 between stages; the ring stays inside one): they match in posting order.
constexpr std::uint32_t kRingTag = 0x80000000u;

}  // namespace

Packed1F1BOptions resolve_packed_1f1b_options(const ResolvedScenario& resolved) {
  const FieldLocator& where = resolved.where();
  const proto::Packed1F1BOptions& options = resolved.proto.plan().packed_1f1b();
  const std::uint32_t stages = options.pipeline_stages();
  const std::uint32_t gpus = resolved.usable_gpus();
  if (stages == 0) where.fail("plan.packed_1f1b.pipeline_stages", "must be > 0, got 0");
  if (gpus % stages != 0) {
    where.fail("plan.packed_1f1b.pipeline_stages",
               fmt::format("must divide the cluster's {} GPUs (cluster.nodes {}{} x cluster.gpus_per_node {}), got {}", gpus,
                           resolved.cluster.nodes,
                           resolved.cluster.live_nodes.size() == resolved.cluster.nodes
                               ? std::string()
                               : fmt::format(" less {} failed", resolved.cluster.nodes - resolved.cluster.live_nodes.size()),
                           resolved.cluster.gpus_per_node, stages));
  }
  check_stages_within_layers(resolved, "plan.packed_1f1b.pipeline_stages", stages);
  if (options.micro_batch_tokens() == 0) where.fail("plan.packed_1f1b.micro_batch_tokens", "must be > 0, got 0");
  const std::uint32_t tp = (options.tensor_parallel() > 0 ? options.tensor_parallel() : 1u);
  const std::uint32_t cp = (options.context_parallel() > 0 ? options.context_parallel() : 1u);
  if (tp > resolved.cluster.gpus_per_node) {
    where.fail("plan.packed_1f1b.tensor_parallel",
               fmt::format("must be <= cluster.gpus_per_node {} (TP stays inside a node), got {}",
                           resolved.cluster.gpus_per_node, tp));
  }
  if (resolved.model.attention_heads % tp != 0) {
    where.fail("plan.packed_1f1b.tensor_parallel",
               fmt::format("must divide the model's {} attention heads, got {}", resolved.model.attention_heads, tp));
  }
  if (gpus % (static_cast<std::uint64_t>(tp) * cp * stages) != 0) {
    where.fail("plan.packed_1f1b.context_parallel",
               fmt::format("tensor_parallel x context_parallel x pipeline_stages ({} x {} x {}) must divide the {} GPUs",
                           tp, cp, stages, gpus));
  }
  const std::uint32_t zero_stage = resolved.proto.plan().zero_stage();
  if (zero_stage > 2) {
    where.fail("plan.zero_stage",
               fmt::format("packed-1f1b supports ZeRO stages 0 to 2 (Megatron's distributed optimizer), got {}", zero_stage));
  }
  return Packed1F1BOptions{stages, options.micro_batch_tokens(), tp, cp, options.full_recompute(), zero_stage};
}

std::vector<PlannerRegistration> packed_1f1b_registrations() {
  return {register_planner<Packed1F1BOptions>("packed-1f1b", resolve_packed_1f1b_options, [](Packed1F1BOptions options) {
    return std::make_unique<Packed1F1BPlanner>(options);
  })};
}

proto::Schedule Packed1F1BPlanner::plan(const PlanContext& sc, std::span<const std::uint64_t> lengths) const {
  const Packed1F1BOptions& options = options_;
  const std::uint32_t stages = options.pipeline_stages;
  const std::uint32_t tp = options.tensor_parallel;
  const std::uint32_t cp = options.context_parallel;
  const std::uint32_t group = tp * cp;
  const std::uint32_t num_ranks = sc.usable_gpus();
  const std::uint32_t zero_stage = options.zero_stage;
  const std::uint32_t data_parallel = num_ranks / (stages * group);
  const auto& model = sc.model;
  const auto shapes = stage_shapes(model, stages);
  const bool full_recompute = options.full_recompute;

  // 1. Sequences to replicas, balanced by the estimated cost of a whole-model forward.
  const Bins replicas = PlanEstimate(model, *sc.cost).balance_replicas(lengths, data_parallel);

  // 2. Each replica's sequences packed into micro-batches.
  std::vector<std::vector<std::vector<Segment>>> micro_batches(data_parallel);
  std::uint32_t most_micro_batches = 0;
  for (std::uint32_t d = 0; d < data_parallel; ++d) {
    std::vector<std::uint64_t> sizes;
    for (auto i : replicas[d]) sizes.push_back(lengths[i]);
    for (const auto& bin : best_fit_decreasing(sizes, options.micro_batch_tokens)) {
      std::vector<Segment> segments;
      for (auto k : bin) segments.push_back(Segment{sizes[k], 0});
      micro_batches[d].push_back(std::move(segments));
    }
    most_micro_batches = std::max(most_micro_batches, static_cast<std::uint32_t>(micro_batches[d].size()));
  }

  ScheduleBuilder b(num_ranks, sc.name, name(), model);
  // Copied out, not bound: clang 14 (the sanitizer and fuzz builds) lets no lambda capture a structured binding.
  const PipelineStreams streams = add_pipeline_streams(b);
  const std::uint32_t compute = streams.compute, recv_prev = streams.recv_prev, send_next = streams.send_next,
                      recv_next = streams.recv_next, send_prev = streams.send_prev, comm = streams.comm;
  // The context-parallel ring's sends and receives, beside the attention they overlap.
  const std::uint32_t ring_send = cp > 1 ? b.stream("cp_ring_send") : 0;
  const std::uint32_t ring_recv = cp > 1 ? b.stream("cp_ring_recv") : 0;
  // Position `g` = c * tp + t inside the replica's TP x CP group.
  auto rank_of = [&](std::uint32_t stage, std::uint32_t replica, std::uint32_t g) {
    return (stage * data_parallel + replica) * group + g;
  };
  for (std::uint32_t r = 0; r < num_ranks; ++r) b.place(r, sc.node_of_rank(r), sc.local_gpu_of(r));
  // Gradients are reduced, and ZeRO shards model states, over every rank of a
  // stage that holds the same weights: the data-parallel replicas times the
  // context-parallel ranks (Megatron's data-parallel-with-context group).
  // grad_groups[stage * tp + t]; tp_groups / cp_groups per (stage, replica, c) / (stage, replica, t).
  const std::uint32_t grad_ranks = data_parallel * cp;
  std::vector<std::uint32_t> grad_groups(stages * tp);
  for (std::uint32_t s = 0; s < stages; ++s) {
    for (std::uint32_t t = 0; t < tp; ++t) {
      std::vector<std::uint32_t> ranks;
      for (std::uint32_t d = 0; d < data_parallel; ++d)
        for (std::uint32_t c = 0; c < cp; ++c) ranks.push_back(rank_of(s, d, c * tp + t));
      grad_groups[s * tp + t] = b.add_group(group == 1 ? fmt::format("data-parallel stage {}", s)
                                                       : fmt::format("data-parallel x context-parallel stage {} tp {}", s, t),
                                            std::move(ranks));
    }
  }
  std::vector<std::uint32_t> tp_groups, cp_groups;
  if (tp > 1) {
    for (std::uint32_t s = 0; s < stages; ++s)
      for (std::uint32_t d = 0; d < data_parallel; ++d)
        for (std::uint32_t c = 0; c < cp; ++c) {
          std::vector<std::uint32_t> ranks;
          for (std::uint32_t t = 0; t < tp; ++t) ranks.push_back(rank_of(s, d, c * tp + t));
          tp_groups.push_back(b.add_group(fmt::format("tensor-parallel stage {} replica {} cp {}", s, d, c), std::move(ranks)));
        }
  }
  if (cp > 1) {
    for (std::uint32_t s = 0; s < stages; ++s)
      for (std::uint32_t d = 0; d < data_parallel; ++d)
        for (std::uint32_t t = 0; t < tp; ++t) {
          std::vector<std::uint32_t> ranks;
          for (std::uint32_t c = 0; c < cp; ++c) ranks.push_back(rank_of(s, d, c * tp + t));
          cp_groups.push_back(b.add_group(fmt::format("context-parallel stage {} replica {} tp {}", s, d, t), std::move(ranks)));
        }
  }

  const std::uint64_t element_bytes = model.bytes_per_element;
  double model_flops = 0.0;
  std::uint64_t total_tokens = 0;
  for (auto len : lengths) total_tokens += len;

  for (std::uint32_t s = 0; s < stages; ++s) {
    const auto& shape = shapes[s];
    const double rank_params = shape.params / tp;  // TP splits the weights; CP replicates them
    const ModelStateBytes states = model_state_bytes(rank_params, zero_stage, grad_ranks);
    for (std::uint32_t d = 0; d < data_parallel; ++d) {
      for (std::uint32_t g = 0; g < group; ++g) {
        const auto rank = rank_of(s, d, g);
        const std::uint32_t c = g / tp, t = g % tp;
        const auto& mbs = micro_batches[d];
        const auto m = static_cast<std::uint32_t>(mbs.size());
        WorkSplit split;
        if (tp > 1) split.add(proto::TENSOR_PARALLEL, tp_groups[(s * data_parallel + d) * cp + c], tp);
        if (cp > 1) split.add(proto::CONTEXT_PARALLEL, cp_groups[(s * data_parallel + d) * tp + t], cp);
        const std::uint32_t ring_next = rank_of(s, d, ((c + 1) % cp) * tp + t);
        const std::uint32_t ring_prev = rank_of(s, d, ((c + cp - 1) % cp) * tp + t);
        // One pass of micro-batch j over the stage, after `deps`; returns its last op.
        // Without CP: one compute op. With CP, per layer (backward: the last layer
        // first) as ring attention runs it: the attention kernel on the compute
        // stream while cp - 1 ring steps send this rank's current K/V block (with
        // dK/dV backward) to the next rank of the ring and receive the previous
        // rank's, each step forwarding what the last one received; the layer's
        // other part waits for both (forward PRE_ATTENTION, [ATTENTION | ring],
        // POST_ATTENTION; backward the reverse). Then, with TP, the pass's
        // activation all-reduces (two per layer) as one op over the TP group.
        auto emit_pass = [&](Pass pass, std::uint32_t j, std::span<const Segment> segments, std::uint64_t tokens,
                             std::span<const OpIndex> deps) {
          OpIndex last = 0;
          if (cp == 1) {
            auto op = priced_compute_op(sc, pass, s, j, shape.first_layer, shape.layer_count, shape.last, segments, split);
            if (pass != Pass::Recompute) model_flops += op.flops();
            last = b.compute(rank, compute, deps, std::move(op));
          } else {
            const std::uint64_t step_bytes =
                ring_attention_step_bytes(model, segments, cp, pass, RingOptions{.backward_resends_kv = true, .head_shards = tp})
                    .count;
            const bool backward = pass == Pass::Backward;
            std::vector<OpIndex> after(deps.begin(), deps.end());
            for (std::uint32_t i = 0; i < shape.layer_count; ++i) {
              const std::uint32_t k = backward ? shape.layer_count - 1 - i : i;
              const bool head = shape.last && k + 1 == shape.layer_count;
              auto part = [&](LayerPart p) {
                auto op = priced_compute_op(sc, pass, s, j, shape.first_layer + k, 1, head, segments, split, p);
                if (pass != Pass::Recompute) model_flops += op.flops();
                return op;
              };
              const OpIndex before = b.compute(rank, compute, after, part(backward ? LayerPart::PostAttention
                                                                                  : LayerPart::PreAttention));
              const std::array<OpIndex, 1> ready{before};
              b.compute(rank, compute, {}, part(LayerPart::Attention));
              OpIndex sent = 0, received = 0;
              for (std::uint32_t step = 0; step + 1 < cp; ++step) {
                const std::array<OpIndex, 1> block{received};
                sent = b.send(rank, ring_send, step == 0 ? std::span<const OpIndex>(ready) : std::span<const OpIndex>(block),
                              ring_next, step_bytes, kRingTag);
                received = b.recv(rank, ring_recv, step == 0 ? std::span<const OpIndex>(ready) : std::span<const OpIndex>(),
                                  ring_prev, step_bytes, kRingTag);
              }
              const std::array<OpIndex, 2> ring{sent, received};
              last = b.compute(rank, compute, ring, part(backward ? LayerPart::PreAttention : LayerPart::PostAttention));
              after.clear();
            }
          }
          if (tp > 1) {
            // Two all-reduces of the rank's activations per layer; under CP the rank holds tokens / cp.
            const std::uint64_t bytes = 2ull * shape.layer_count * ((tokens + cp - 1) / cp) * model.hidden_size * element_bytes;
            last = b.collective(rank, compute, {}, proto::ALL_REDUCE, tp_groups[(s * data_parallel + d) * cp + c], bytes);
          }
          return last;
        };
        OpIndex last = b.memory(rank, compute, {}, true, states.total().count, proto::MODEL_STATES);
        std::uint32_t next_forward = 0;
        std::uint32_t next_backward = 0;
        for (bool forward : one_f_one_b_order(s, stages, m)) {
          const std::uint32_t j = forward ? next_forward++ : next_backward++;
          const auto& segments = mbs[j];
          std::uint64_t tokens = 0;
          for (const auto& seg : segments) tokens += seg.tokens;
          const std::uint64_t boundary_bytes =
              group == 1 ? tokens * model.hidden_size * element_bytes : pipeline_boundary_bytes(model, tokens, group).count;
          std::uint64_t kept = stage_activation_bytes(model, tokens, shape.layer_count, shape.last, full_recompute).count;
          if (group > 1) kept = (kept + group - 1) / group;
          std::vector<OpIndex> deps;
          if (forward) {
            if (s > 0) deps.push_back(b.recv(rank, recv_prev, {}, rank_of(s - 1, d, g), boundary_bytes, 2 * j));
            b.memory(rank, compute, {}, true, kept, proto::ACTIVATIONS);
            last = emit_pass(Pass::Forward, j, segments, tokens, deps);
            const std::array<OpIndex, 1> after{last};
            if (s + 1 < stages) b.send(rank, send_next, after, rank_of(s + 1, d, g), boundary_bytes, 2 * j);
          } else {
            if (s + 1 < stages) deps.push_back(b.recv(rank, recv_next, {}, rank_of(s + 1, d, g), boundary_bytes, 2 * j + 1));
            std::uint64_t workspace = backward_workspace_bytes(model, tokens, full_recompute).count;
            if (group > 1) workspace = (workspace + group - 1) / group;
            if (workspace > 0) b.memory(rank, compute, {}, true, workspace, proto::WORKSPACE);
            if (full_recompute) emit_pass(Pass::Recompute, j, segments, tokens, deps);
            last = emit_pass(Pass::Backward, j, segments, tokens, deps);
            b.memory(rank, compute, {}, false, kept, proto::ACTIVATIONS);
            if (workspace > 0) b.memory(rank, compute, {}, false, workspace, proto::WORKSPACE);
            const std::array<OpIndex, 1> after{last};
            if (s > 0) b.send(rank, send_prev, after, rank_of(s - 1, d, g), boundary_bytes, 2 * j + 1);
          }
        }

        emit_gradient_step(b, sc, rank, compute, comm, grad_groups[s * tp + t], grad_ranks, shape, s, rank_params,
                           zero_stage, last);
      }
    }
  }

  {
    auto* decisions = b.summary()->mutable_decisions();
    decisions->set_reproduces("Megatron-LM");
    decisions->set_pipeline_stages(stages);
    decisions->add_sp_degrees(1);
    decisions->set_data_parallel(data_parallel);
    decisions->set_tensor_parallel(tp);
    decisions->set_context_parallel(cp);
    std::uint32_t chunks = 0;
    for (const auto& mbs : micro_batches) chunks += static_cast<std::uint32_t>(mbs.size());
    decisions->set_chunks(chunks);
    for (std::uint32_t s = 0; s < stages; ++s) {
      const std::uint32_t recomputed = full_recompute ? shapes[s].layer_count : 0;
      add_stage_checkpointing(decisions, s, shapes[s].layer_count, chunks, recomputed * chunks, recomputed);
    }
  }
  const PlanSummary summary{lengths.size(), total_tokens, most_micro_batches, model_flops, stages, data_parallel};
  return finish_plan(
      b, sc, summary, name(),
      [&](std::uint32_t r) { return fmt::format(" (pipeline stage {})", r / (data_parallel * group)); },
      fmt::format("lower plan.packed_1f1b.micro_batch_tokens ({}), raise plan.packed_1f1b.pipeline_stages ({}), "
                  "tensor_parallel ({}) or context_parallel ({}), raise plan.zero_stage ({}) or set "
                  "plan.packed_1f1b.full_recompute",
                  options.micro_batch_tokens, stages, tp, cp, zero_stage));
}

}  // namespace eppsim
