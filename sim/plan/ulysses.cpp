#include "sim/plan/ulysses.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "models/activation_memory.h"
#include "models/all_to_all_bandwidth.h"
#include "models/chunk.h"
#include "models/errors.h"
#include "models/memory_model.h"
#include "models/sequence_parallel_cost.h"
#include "models/zero_traffic.h"
#include "sim/plan/packing.h"
#include "sim/plan/schedule_builder.h"

namespace eppsim {

namespace {

constexpr double kDefaultPackingFill = 0.9;

double packing_fill(const ResolvedScenario& sc) {
  const double fill = sc.proto.plan().ulysses().packing_fill();
  return fill == 0.0 ? kDefaultPackingFill : fill;
}

bool full_recompute(const ResolvedScenario& sc) { return sc.proto.plan().ulysses().full_recompute(); }

ActivationChunk whole_model_chunk(const ResolvedScenario& sc, std::span<const Segment> segments) {
  ActivationChunk chunk;
  chunk.segments = segments;
  chunk.layer_count = sc.model.layers;
  chunk.checkpointed_layers = full_recompute(sc) ? sc.model.layers : 0;
  chunk.includes_lm_head = true;
  return chunk;
}

// Gathered-weight buffer: two of the largest parameter groups (in use + prefetched), bf16.
std::uint64_t weight_buffer_bytes(const TransformerSpec& model) {
  const double largest = std::max(model.params_per_layer(), model.embedding_params());
  return static_cast<std::uint64_t>(2.0 * largest * model.bytes_per_element);
}

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

proto::ComputeOp make_compute(const ResolvedScenario& sc, Pass pass, std::uint32_t chunk, std::uint32_t d,
                              std::span<const Segment> segments, double* seconds) {
  const ChunkWork work{segments, sc.model.layers, true, true};
  const ComputeCost cost = sc.compute_cost->cost(pass, work);
  proto::ComputeOp op;
  op.set_phase(pass == Pass::Forward ? proto::FORWARD : pass == Pass::Backward ? proto::BACKWARD : proto::RECOMPUTE);
  op.set_stage(0);
  op.set_chunk(chunk);
  op.set_first_layer(0);
  op.set_layer_count(sc.model.layers);
  for (const auto& seg : segments) {
    auto* s = op.add_segments();
    s->set_tokens(seg.tokens);
    s->set_context_tokens(seg.context_tokens);
  }
  op.set_flops(cost.flops.total() / d);
  op.set_memory_traffic_bytes(cost.memory_traffic.count / d);
  const double share = cost.time.value / d;
  op.set_estimated_duration_ns(static_cast<std::int64_t>(share * 1e9 + 0.5));
  op.set_includes_lm_head(true);
  op.set_shards(d);
  if (seconds != nullptr) *seconds = share;
  return op;
}

// The rank's compute time (all passes) and all-to-all time of one micro-batch.
double micro_batch_seconds(const ResolvedScenario& sc, std::span<const Segment> segments, std::uint32_t d,
                           const AllToAllBandwidth& bandwidth) {
  const ChunkWork work{segments, sc.model.layers, true, true};
  std::vector<Pass> passes{Pass::Forward, Pass::Backward};
  if (full_recompute(sc)) passes.push_back(Pass::Recompute);
  double total = 0.0;
  for (Pass pass : passes) {
    total += sc.compute_cost->cost(pass, work).time.value / d;
    if (d > 1) {
      // The aggregated all-to-all of the pass, priced as the engine's simple cluster does:
      // (d-1) alpha + (d-1)/d * S / B over the slowest link of the group.
      const LinkParams& link = d > sc.cluster.gpus_per_node ? sc.cluster.inter_node : sc.cluster.intra_node;
      const double bytes = static_cast<double>(ulysses_layer_cost(sc.model, segments, d, pass, bandwidth).buffer.count) *
                           sc.model.layers;
      total += (d - 1) * link.latency.value + (d - 1.0) / d * bytes / link.bandwidth.value;
    }
  }
  return total;
}

}  // namespace

std::uint32_t ulysses_sp_degree(const ResolvedScenario& sc) {
  const std::uint32_t d = sc.proto.plan().ulysses().sp_degree();
  return d == 0 ? sc.cluster.gpus_per_node : d;
}

std::uint64_t ulysses_group_capacity(const ResolvedScenario& sc, std::uint32_t d) {
  const std::uint32_t n = sc.usable_gpus();
  const auto& model = sc.model;
  const std::uint64_t states = model_state_bytes(model.total_params(), 3, n).total().count;
  const std::uint64_t fixed = states + weight_buffer_bytes(model);
  if (fixed >= sc.memory_limit.count) {
    throw InputError(fmt::format(
        "{}: ulysses: ZeRO-3 model states ({}) and the gathered-weight buffer ({}) leave no room for activations "
        "under the memory limit {}; use more GPUs or a larger plan.memory_fraction",
        sc.source, format_bytes(Bytes(states)), format_bytes(Bytes(weight_buffer_bytes(model))),
        format_bytes(sc.memory_limit)));
  }
  // Per-GPU bytes per group token, from a large probe (activations are linear in the tokens).
  constexpr std::uint64_t kProbe = std::uint64_t{1} << 24;
  const std::array<Segment, 1> probe{Segment{kProbe, 0}};
  const ActivationOptions options{d};
  const ActivationChunk chunk = whole_model_chunk(sc, probe);
  const double per_token = static_cast<double>((chunk_activation_bytes(model, chunk, options).total() +
                                                chunk_backward_transient_bytes(model, chunk, options))
                                                   .count) /
                           static_cast<double>(kProbe);
  const double available = static_cast<double>(sc.memory_limit.count - fixed);
  return static_cast<std::uint64_t>(std::floor(packing_fill(sc) * available / per_token));
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

  // 3. ZeRO-3 collectives over all N ranks.
  ZeroTrafficOptions zero_options;
  zero_options.stage = 3;
  zero_options.data_parallel = n;
  zero_options.micro_batches = slots;
  zero_options.weight_bytes_per_param = model.bytes_per_element;
  zero_options.gradient_bytes_per_param = model.bytes_per_element;
  const ZeroStepTraffic zero = zero_step_traffic(model.total_params(), zero_options);
  std::optional<ZeroCollective> gather_forward, gather_backward, reduce_scatter;
  for (const auto& c : zero.collectives) {
    if (c.phase == ZeroPhase::BeforeForward) gather_forward = c;
    if (c.phase == ZeroPhase::BeforeBackward) gather_backward = c;
    if (c.phase == ZeroPhase::AfterBackward && c.kind == ZeroCollectiveKind::ReduceScatter) reduce_scatter = c;
  }
  // Closed-form ring time over the slowest link the N ranks use.
  const LinkParams& link = n > sc.cluster.gpus_per_node ? sc.cluster.inter_node : sc.cluster.intra_node;
  double zero_seconds_per_slot = 0.0;
  for (const auto* c : {&gather_forward, &gather_backward, &reduce_scatter}) {
    if (*c) zero_seconds_per_slot += (n - 1) * link.latency.value + static_cast<double>((*c)->sent.count) / link.bandwidth.value;
  }

  ScheduleBuilder b(n, sc.proto.name(), std::string(strategy));
  const auto compute = b.stream("compute");
  const auto comm = b.stream("comm");
  for (std::uint32_t r = 0; r < n; ++r) b.place(r, sc.node_of_rank(r), sc.cluster.local_gpu_of(r));
  std::vector<std::uint32_t> all(n);
  std::iota(all.begin(), all.end(), 0u);
  const std::uint32_t zero_group = b.add_group(fmt::format("zero-3 all {} ranks", n), all);
  std::vector<std::uint32_t> sp_groups(groups);
  for (std::uint32_t g = 0; g < groups; ++g) {
    std::vector<std::uint32_t> ranks(d);
    std::iota(ranks.begin(), ranks.end(), g * d);
    sp_groups[g] = b.add_group(fmt::format("ulysses sp_degree {} group {}", d, g), std::move(ranks));
  }

  const std::uint64_t states = model_state_bytes(model.total_params(), 3, n).total().count;
  const std::uint64_t weight_buffer = weight_buffer_bytes(model);
  const ActivationOptions act_options{d};
  const double shard_params = model.total_params() / n;
  double model_flops = 0.0;
  std::uint64_t total_tokens = 0;
  for (auto len : lengths) total_tokens += len;

  for (std::uint32_t g = 0; g < groups; ++g) {
    for (std::uint32_t k = 0; k < d; ++k) {
      const std::uint32_t rank = g * d + k;
      b.memory(rank, compute, {}, true, states, proto::MODEL_STATES);
      b.memory(rank, compute, {}, true, weight_buffer, proto::WORKSPACE);
      std::optional<OpIndex> last_comm;
      auto chain = [&](std::optional<OpIndex> dep) {
        std::vector<OpIndex> deps;
        if (dep) deps.push_back(*dep);
        return deps;
      };
      auto zero_collective = [&](const std::optional<ZeroCollective>& c, std::optional<OpIndex> dep) -> std::optional<OpIndex> {
        if (!c) return dep;
        const auto kind = c->kind == ZeroCollectiveKind::AllGather ? proto::ALL_GATHER : proto::REDUCE_SCATTER;
        return b.collective(rank, comm, chain(dep), kind, zero_group, c->size.count);
      };
      auto all_to_all = [&](std::span<const Segment> segments, Pass pass, std::optional<OpIndex> dep) -> std::optional<OpIndex> {
        if (d == 1) return dep;
        const std::uint64_t bytes = ulysses_layer_cost(model, segments, d, pass, bandwidth).buffer.count * model.layers;
        return b.collective(rank, comm, chain(dep), proto::ALL_TO_ALL, sp_groups[g], bytes);
      };
      for (std::uint32_t j = 0; j < slots; ++j) {
        std::optional<OpIndex> dep = zero_collective(gather_forward, last_comm);
        if (j < per_group[g].size()) {
          const auto& segments = micro_batches[per_group[g][j]];
          const ActivationChunk chunk = whole_model_chunk(sc, segments);
          const std::uint64_t kept = chunk_activation_bytes(model, chunk, act_options).total().count;
          const std::uint64_t transient = chunk_backward_transient_bytes(model, chunk, act_options).count;
          b.memory(rank, compute, {}, true, kept, proto::ACTIVATIONS);
          auto fwd = make_compute(sc, Pass::Forward, j, d, segments, nullptr);
          model_flops += fwd.flops();
          dep = b.compute(rank, compute, chain(dep), std::move(fwd));
          dep = all_to_all(segments, Pass::Forward, dep);
          dep = zero_collective(gather_backward, dep);
          if (transient > 0) b.memory(rank, compute, {}, true, transient, proto::WORKSPACE);
          if (recompute) {
            dep = b.compute(rank, compute, chain(dep), make_compute(sc, Pass::Recompute, j, d, segments, nullptr));
            dep = all_to_all(segments, Pass::Recompute, dep);
          }
          dep = all_to_all(segments, Pass::Backward, dep);
          auto bwd = make_compute(sc, Pass::Backward, j, d, segments, nullptr);
          model_flops += bwd.flops();
          dep = b.compute(rank, compute, chain(dep), std::move(bwd));
          b.memory(rank, compute, {}, false, kept, proto::ACTIVATIONS);
          if (transient > 0) b.memory(rank, compute, {}, false, transient, proto::WORKSPACE);
        } else {
          dep = zero_collective(gather_backward, dep);
        }
        dep = zero_collective(reduce_scatter, dep);
        if (dep) last_comm = dep;
      }
      // Optimizer on this rank's 1/N shard (Adam, as packed-1f1b: 28 bytes and 12 flops per parameter).
      proto::ComputeOp optimizer;
      optimizer.set_phase(proto::OPTIMIZER);
      optimizer.set_first_layer(0);
      optimizer.set_layer_count(model.layers);
      const auto traffic = static_cast<std::uint64_t>(shard_params * 28.0);
      optimizer.set_flops(shard_params * 12.0);
      optimizer.set_memory_traffic_bytes(traffic);
      optimizer.set_estimated_duration_ns(
          static_cast<std::int64_t>(static_cast<double>(traffic) / sc.cluster.gpu.memory_bandwidth.value * 1e9 + 0.5));
      b.compute(rank, compute, chain(last_comm), std::move(optimizer));
    }
  }

  if (estimated_step_s != nullptr) {
    double step = 0.0;
    for (std::uint32_t j = 0; j < slots; ++j) {
      double slowest = 0.0;
      for (std::uint32_t g = 0; g < groups; ++g) {
        if (j < per_group[g].size()) slowest = std::max(slowest, costs[per_group[g][j]]);
      }
      step += slowest + zero_seconds_per_slot;
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
