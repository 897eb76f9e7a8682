#include "sim/plan/ulysses.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "models/activation_memory.h"
#include "models/chunk.h"
#include "base/errors.h"
#include "base/log.h"
#include "models/memory_model.h"
#include "models/sequence_parallel_cost.h"
#include "sim/plan/packing.h"
#include "sim/plan/planner_registry.h"
#include "sim/plan/plan_estimate.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/stages_and_sp.h"
#include "sim/plan/zero3_layers.h"

namespace eppsim {

namespace {

constexpr double kDefaultPackingFill = 0.9;

void check_degree(const PlanContext& sc, std::uint32_t d, std::string_view strategy) {
  const std::uint32_t n = sc.usable_gpus();
  if (d == 0 || (d & (d - 1)) != 0 || d > n || n % d != 0) {
    throw InputError(fmt::format("{}: {}: plan.ulysses.sp_degree must be a power of two dividing the {} GPUs, got {}",
                                 sc.source, strategy, n, d));
  }
  if (!ulysses_degree_fits(sc.model, d)) {
    throw InputError(fmt::format("{}: {}: plan.ulysses.sp_degree {} must divide the model's {} attention heads and {} "
                                 "KV heads",
                                 sc.source, strategy, d, sc.model.attention_heads, sc.model.kv_heads));
  }
}

}  // namespace

UlyssesOptions resolve_ulysses_adaptive_options(const ResolvedScenario& resolved) {
  const proto::UlyssesOptions& options = resolved.proto.plan().ulysses();
  const double fill = options.packing_fill();
  if (!(fill >= 0.0 && fill <= 1.0)) {
    resolved.where().fail("plan.ulysses.packing_fill",
                          fmt::format("must be in (0, 1] (0 means the default 0.9), got {}", fill));
  }
  UlyssesOptions out;
  out.packing_fill = fill == 0.0 ? kDefaultPackingFill : fill;
  out.full_recompute = options.full_recompute();
  out.zero3 = resolve_zero3_options(resolved);
  return out;
}

UlyssesOptions resolve_ulysses_options(const ResolvedScenario& resolved) {
  // Every option has a default, so a scenario written for another strategy runs this one.
  const FieldLocator& where = resolved.where();
  const proto::UlyssesOptions& options = resolved.proto.plan().ulysses();
  const std::uint32_t gpus = resolved.usable_gpus();
  const std::uint32_t degree = options.sp_degree() == 0 ? resolved.cluster.gpus_per_node : options.sp_degree();
  if ((degree & (degree - 1)) != 0 || gpus % degree != 0) {
    where.fail("plan.ulysses.sp_degree",
               fmt::format("must be a power of two dividing the cluster's {} GPUs (0 means gpus_per_node), got {}", gpus,
                           degree));
  }
  check_sp_divides_heads(resolved, "plan.ulysses.sp_degree", degree);
  UlyssesOptions out = resolve_ulysses_adaptive_options(resolved);
  out.sp_degree = degree;
  return out;
}

std::vector<PlannerRegistration> ulysses_registrations() {
  return {register_planner<UlyssesOptions>("ulysses", resolve_ulysses_options,
                                           [](UlyssesOptions options) { return std::make_unique<UlyssesPlanner>(options); }),
          register_planner<UlyssesOptions>("ulysses-adaptive", resolve_ulysses_adaptive_options, [](UlyssesOptions options) {
            return std::make_unique<UlyssesAdaptivePlanner>(options);
          })};
}

std::uint64_t ulysses_group_capacity(const PlanContext& sc, const UlyssesOptions& options, std::uint32_t d) {
  const Zero3Memory memory = zero3_memory(sc, options.full_recompute, options.zero3);
  if (memory.fixed_bytes() >= sc.memory_limit.count) {
    throw InputError(fmt::format(
        "{}: ulysses: ZeRO-3 model states ({}) and the gathered-weight buffer ({}) leave no room for activations "
        "under the memory limit {}; use more GPUs or a larger plan.memory_fraction",
        sc.source, format_bytes(Bytes(memory.state_bytes)), format_bytes(Bytes(memory.gather_buffer_bytes)),
        format_bytes(sc.memory_limit)));
  }
  return memory.capacity(sc.memory_limit.count, d, options.packing_fill);
}

namespace {

// One degree's decisions: micro-batches, their groups and slots, and the
// estimated step time; what the Schedule is then built from.
struct UlyssesDecisions {
  std::uint32_t degree = 1;
  std::vector<std::vector<Segment>> micro_batches;
  std::vector<double> costs;  // per micro-batch, a rank's seconds
  Bins per_group;             // micro-batch indices per group, in running order
  std::uint32_t slots = 1;
  double estimated_step_s = 0.0;
};

// Throws InputError when the degree is not allowed or a sequence does not fit.
UlyssesDecisions decide_ulysses(const PlanContext& sc, const UlyssesOptions& options,
                                std::span<const std::uint64_t> lengths, std::uint32_t d, std::string_view strategy) {
  check_degree(sc, d, strategy);
  const std::uint32_t n = sc.usable_gpus();
  const std::uint32_t groups = n / d;
  const auto& model = sc.model;
  const bool recompute = options.full_recompute;
  const std::uint64_t capacity = ulysses_group_capacity(sc, options, d);
  for (auto len : lengths) {
    if (len > capacity) {
      throw InputError(fmt::format(
          "{}: {}: a sequence of {} tokens does not fit an SP group of degree {} (capacity {} tokens per micro-batch "
          "at packing_fill {}); raise plan.ulysses.sp_degree or set plan.ulysses.full_recompute",
          sc.source, strategy, len, d, capacity, options.packing_fill));
    }
  }

  // 1. Micro-batches: best-fit decreasing at the group capacity.
  std::vector<std::vector<Segment>> micro_batches;
  for (const auto& bin : best_fit_decreasing(lengths, capacity)) {
    std::vector<Segment> segments;
    for (auto k : bin) segments.push_back(Segment{lengths[k], 0});
    micro_batches.push_back(std::move(segments));
  }
  const PlanEstimate estimate(model, *sc.cost);
  std::vector<double> costs(micro_batches.size());
  for (std::size_t i = 0; i < micro_batches.size(); ++i) costs[i] = estimate.chunk_seconds(micro_batches[i], d, recompute);

  // 2. Micro-batches to groups, balanced; each group runs its own in decreasing cost.
  Bins per_group = longest_processing_time(costs, groups);
  std::uint32_t slots = 0;
  for (auto& bin : per_group) {
    std::stable_sort(bin.begin(), bin.end(), [&](std::uint32_t a, std::uint32_t b) { return costs[a] > costs[b]; });
    slots = std::max(slots, static_cast<std::uint32_t>(bin.size()));
  }
  slots = std::max(slots, 1u);

  // The estimate follows the lockstep of the slots; ZeRO-3 as zero3_micro_batch_seconds
  // prices it at the depth the static groups run at.
  const Zero3LayerSeconds zero = zero3_layer_seconds(sc, zero3_layer_bytes(model, options.zero3));
  const std::uint32_t depth = effective_prefetch_depth(options.zero3, false);
  double step = 0.0;
  for (std::uint32_t j = 0; j < slots; ++j) {
    double slowest = 0.0;
    for (std::uint32_t g = 0; g < groups; ++g) {
      if (j < per_group[g].size()) slowest = std::max(slowest, costs[per_group[g][j]]);
    }
    step += zero3_micro_batch_seconds(zero, model.layers, slowest, depth);
  }
  const double shard_params = model.total_params() / n;
  step += sc.cost->optimizer_time(Bytes(static_cast<std::uint64_t>(shard_params * 28.0))).value;
  return UlyssesDecisions{d, std::move(micro_batches), std::move(costs), std::move(per_group), slots, step};
}

// The Schedule of one degree's decisions. Throws InputError when a rank's
// planned memory exceeds the limit.
proto::Schedule build_ulysses(const PlanContext& sc, const UlyssesOptions& options,
                              std::span<const std::uint64_t> lengths, const UlyssesDecisions& decided,
                              std::string_view strategy) {
  const std::uint32_t d = decided.degree;
  const std::uint32_t n = sc.usable_gpus();
  const std::uint32_t groups = n / d;
  const auto& model = sc.model;
  const bool recompute = options.full_recompute;
  const auto& micro_batches = decided.micro_batches;
  const auto& per_group = decided.per_group;
  const std::uint32_t slots = decided.slots;

  // ZeRO-3, layer by layer (zero3_layers.h): every rank gathers each layer
  // before it runs and reduce-scatters its gradients after its backward, also
  // in the slots where its group has no micro-batch left.
  const Zero3LayerBytes zero_bytes = zero3_layer_bytes(model, options.zero3);
  const std::uint32_t depth = effective_prefetch_depth(options.zero3, false);  // static groups
  ScheduleBuilder b(n, sc.name, std::string(strategy), model);
  const Zero3Setup streams = add_zero3(b, n);
  for (std::uint32_t r = 0; r < n; ++r) b.place(r, sc.node_of_rank(r), sc.local_gpu_of(r));
  std::vector<std::uint32_t> sp_groups(groups);
  for (std::uint32_t g = 0; g < groups; ++g) {
    std::vector<std::uint32_t> ranks(d);
    std::iota(ranks.begin(), ranks.end(), g * d);
    sp_groups[g] = b.add_group(fmt::format("ulysses sp_degree {} group {}", d, g), std::move(ranks));
  }

  const Zero3Memory memory = zero3_memory(sc, recompute, options.zero3);
  const double shard_params = model.total_params() / n;
  const std::uint32_t layers = model.layers;
  double model_flops = 0.0;
  std::uint64_t total_tokens = 0;
  for (auto len : lengths) total_tokens += len;

  for (std::uint32_t g = 0; g < groups; ++g) {
    UlyssesGroup sp{sp_groups[g], d, {}};
    sp.split.add(proto::SEQUENCE_PARALLEL, sp_groups[g], d);
    std::map<std::array<std::uint32_t, 3>, std::vector<LayerPiece>> piece_cache;  // (slot, pass, layer)
    std::map<std::array<std::uint32_t, 2>, std::vector<LayerPiece>> recompute_then_backward;  // (slot, layer)
    for (std::uint32_t k = 0; k < d; ++k) {
      const std::uint32_t rank = g * d + k;
      b.memory(rank, streams.compute, {}, true, memory.state_bytes, proto::MODEL_STATES);
      if (memory.gather_buffer_bytes > 0) {
        b.memory(rank, streams.compute, {}, true, memory.gather_buffer_bytes, proto::WORKSPACE);
      }
      Zero3LayerProgram program(b, rank, streams, zero_bytes, depth);
      // A layer's pieces are the same on every rank of the group: built once (and
      // their model FLOPs counted once, times the degree) and copied into each program.
      auto pieces = [&](Pass pass, std::uint32_t j, std::span<const Segment> segments,
                        std::uint32_t layer) -> std::vector<LayerPiece>& {
        auto [it, inserted] = piece_cache.try_emplace(std::array<std::uint32_t, 3>{j, static_cast<std::uint32_t>(pass), layer});
        if (inserted) {
          it->second = ulysses_layer_pieces(sc, pass, 0, j, layer, layer + 1 == layers, segments, sp);
          if (pass != Pass::Recompute) model_flops += pieces_flops(it->second) * d;
        }
        return it->second;
      };
      for (std::uint32_t j = 0; j < slots; ++j) {
        if (j >= per_group[g].size()) {
          for (std::uint32_t l = 0; l < 2 * layers; ++l) program.visit({}, l >= layers);
          continue;
        }
        const auto& segments = micro_batches[per_group[g][j]];
        std::uint64_t tokens = 0;
        for (const auto& seg : segments) tokens += seg.tokens;
        const std::uint64_t activations = memory.activation_bytes(tokens, d);
        b.memory(rank, streams.compute, {}, true, activations, proto::ACTIVATIONS);
        for (std::uint32_t l = 0; l < layers; ++l) program.visit(pieces(Pass::Forward, j, segments, l), false);
        for (std::uint32_t l = layers; l-- > 0;) {
          if (!recompute) {
            program.visit(pieces(Pass::Backward, j, segments, l), true);
            continue;
          }
          // The layer's recompute then its backward, one visit, built once per
          // (slot, layer) like the pieces, so that their shared works are listed once.
          auto [it, inserted] = recompute_then_backward.try_emplace(std::array<std::uint32_t, 2>{j, l});
          if (inserted) {
            it->second = pieces(Pass::Recompute, j, segments, l);
            for (const auto& p : pieces(Pass::Backward, j, segments, l)) it->second.push_back(p);
          }
          program.visit(it->second, true);
        }
        b.memory(rank, streams.compute, {}, false, activations, proto::ACTIVATIONS);
      }
      // Optimizer on this rank's 1/N shard.
      b.compute(rank, streams.compute, program.tail(), adam_step_op(sc, shard_params, 0, 0, model.layers));
    }
  }

  {
    auto* decisions = b.summary()->mutable_decisions();
    decisions->set_reproduces("DeepSpeed-Ulysses");
    decisions->set_pipeline_stages(1);
    decisions->add_sp_degrees(d);
    decisions->set_data_parallel(groups);
    decisions->set_tensor_parallel(1);
    decisions->set_context_parallel(1);
    const auto chunks = static_cast<std::uint32_t>(micro_batches.size());
    decisions->set_chunks(chunks);
    const std::uint32_t recomputed = recompute ? layers : 0;
    add_stage_checkpointing(decisions, 0, layers, chunks, recomputed * chunks, recomputed);
  }
  const PlanSummary summary{lengths.size(), total_tokens, slots, model_flops, 1, groups};
  return finish_plan(
      b, sc, summary, strategy, [&](std::uint32_t r) { return fmt::format(" (SP group {} of degree {})", r / d, d); },
      fmt::format("lower plan.ulysses.packing_fill ({}), raise plan.ulysses.sp_degree or set plan.ulysses.full_recompute",
                  options.packing_fill));
}

}  // namespace

proto::Schedule plan_ulysses(const PlanContext& sc, const UlyssesOptions& options,
                             std::span<const std::uint64_t> lengths, std::uint32_t d, std::string_view strategy,
                             double* estimated_step_s) {
  const UlyssesDecisions decided = decide_ulysses(sc, options, lengths, d, strategy);
  if (estimated_step_s != nullptr) *estimated_step_s = decided.estimated_step_s;
  return build_ulysses(sc, options, lengths, decided, strategy);
}

proto::Schedule UlyssesPlanner::plan(const PlanContext& sc, std::span<const std::uint64_t> lengths) const {
  return plan_ulysses(sc, options_, lengths, options_.sp_degree, name());
}

proto::Schedule UlyssesAdaptivePlanner::plan(const PlanContext& sc, std::span<const std::uint64_t> lengths) const {
  // Every degree's decisions and estimate first; then only the best one's
  // Schedule is built (one Schedule in memory at a time): the smallest estimate
  // (ties: the smaller degree) among the degrees whose plan fits, a degree whose
  // Schedule fails the memory check giving way to the next.
  const std::uint32_t n = sc.usable_gpus();
  std::vector<UlyssesDecisions> candidates;
  std::map<std::uint32_t, std::string> errors;  // by degree
  for (std::uint32_t d = 1; d <= n; d *= 2) {
    if (n % d != 0 || !ulysses_degree_fits(sc.model, d)) continue;
    try {
      auto decided = decide_ulysses(sc, options_, lengths, d, name());
      logging::debug("plan.ulysses", "ulysses-adaptive: SP degree {} estimated at {:.4f} s", d, decided.estimated_step_s);
      if (decided.estimated_step_s < std::numeric_limits<double>::infinity()) candidates.push_back(std::move(decided));
    } catch (const InputError& e) {
      logging::debug("plan.ulysses", "ulysses-adaptive: SP degree {} does not fit: {}", d, e.what());
      errors[d] = e.what();
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const UlyssesDecisions& x, const UlyssesDecisions& y) {
    return x.estimated_step_s < y.estimated_step_s;
  });
  for (const auto& decided : candidates) {
    try {
      return build_ulysses(sc, options_, lengths, decided, name());
    } catch (const InputError& e) {
      logging::debug("plan.ulysses", "ulysses-adaptive: SP degree {} does not fit: {}", decided.degree, e.what());
      errors[decided.degree] = e.what();
    }
  }
  throw InputError(fmt::format("{}: ulysses-adaptive: no power-of-two SP degree up to {} fits the batch; at the "
                               "largest degree tried: {}",
                               sc.source, n, errors.empty() ? std::string() : errors.rbegin()->second));
}

}  // namespace eppsim
