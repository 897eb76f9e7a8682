#include "sim/plan/epp.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "models/activation_memory.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/progress.h"
#include "models/memory_model.h"
#include "models/pipeline_traffic.h"
#include "models/sequence_parallel_cost.h"
#include "sim/plan/epp_chunking.h"
#include "sim/plan/epp_schedule.h"
#include "sim/plan/layer_pieces.h"
#include "sim/plan/packed_1f1b.h"
#include "sim/plan/packing.h"
#include "sim/plan/plan_estimate.h"
#include "sim/plan/planner_registry.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/stages_and_sp.h"

namespace eppsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kRoundingSlackBytes = 1 << 20;  // chunk_activation_bytes rounds each term

// Everything a replica's planning needs, fixed for the scenario.
class EppContext {
 public:
  EppContext(const PlanContext& sc, const EppOptions& options, EppVariant variant)
      : sc_(sc), variant_(variant), estimate_(sc.model, *sc.cost) {
    stages_ = options.pipeline_stages;
    sp_ = options.sp_degree;
    zero_stage_ = options.zero_stage;
    dp_ = sc.usable_gpus() / (stages_ * sp_);
    shapes_ = stage_shapes(sc.model, stages_);
    slice_counts_ = options.slice_counts;
    gap_ = options.checkpoint_gap;
    time_limit_s_ = options.solver_time_limit_s;
    for (std::uint32_t d = 1; d <= sp_; d *= 2) {
      if (sp_ % d != 0 || !ulysses_degree_fits(sc.model, d)) continue;
      if (variant == EppVariant::Flex || d == sp_) degrees_.push_back(d);
    }
    if (degrees_.empty() || degrees_.back() != sp_) degrees_.push_back(sp_);
  }

  const PlanContext& scenario() const { return sc_; }
  EppVariant variant() const { return variant_; }
  std::uint32_t stages() const { return stages_; }
  std::uint32_t sp() const { return sp_; }
  std::uint32_t dp() const { return dp_; }
  std::uint32_t stage_ranks() const { return dp_ * sp_; }
  std::uint32_t zero_stage() const { return zero_stage_; }
  const std::vector<StageShape>& shapes() const { return shapes_; }
  const std::vector<std::uint32_t>& slice_counts() const { return slice_counts_; }
  const std::vector<std::uint32_t>& degrees() const { return degrees_; }
  // The step time of `schedule` as the scenario's engine runs it (epp-flex's check).
  double evaluate(const proto::Schedule& schedule) const {
    if (!sc_.simulate) throw std::invalid_argument("epp-flex needs a schedule evaluator (PlanContext::simulate)");
    return sc_.simulate(schedule);
  }
  // A chunk as the Schedule runs it, whole, on one GPU of a degree-d group (plan_estimate.h).
  double segment_seconds(const Segment& seg, std::uint32_t d) const { return estimate_.segment_seconds(seg, d); }
  double chunk_seconds(std::span<const Segment> segments, std::uint32_t d) const {
    return estimate_.chunk_seconds(segments, d);
  }

  CheckpointProblem checkpoint_problem(std::uint32_t d, std::span<const Seq1F1BChunk> chunks) const {
    CheckpointProblem p;
    p.model = &sc_.model;
    p.shapes = shapes_;
    p.sp_degree = d;
    p.time_limit_s = time_limit_s_;
    p.relative_gap = gap_;
    std::uint64_t largest = 0;
    double forward = 0.0;
    for (const auto& c : chunks) {
      largest = std::max(largest, c.tokens());
      forward += estimate_.layer_forward_seconds(c.segments, d);
    }
    p.layer_forward_seconds = chunks.empty() ? 0.0 : forward / static_cast<double>(chunks.size());
    const std::array<Segment, 1> probe{Segment{largest, 0}};
    for (const auto& shape : shapes_) {
      const double states = static_cast<double>(model_state_bytes(shape.params, zero_stage_, stage_ranks()).total().count);
      ActivationChunk act{probe, 0, shape.layer_count, 1, shape.last};
      const double transient = static_cast<double>(
          chunk_backward_transient_bytes(sc_.model, act, ActivationOptions{d, LogitsMemory::FusedInPlace}).count);
      p.stage_budget_bytes.push_back(static_cast<double>(sc_.memory_limit.count) - states - transient -
                                     kRoundingSlackBytes);
    }
    return p;
  }

  CheckpointPolicy policy() const {
    switch (variant_) {
      case EppVariant::NoCheckpoint: return CheckpointPolicy::None;
      case EppVariant::FullCheckpoint: return CheckpointPolicy::Full;
      default: return CheckpointPolicy::Adaptive;
    }
  }

 private:
  const PlanContext& sc_;
  EppVariant variant_;
  std::uint32_t stages_ = 1, sp_ = 1, dp_ = 1, zero_stage_ = 0;
  std::vector<StageShape> shapes_;
  std::vector<std::uint32_t> slice_counts_, degrees_;
  double gap_ = 0.02, time_limit_s_ = 10.0;
  PlanEstimate estimate_;
};

// The chunks of some units, in order, as the 1F1B queue sees them: a long
// sequence's chunks share its id and only its last is final.
std::vector<Seq1F1BChunk> to_pipeline_chunks(std::span<const EppUnit* const> units) {
  std::vector<Seq1F1BChunk> out;
  std::uint32_t id = 0;
  for (const EppUnit* unit : units) {
    for (std::size_t k = 0; k < unit->chunks.size(); ++k) {
      const EppChunk& chunk = unit->chunks[k];
      out.push_back(Seq1F1BChunk{chunk.segments, id, k + 1 == unit->chunks.size(), chunk.long_sequence});
    }
    ++id;
  }
  return out;
}

double stage_seconds(const EppContext& ctx, std::span<const Seq1F1BChunk> chunks, std::uint32_t d) {
  double sum = 0.0;
  for (const auto& c : chunks) sum += ctx.chunk_seconds(c.segments, d);
  return sum / ctx.stages();
}

// Estimated time of one lane: its chunks' stage times, warm-up and cool-down,
// and the checkpoint plan's critical recomputation (F_hat * sum of diagonals).
// Warm-up and cool-down: the paper's (stages - 1) * the mean chunk stage time;
// epp-flex refines it to what 1F1B fills and drains with, the first chunk's
// forward and the last chunk's backward on every other stage (about 1/3 and
// 2/3 of a chunk's time): with the longest sequences first, the mean
// understates it, most for the short lanes of a split pipeline.
double lane_seconds(const EppContext& ctx, const EppLane& lane, std::uint32_t d) {
  if (lane.chunks.empty()) return 0.0;
  const double total = stage_seconds(ctx, lane.chunks, d);
  double delta = (ctx.stages() - 1) * total / static_cast<double>(lane.chunks.size());
  if (ctx.variant() == EppVariant::Flex) {
    const double first = ctx.chunk_seconds(lane.chunks.front().segments, d) / ctx.stages();
    const double last = ctx.chunk_seconds(lane.chunks.back().segments, d) / ctx.stages();
    delta = (ctx.stages() - 1) * (first / 3.0 + 2.0 * last / 3.0);
  }
  double diagonals = 0.0;
  for (auto x : lane.checkpoint.diagonals) diagonals += x;
  const CheckpointProblem p = ctx.checkpoint_problem(d, lane.chunks);
  return total + delta + p.layer_forward_seconds * diagonals;
}

// A pipeline of `units` at SP degree d: sp/d lanes dealt by cost; infeasible
// (estimated_s = inf) when a lane does not fit.
EppPipeline make_pipeline(const EppContext& ctx, std::span<const EppUnit* const> units, std::uint32_t d) {
  EppPipeline p;
  p.sp_degree = d;
  const std::uint32_t lanes = ctx.sp() / d;
  std::vector<double> costs;
  for (const EppUnit* u : units) {
    double c = 0.0;
    for (const auto& chunk : u->chunks) c += ctx.chunk_seconds(chunk.segments, d);
    costs.push_back(c);
  }
  const Bins bins = longest_processing_time(costs, lanes);
  p.estimated_s = 0.0;
  for (const auto& bin : bins) {
    std::vector<std::uint32_t> members(bin.begin(), bin.end());
    std::sort(members.begin(), members.end());  // keep the longest-first order
    std::vector<const EppUnit*> mine;
    for (auto i : members) mine.push_back(units[i]);
    EppLane lane;
    lane.chunks = to_pipeline_chunks(mine);
    if (!lane.chunks.empty()) {
      // epp-flex keeps planning time bounded: a degree below sp is only taken
      // where it needs no recomputation (no ILP per lane).
      const CheckpointPolicy policy = d < ctx.sp() ? CheckpointPolicy::None : ctx.policy();
      lane.checkpoint = plan_checkpointing(ctx.checkpoint_problem(d, lane.chunks), lane.chunks, policy);
      if (!lane.checkpoint.feasible) {
        p.estimated_s = kInf;
        return p;
      }
    }
    p.estimated_s = std::max(p.estimated_s, lane_seconds(ctx, lane, d));
    p.lanes.push_back(std::move(lane));
  }
  return p;
}

// A lower bound of any pipeline of `units`: their stage times at full degree
// and its warm-up and cool-down, without recomputation.
double pipeline_lower_bound(const EppContext& ctx, std::span<const EppUnit* const> units) {
  double total = 0.0;
  std::size_t chunks = 0;
  for (const EppUnit* u : units) {
    for (const auto& c : u->chunks) total += ctx.chunk_seconds(c.segments, ctx.sp());
    chunks += u->chunks.size();
  }
  total /= ctx.stages();
  return chunks == 0 ? 0.0 : total + (ctx.stages() - 1) * total / static_cast<double>(chunks);
}

// The best pipeline of `units` over the allowed degrees.
EppPipeline best_pipeline(const EppContext& ctx, std::span<const EppUnit* const> units) {
  EppPipeline best;
  best.estimated_s = kInf;
  for (auto d : ctx.degrees()) {
    EppPipeline p = make_pipeline(ctx, units, d);
    if (p.estimated_s < best.estimated_s) best = std::move(p);
  }
  return best;
}

// epp-flex: whether two consecutive pipelines of one degree can share one 1F1B
// order per lane (no drain between them) with their own checkpoint plans.
bool can_overlap(const EppContext& ctx, const EppPipeline& a, const EppPipeline& b) {
  if (a.sp_degree != b.sp_degree || a.lanes.size() != b.lanes.size()) return false;
  for (std::size_t j = 0; j < a.lanes.size(); ++j) {
    std::vector<Seq1F1BChunk> merged = a.lanes[j].chunks;
    // Sequence ids must stay distinct across the two.
    std::uint32_t offset = 0;
    for (const auto& c : merged) offset = std::max(offset, c.sequence + 1);
    for (auto c : b.lanes[j].chunks) {
      c.sequence += offset;
      merged.push_back(std::move(c));
    }
    if (merged.empty()) continue;
    const CheckpointProblem problem = ctx.checkpoint_problem(a.sp_degree, merged);
    std::vector<std::vector<std::uint32_t>> layers(ctx.stages());
    for (std::uint32_t s = 0; s < ctx.stages(); ++s) {
      layers[s] = a.lanes[j].checkpoint.layers.empty() ? std::vector<std::uint32_t>(a.lanes[j].chunks.size(), 0)
                                                       : a.lanes[j].checkpoint.layers[s];
      const auto& tail = b.lanes[j].checkpoint.layers;
      for (std::size_t k = 0; k < b.lanes[j].chunks.size(); ++k) layers[s].push_back(tail.empty() ? 0 : tail[s][k]);
    }
    const std::vector<double> peaks = peak_activation_bytes(problem, merged, layers);
    for (std::uint32_t s = 0; s < ctx.stages(); ++s) {
      if (peaks[s] > problem.stage_budget_bytes[s]) return false;
    }
  }
  return true;
}

// epp-flex: the engine's step time of one pipeline run alone on the first
// stages*sp ranks (through the injected evaluator), to check a degree the
// closed-form estimate chose.
double simulated_seconds(const EppContext& ctx, const EppPipeline& pipeline) {
  EppPlan one;
  one.stages = ctx.stages();
  one.sp_degree = ctx.sp();
  one.data_parallel = 1;
  one.replicas.push_back(EppReplicaPlan{0, {pipeline}, 0.0});
  EmittedEpp emitted = emit_epp(ctx.scenario(), ctx.shapes(), ctx.zero_stage(), one, "epp-flex");
  return ctx.evaluate(emitted.builder.finish());
}

EppReplicaPlan plan_replica(const EppContext& ctx, std::span<const std::uint64_t> lengths) {
  EppReplicaPlan best;
  best.estimated_step_s = kInf;
  if (lengths.empty()) {
    best.estimated_step_s = 0.0;
    return best;
  }
  const auto& model = ctx.scenario().model;
  const SegmentSeconds seconds = [&](const Segment& s) { return ctx.segment_seconds(s, ctx.sp()); };
  for (auto k : ctx.slice_counts()) {
    const EppChunking chunking = ctx.variant() == EppVariant::EvenSplit ? even_chunking(lengths, k, seconds)
                                                                         : balanced_chunking(model, lengths, k, seconds);
    std::vector<const EppUnit*> units;
    for (const auto& u : chunking.units) units.push_back(&u);
    std::stable_sort(units.begin(), units.end(),
                     [](const EppUnit* a, const EppUnit* b) { return a->chunks.size() > b->chunks.size(); });
    // Classes of equal chunk count: [starts[c], starts[c+1]).
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < units.size(); ++i) {
      if (i == 0 || units[i]->chunks.size() != units[i - 1]->chunks.size()) starts.push_back(i);
    }
    starts.push_back(units.size());
    const std::size_t classes = starts.size() - 1;
    // No grouping of this K beats the plan in hand: skip its ILPs. (Only with
    // recomputation-free degrees below sp, the bound is not one for epp-flex.)
    if (ctx.variant() != EppVariant::Flex && pipeline_lower_bound(ctx, units) >= best.estimated_step_s) {
      logging::debug("plan.epp", "K={}: {} chunks; skipped, its lower bound is no better than {:.4f} s", k,
                     chunking.chunk_count(), best.estimated_step_s);
      continue;
    }
    std::vector<double> dp(classes + 1, kInf);
    std::vector<std::size_t> from(classes + 1, 0);
    std::map<std::pair<std::size_t, std::size_t>, EppPipeline> pipelines;
    dp[0] = 0.0;
    for (std::size_t j = 1; j <= classes; ++j) {
      for (std::size_t i = 0; i < j; ++i) {
        if (dp[i] == kInf) continue;
        const std::span<const EppUnit* const> group(units.data() + starts[i], starts[j] - starts[i]);
        if (ctx.variant() != EppVariant::Flex && dp[i] + pipeline_lower_bound(ctx, group) >= dp[j]) continue;
        EppPipeline p = best_pipeline(ctx, group);
        if (dp[i] + p.estimated_s < dp[j]) {
          dp[j] = dp[i] + p.estimated_s;
          from[j] = i;
        }
        pipelines[{i, j}] = std::move(p);
      }
    }
    logging::debug("plan.epp", "K={}: {} chunks in {} classes, estimated {:.4f} s", k, chunking.chunk_count(), classes,
                   dp[classes]);
    if (dp[classes] >= best.estimated_step_s) continue;
    EppReplicaPlan plan;
    plan.slices = k;
    plan.estimated_step_s = dp[classes];
    for (std::size_t j = classes; j > 0; j = from[j]) {
      EppPipeline chosen = std::move(pipelines[{from[j], j}]);
      if (ctx.variant() == EppVariant::Flex && chosen.sp_degree < ctx.sp()) {
        // The closed form chose a smaller degree: confirm it on the engine
        // against the full degree, and keep the faster.
        const std::span<const EppUnit* const> group(units.data() + starts[from[j]], starts[j] - starts[from[j]]);
        EppPipeline full = make_pipeline(ctx, group, ctx.sp());
        if (full.estimated_s < kInf && simulated_seconds(ctx, full) <= simulated_seconds(ctx, chosen)) {
          plan.estimated_step_s += full.estimated_s - chosen.estimated_s;
          chosen = std::move(full);
        }
      }
      plan.pipelines.push_back(std::move(chosen));
    }
    std::reverse(plan.pipelines.begin(), plan.pipelines.end());
    best = std::move(plan);
  }
  if (best.estimated_step_s == kInf) {
    const std::uint64_t longest = *std::max_element(lengths.begin(), lengths.end());
    const bool no_ckpt = ctx.variant() == EppVariant::NoCheckpoint;
    throw InputError(fmt::format(
        "{}: {}: no slice number K in plan.epp.slice_counts fits the memory limit {}: the longest sequence of {} "
        "tokens does not fit a {}-stage pipeline {}; add pipeline stages or GPUs, lower workload.max_length or try "
        "larger slice counts",
        ctx.scenario().source, no_ckpt ? "epp-no-ckpt" : "epp", format_bytes(ctx.scenario().memory_limit), longest,
        ctx.stages(), no_ckpt ? "without recomputation" : "even with every layer checkpointed"));
  }
  if (ctx.variant() == EppVariant::Flex) {
    for (std::size_t q = 1; q < best.pipelines.size(); ++q) {
      if (can_overlap(ctx, best.pipelines[q - 1], best.pipelines[q])) {
        best.pipelines[q].overlaps_previous = true;
        // The saved drain: one warm-up and cool-down.
        double total = 0.0;
        std::size_t chunks = 0;
        for (const auto& lane : best.pipelines[q].lanes) {
          total = std::max(total, stage_seconds(ctx, lane.chunks, best.pipelines[q].sp_degree));
          chunks = std::max(chunks, lane.chunks.size());
        }
        if (chunks > 0) best.estimated_step_s -= (ctx.stages() - 1) * total / static_cast<double>(chunks);
      }
    }
  }
  return best;
}

}  // namespace

EppPlan plan_epp(const PlanContext& sc, const EppOptions& options, std::span<const std::uint64_t> lengths,
                 EppVariant variant) {
  const EppContext ctx(sc, options, variant);
  EppPlan out;
  out.stages = ctx.stages();
  out.sp_degree = ctx.sp();
  out.data_parallel = ctx.dp();
  std::vector<double> costs(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) costs[i] = ctx.segment_seconds(Segment{lengths[i], 0}, ctx.sp());
  progress::ProgressLine line(fmt::format("planning {}", epp_strategy_name(variant)), progress::Options{.check_every = 1});
  const Bins bins = longest_processing_time(costs, ctx.dp());
  std::vector<std::vector<std::uint64_t>> lengths_of(bins.size());  // per replica, its sequences' lengths
  for (std::size_t d = 0; d < bins.size(); ++d)
    for (auto i : bins[d]) lengths_of[d].push_back(lengths[i]);
  out.identical_replicas = bins.size() > 1 && std::all_of(lengths_of.begin(), lengths_of.end(),
                                                          [&](const auto& mine) { return mine == lengths_of.front(); });
  if (out.identical_replicas) {
    logging::info("plan.epp", "every one of the {} replicas has the same {} sequences in the same order: planning one",
                  bins.size(), lengths_of.front().size());
  }
  std::optional<EppReplicaPlan> planned_once;
  for (const auto& bin : bins) {
    line.update([&] { return fmt::format("replica {} of {} (a K search each)", out.replicas.size() + 1, ctx.dp()); });
    if (planned_once) {
      out.replicas.push_back(*planned_once);  // replica 0's plan, over this replica's sequences (renamed below)
    } else {
      out.replicas.push_back(plan_replica(ctx, lengths_of[out.replicas.size()]));
      if (out.identical_replicas) planned_once = out.replicas.back();
    }
    // The replica planned its own sequences: its slices name them by batch index.
    for (auto& pipeline : out.replicas.back().pipelines)
      for (auto& lane : pipeline.lanes)
        for (auto& chunk : lane.chunks)
          if (chunk.batch_sequence >= 0) chunk.batch_sequence = bin[static_cast<std::size_t>(chunk.batch_sequence)];
    logging::debug("plan.epp", "replica {}: {} sequences, chose K={}, {} pipelines, estimated {:.4f} s",
                   out.replicas.size() - 1, bin.size(), out.replicas.back().slices,
                   out.replicas.back().pipelines.size(), out.replicas.back().estimated_step_s);
  }
  return out;
}

EppOptions resolve_epp_options(const ResolvedScenario& resolved) {
  // Every option has a default, so a scenario written for another strategy runs this one.
  const FieldLocator& where = resolved.where();
  const proto::Plan& plan = resolved.proto.plan();
  const proto::EppOptions& options = plan.epp();
  const StagesAndSp layout = resolve_stages_and_sp(resolved, "plan.epp", options.pipeline_stages(), options.sp_degree());
  for (int i = 0; i < options.slice_counts_size(); ++i) {
    const auto k = options.slice_counts(i);
    if (k == 0 || k > 1024) {
      where.fail(fmt::format("plan.epp.slice_counts[{}]", i), fmt::format("must be in [1, 1024], got {}", k));
    }
  }
  const double gap = options.checkpoint_gap();
  if (!(gap >= 0.0 && gap < 1.0)) {
    where.fail("plan.epp.checkpoint_gap", fmt::format("must be in [0, 1) (0 means the default 0.02), got {}", gap));
  }
  const double limit = options.solver_time_limit_s();
  if (!(limit >= 0.0) || !std::isfinite(limit)) {
    where.fail("plan.epp.solver_time_limit_s", fmt::format("must be >= 0 (0 means the default 10 s), got {}", limit));
  }
  if (plan.zero_stage() > 2) {
    where.fail("plan.zero_stage", fmt::format("epp supports ZeRO stages 0 to 2, got {}", plan.zero_stage()));
  }
  EppOptions out;
  out.pipeline_stages = layout.pipeline_stages;
  out.sp_degree = layout.sp_degree;
  if (options.slice_counts_size() > 0) out.slice_counts.assign(options.slice_counts().begin(), options.slice_counts().end());
  if (gap > 0) out.checkpoint_gap = gap;
  if (limit > 0) out.solver_time_limit_s = limit;
  out.zero_stage = plan.zero_stage();
  return out;
}

std::vector<PlannerRegistration> epp_registrations() {
  std::vector<PlannerRegistration> out;
  for (const EppVariant variant : {EppVariant::Faithful, EppVariant::NoCheckpoint, EppVariant::FullCheckpoint,
                                   EppVariant::EvenSplit, EppVariant::Flex}) {
    out.push_back(register_planner<EppOptions>(epp_strategy_name(variant), resolve_epp_options,
                                               [variant](EppOptions options) {
                                                 return std::make_unique<EppPlanner>(variant, std::move(options));
                                               }));
  }
  return out;
}

std::string epp_strategy_name(EppVariant variant) {
  switch (variant) {
    case EppVariant::Faithful: return "epp";
    case EppVariant::NoCheckpoint: return "epp-no-ckpt";
    case EppVariant::FullCheckpoint: return "epp-full-ckpt";
    case EppVariant::EvenSplit: return "epp-even-split";
    case EppVariant::Flex: return "epp-flex";
  }
  return "epp";
}

std::string EppPlanner::name() const { return epp_strategy_name(variant_); }

}  // namespace eppsim
