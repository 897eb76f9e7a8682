#include "sim/plan/ulysses.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "models/activation_memory.h"
#include "models/all_to_all_bandwidth.h"
#include "models/chunk.h"
#include "models/errors.h"
#include "models/memory_model.h"
#include "models/sequence_parallel_cost.h"
#include "sim/plan/packing.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/zero3_layers.h"

namespace eppsim {

namespace {

constexpr double kDefaultPackingFill = 0.9;

double packing_fill(const ResolvedScenario& sc) {
  const double fill = sc.proto.plan().ulysses().packing_fill();
  return fill == 0.0 ? kDefaultPackingFill : fill;
}

bool full_recompute(const ResolvedScenario& sc) { return sc.proto.plan().ulysses().full_recompute(); }

void check_degree(const ResolvedScenario& sc, std::uint32_t d, std::string_view strategy) {
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

// The rank's compute time (all passes) and all-to-all time of one micro-batch,
// with the two all-to-alls per layer and pass the Schedule has.
double micro_batch_seconds(const ResolvedScenario& sc, std::span<const Segment> segments, std::uint32_t d,
                           const AllToAllBandwidth& bandwidth) {
  const ChunkWork work{segments, sc.model.layers, true, true};
  std::vector<Pass> passes{Pass::Forward, Pass::Backward};
  if (full_recompute(sc)) passes.push_back(Pass::Recompute);
  double total = 0.0;
  for (Pass pass : passes) {
    total += sc.compute_cost->cost(ComputeWork{pass, work, LayerPart::Whole, d}).time.value;
    if (d > 1) total += sc.model.layers * ulysses_layer_cost(sc.model, segments, d, pass, bandwidth).time.value;
  }
  return total;
}

}  // namespace

std::uint32_t ulysses_sp_degree(const ResolvedScenario& sc) {
  const std::uint32_t d = sc.proto.plan().ulysses().sp_degree();
  return d == 0 ? sc.cluster.gpus_per_node : d;
}

std::uint64_t ulysses_group_capacity(const ResolvedScenario& sc, std::uint32_t d) {
  const Zero3Memory memory = zero3_memory(sc, full_recompute(sc));
  if (memory.fixed_bytes() >= sc.memory_limit.count) {
    throw InputError(fmt::format(
        "{}: ulysses: ZeRO-3 model states ({}) and the gathered-weight buffer ({}) leave no room for activations "
        "under the memory limit {}; use more GPUs or a larger plan.memory_fraction",
        sc.source, format_bytes(Bytes(memory.state_bytes)), format_bytes(Bytes(memory.gather_buffer_bytes)),
        format_bytes(sc.memory_limit)));
  }
  return memory.capacity(sc.memory_limit.count, d, packing_fill(sc));
}

proto::Schedule plan_ulysses(const ResolvedScenario& sc, std::span<const std::uint64_t> lengths, std::uint32_t d,
                             std::string_view strategy, double* estimated_step_s) {
  check_degree(sc, d, strategy);
  const std::uint32_t n = sc.usable_gpus();
  const std::uint32_t groups = n / d;
  const auto& model = sc.model;
  const bool recompute = full_recompute(sc);
  const std::uint64_t capacity = ulysses_group_capacity(sc, d);
  const AllToAllBandwidth bandwidth = AllToAllBandwidth::from_cluster(sc.cluster);

  for (auto len : lengths) {
    if (len > capacity) {
      throw InputError(fmt::format(
          "{}: {}: a sequence of {} tokens does not fit an SP group of degree {} (capacity {} tokens per micro-batch "
          "at packing_fill {}); raise plan.ulysses.sp_degree or set plan.ulysses.full_recompute",
          sc.source, strategy, len, d, capacity, packing_fill(sc)));
    }
  }

  // 1. Micro-batches: best-fit decreasing at the group capacity.
  std::vector<std::vector<Segment>> micro_batches;
  for (const auto& bin : best_fit_decreasing(lengths, capacity)) {
    std::vector<Segment> segments;
    for (auto k : bin) segments.push_back(Segment{lengths[k], 0});
    micro_batches.push_back(std::move(segments));
  }
  std::vector<double> costs(micro_batches.size());
  for (std::size_t i = 0; i < micro_batches.size(); ++i) costs[i] = micro_batch_seconds(sc, micro_batches[i], d, bandwidth);

  // 2. Micro-batches to groups, balanced; each group runs its own in decreasing cost.
  Bins per_group = longest_processing_time(costs, groups);
  std::uint32_t slots = 0;
  for (auto& bin : per_group) {
    std::stable_sort(bin.begin(), bin.end(), [&](std::uint32_t a, std::uint32_t b) { return costs[a] > costs[b]; });
    slots = std::max(slots, static_cast<std::uint32_t>(bin.size()));
  }
  slots = std::max(slots, 1u);

  // 3. ZeRO-3, layer by layer (zero3_layers.h): every rank gathers each layer
  // before it runs and reduce-scatters its gradients after its backward, also
  // in the slots where its group has no micro-batch left.
  const auto weight_bytes = static_cast<std::uint64_t>(model.total_params() * model.bytes_per_element);
  ScheduleBuilder b(n, sc.proto.name(), std::string(strategy), model);
  const Zero3Setup streams = add_zero3(b, n);
  for (std::uint32_t r = 0; r < n; ++r) b.place(r, sc.node_of_rank(r), sc.cluster.local_gpu_of(r));
  std::vector<std::uint32_t> sp_groups(groups);
  for (std::uint32_t g = 0; g < groups; ++g) {
    std::vector<std::uint32_t> ranks(d);
    std::iota(ranks.begin(), ranks.end(), g * d);
    sp_groups[g] = b.add_group(fmt::format("ulysses sp_degree {} group {}", d, g), std::move(ranks));
  }

  const Zero3Memory memory = zero3_memory(sc, recompute);
  const double shard_params = model.total_params() / n;
  const std::uint32_t layers = model.layers;
  double model_flops = 0.0;
  std::uint64_t total_tokens = 0;
  for (auto len : lengths) total_tokens += len;

  for (std::uint32_t g = 0; g < groups; ++g) {
    UlyssesGroup sp{sp_groups[g], d, {}};
    sp.split.add(proto::SEQUENCE_PARALLEL, sp_groups[g], d);
    std::map<std::array<std::uint32_t, 3>, std::vector<LayerPiece>> piece_cache;  // (slot, pass, layer)
    for (std::uint32_t k = 0; k < d; ++k) {
      const std::uint32_t rank = g * d + k;
      b.memory(rank, streams.compute, {}, true, memory.state_bytes, proto::MODEL_STATES);
      if (memory.gather_buffer_bytes > 0) {
        b.memory(rank, streams.compute, {}, true, memory.gather_buffer_bytes, proto::WORKSPACE);
      }
      Zero3LayerProgram program(b, rank, streams, weight_bytes, layers);
      // A layer's pieces are the same on every rank of the group: built once (and
      // their model FLOPs counted once, times the degree) and copied into each program.
      auto pieces = [&](Pass pass, std::uint32_t j, std::span<const Segment> segments,
                        std::uint32_t layer) -> const std::vector<LayerPiece>& {
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
          std::vector<LayerPiece> backward = pieces(Pass::Recompute, j, segments, l);
          for (const auto& p : pieces(Pass::Backward, j, segments, l)) backward.push_back(p);
          program.visit(backward, true);
        }
        b.memory(rank, streams.compute, {}, false, activations, proto::ACTIVATIONS);
      }
      // Optimizer on this rank's 1/N shard.
      b.compute(rank, streams.compute, program.tail(), adam_step_op(sc, shard_params, 0, 0, model.layers));
    }
  }

  if (estimated_step_s != nullptr) {
    const Zero3LayerSeconds zero = zero3_layer_seconds(sc, weight_bytes, layers);
    double step = 0.0;
    for (std::uint32_t j = 0; j < slots; ++j) {
      double slowest = 0.0;
      for (std::uint32_t g = 0; g < groups; ++g) {
        if (j < per_group[g].size()) slowest = std::max(slowest, costs[per_group[g][j]]);
      }
      // ZeRO-3 gathers hide behind compute but for the first of each pass;
      // a pass whose gathers outlast its compute waits for them.
      const double gathers = layers * zero.gather, reduces = layers * zero.reduce_scatter;
      step += std::max(slowest, 2.0 * gathers + reduces) + zero.gather + zero.reduce_scatter;
    }
    step += shard_params * 28.0 / sc.cluster.gpu.memory_bandwidth.value;
    *estimated_step_s = step;
  }

  const PlanSummary summary{lengths.size(), total_tokens, slots, model_flops, 1, groups};
  return finish_plan(
      b, sc, summary, strategy, [&](std::uint32_t r) { return fmt::format(" (SP group {} of degree {})", r / d, d); },
      fmt::format("lower plan.ulysses.packing_fill ({}), raise plan.ulysses.sp_degree or set plan.ulysses.full_recompute",
                  packing_fill(sc)));
}

proto::Schedule UlyssesPlanner::plan(const ResolvedScenario& sc, std::span<const std::uint64_t> lengths) const {
  return plan_ulysses(sc, lengths, ulysses_sp_degree(sc), name());
}

proto::Schedule UlyssesAdaptivePlanner::plan(const ResolvedScenario& sc, std::span<const std::uint64_t> lengths) const {
  const std::uint32_t n = sc.usable_gpus();
  std::optional<proto::Schedule> best;
  double best_time = std::numeric_limits<double>::infinity();
  std::string last_error;
  for (std::uint32_t d = 1; d <= n; d *= 2) {
    if (n % d != 0 || !ulysses_degree_fits(sc.model, d)) continue;
    try {
      double estimate = 0.0;
      auto schedule = plan_ulysses(sc, lengths, d, name(), &estimate);
      if (estimate < best_time) {
        best_time = estimate;
        best = std::move(schedule);
      }
    } catch (const InputError& e) {
      last_error = e.what();
    }
  }
  if (!best) {
    throw InputError(fmt::format("{}: ulysses-adaptive: no power-of-two SP degree up to {} fits the batch; at the "
                                 "largest degree tried: {}",
                                 sc.source, n, last_error));
  }
  return std::move(*best);
}

}  // namespace eppsim
