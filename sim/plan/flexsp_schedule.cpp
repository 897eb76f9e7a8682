// The flexsp planner's Schedule (flexsp.h): plan_flexsp's micro-batches, each
// carved into its SP groups, run layer by layer under ZeRO-3 (zero3_layers.h).
#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "models/chunk.h"
#include "sim/plan/flexsp.h"
#include "sim/plan/layer_pieces.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/zero3_layers.h"

namespace eppsim {

proto::Schedule FlexSpPlanner::plan(const PlanContext& sc, std::span<const std::uint64_t> lengths) const {
  const FlexSpPlan decisions = plan_flexsp(sc, options_, lengths);
  // As plan_flexsp sized the groups.
  const std::uint32_t recomputed = options_.recomputed_mlp_layers;
  const Zero3Memory memory = zero3_memory(sc, false, options_.zero3, recomputed);
  const auto& model = sc.model;
  const std::uint32_t n = sc.usable_gpus();

  ScheduleBuilder b(n, sc.name, name(), model);
  const Zero3Setup streams = add_zero3(b, n);
  for (std::uint32_t r = 0; r < n; ++r) b.place(r, sc.node_of_rank(r), sc.local_gpu_of(r));

  const double params = model.total_params();
  const Zero3LayerBytes zero_bytes = zero3_layer_bytes(model, options_.zero3);
  const std::uint32_t depth = effective_prefetch_depth(options_.zero3, true);  // groups change every micro-batch
  const std::uint32_t layers = model.layers;
  std::vector<Zero3LayerProgram> programs;
  programs.reserve(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    b.memory(r, streams.compute, {}, true, memory.state_bytes, proto::MODEL_STATES);
    if (memory.gather_buffer_bytes > 0) {
      b.memory(r, streams.compute, {}, true, memory.gather_buffer_bytes, proto::WORKSPACE);
    }
    programs.emplace_back(b, r, streams, zero_bytes, depth);
  }

  double model_flops = 0.0;
  std::uint64_t total_tokens = 0;
  for (auto s : lengths) total_tokens += s;
  std::uint32_t most_groups = 0;

  for (std::uint32_t j = 0; j < decisions.micro_batches.size(); ++j) {
    const auto& mb = decisions.micro_batches[j];
    most_groups = std::max(most_groups, static_cast<std::uint32_t>(mb.groups.size()));
    for (std::uint32_t gi = 0; gi < mb.groups.size(); ++gi) {
      const auto& g = mb.groups[gi];
      std::vector<std::uint32_t> ranks(g.degree);
      std::iota(ranks.begin(), ranks.end(), g.first_rank);
      const std::uint32_t group =
          g.degree > 1 ? b.add_group(fmt::format("micro-batch {} sp group {} (degree {})", j, gi, g.degree), ranks) : 0;
      std::vector<Segment> segments;
      std::uint64_t tokens = 0;
      for (auto i : g.sequences) {
        segments.push_back(Segment{lengths[i], 0});
        tokens += lengths[i];
      }
      const std::uint64_t activations = memory.activation_bytes(tokens, g.degree);
      UlyssesGroup sp{group, g.degree, {}};
      sp.split.add(proto::SEQUENCE_PARALLEL, group, g.degree);
      // The group's passes, layer by layer, built once and replayed on each of its ranks.
      std::vector<std::vector<LayerPiece>> forward, backward;
      for (std::uint32_t l = 0; l < layers; ++l) {
        forward.push_back(ulysses_layer_pieces(sc, Pass::Forward, 0, j, l, l + 1 == layers, segments, sp));
      }
      for (std::uint32_t l = layers; l-- > 0;) {
        backward.push_back(ulysses_layer_pieces(sc, Pass::Backward, 0, j, l, l + 1 == layers, segments, sp));
      }
      for (const auto& p : forward) model_flops += pieces_flops(p) * g.degree;
      for (const auto& p : backward) model_flops += pieces_flops(p) * g.degree;
      // A checkpointed MLP block is recomputed just before its layer's backward (not model FLOPs).
      for (std::uint32_t l = 0; l < recomputed; ++l) {
        auto& pieces = backward[layers - 1 - l];
        pieces.insert(pieces.begin(), LayerPiece{priced_compute_op(sc, Pass::Recompute, 0, j, l, 1, false, segments,
                                                                   sp.split, LayerPart::PostAttention)});
      }
      for (auto r : ranks) {
        b.memory(r, streams.compute, {}, true, activations, proto::ACTIVATIONS);
        for (auto& p : forward) programs[r].visit(p, false);
        for (auto& p : backward) programs[r].visit(p, true);
        b.memory(r, streams.compute, {}, false, activations, proto::ACTIVATIONS);
      }
    }
  }

  const double shard_params = params / n;
  for (std::uint32_t r = 0; r < n; ++r) {
    b.compute(r, streams.compute, programs[r].tail(), adam_step_op(sc, shard_params, 0, 0, model.layers));
  }

  {
    auto* d = b.summary()->mutable_decisions();
    d->set_reproduces("FlexSP");
    d->set_pipeline_stages(1);
    std::set<std::uint32_t, std::greater<>> degrees;
    for (std::uint32_t j = 0; j < decisions.micro_batches.size(); ++j) {
      auto* groups = d->add_micro_batch_groups();
      for (const auto& g : decisions.micro_batches[j].groups) {
        groups->add_sp_degrees(g.degree);
        degrees.insert(g.degree);
      }
      auto* solve = d->add_solves();
      solve->set_problem(fmt::format("flexsp micro-batch {} groups", j));
      solve->set_status(decisions.micro_batches[j].solve);
    }
    for (auto degree : degrees) d->add_sp_degrees(degree);
    d->set_data_parallel(most_groups);
    d->set_tensor_parallel(1);
    d->set_context_parallel(1);
    d->set_chunks(static_cast<std::uint32_t>(decisions.micro_batches.size()));
    const auto chunks = static_cast<std::uint32_t>(decisions.micro_batches.size());
    add_stage_checkpointing(d, 0, layers, chunks, recomputed * chunks, recomputed);
  }
  const PlanSummary summary{lengths.size(), total_tokens, static_cast<std::uint32_t>(decisions.micro_batches.size()),
                            model_flops, 1, most_groups};
  return finish_plan(b, sc, summary, name(), [](std::uint32_t) { return std::string(); },
                     "lower workload.max_length, add GPUs or raise plan.memory_fraction");
}

}  // namespace eppsim
