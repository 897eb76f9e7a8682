#include "sim/plan/flexsp.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "models/chunk.h"
#include "base/errors.h"
#include "models/flexsp_preset.h"
#include "base/log.h"
#include "base/progress.h"
#include "models/memory_model.h"
#include "models/sequence_parallel_cost.h"
#include "sim/plan/flexsp_partition.h"
#include "sim/plan/milp.h"
#include "sim/plan/plan_estimate.h"
#include "sim/plan/planner_registry.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/zero3_layers.h"
#include "traces/plan_summary.h"

namespace eppsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Estimates on a grid of 2^-40 s (about a picosecond). Sums of them are exact,
// so neither the order a plan's times are added in nor last-bit differences in
// how an estimate is computed can steer the greedy or the MILP's branch and
// bound: stopped at its node limit, the MILP's plan moved by up to 11% of the
// step with a last-bit change of its coefficients.
double on_grid(double seconds) { return std::ldexp(std::round(std::ldexp(seconds, 40)), -40); }

// ---------------------------------------------------------------- cost model

class FlexSpCost {
 public:
  FlexSpCost(const PlanContext& sc, const FlexSpOptions& options)
      : n_(sc.usable_gpus()),
        preset_(sc.flexsp_preset),
        preset_cost_(preset_ != nullptr ? std::make_unique<FlexSpPresetCost>(*preset_, *sc.cost) : nullptr),
        estimate_(sc.model, preset_cost_ != nullptr ? *preset_cost_ : *sc.cost) {
    const auto& model = sc.model;
    memory_ = zero3_memory(sc, false, options.zero3, options.recomputed_mlp_layers);
    recomputed_mlp_layers_ = options.recomputed_mlp_layers;
    beta_ = preset_ != nullptr ? on_grid(preset_->beta1.value) : 0.0;
    capacity_ = memory_.capacity(flexsp_planning_limit(sc, options).count, 1);
    if (n_ == 1) {
      degrees_.push_back(1);
    } else {
      for (std::uint32_t d = 2; d <= n_; d *= 2) {
        if (preset_ != nullptr ? !flexsp_all_to_all_bandwidth().has_degree(d) : !ulysses_degree_fits(model, d)) continue;
        degrees_.push_back(d);
      }
    }
  }

  const std::vector<std::uint32_t>& degrees() const { return degrees_; }  // ascending
  std::uint32_t gpus() const { return n_; }
  std::uint64_t capacity() const { return capacity_; }
  double beta() const { return beta_; }
  const Zero3Memory& memory() const { return memory_; }
  bool fits(std::uint64_t tokens, std::uint32_t d) const { return tokens <= capacity_ * d; }
  // Smallest allowed degree that holds `tokens`; 0 when none.
  std::uint32_t min_degree(std::uint64_t tokens) const {
    for (auto d : degrees_) {
      if (fits(tokens, d)) return d;
    }
    return 0;
  }

  // A group's time running `sequences` (token counts) at degree d. With the
  // preset, FlexSP's additive model: beta1 plus each sequence's time (priced
  // by the preset's cost model, FlexSpPresetCost). Without
  // it, as the Schedule runs the group: its sequences packed into one
  // micro-batch, one compute over all of them and the all-to-alls of all their
  // tokens, each priced once by the scenario's cost model (so per-micro-batch
  // and per-kernel costs, and shapes, count as the engine counts them).
  double group_time(std::span<const std::uint64_t> sequences, std::uint32_t d) const {
    if (sequences.empty()) return 0.0;
    if (preset_ != nullptr || sequences.size() == 1) {
      double t = beta_;
      for (auto s : sequences) t += seq_time(s, d);
      return t;
    }
    std::vector<Segment> segments;
    for (auto s : sequences) segments.push_back(Segment{s, 0});
    return on_grid(chunk_seconds(segments, d));
  }

  // One sequence's time in a degree-d group (without the per-group constant).
  double seq_time(std::uint64_t s, std::uint32_t d) const {
    const Segment segment{s, 0};
    return on_grid(chunk_seconds(std::span<const Segment>(&segment, 1), d));
  }

 private:
  // Forward, backward and the checkpointed MLP blocks' recompute.
  double chunk_seconds(std::span<const Segment> segments, std::uint32_t d) const {
    return estimate_.chunk_seconds(segments, d) +
           estimate_.part_recompute_seconds(segments, d, LayerPart::PostAttention, recomputed_mlp_layers_);
  }

  std::uint32_t n_;
  const FlexSpModel* preset_ = nullptr;
  std::unique_ptr<const FlexSpPresetCost> preset_cost_;  // with the preset: what estimate_ prices with
  PlanEstimate estimate_;
  std::uint32_t recomputed_mlp_layers_ = 0;
  Zero3Memory memory_;
  double beta_ = 0.0;
  std::uint64_t capacity_ = 0;
  std::vector<std::uint32_t> degrees_;
};

// ---------------------------------------------------------------- one micro-batch

// A group before placement: degree and sequence indices (into the batch).
struct Group {
  std::uint32_t degree = 0;
  std::vector<std::uint32_t> sequences;
  std::uint64_t tokens = 0;
  double time = 0.0;
};

struct MicroPlan {
  std::vector<Group> groups;
  double makespan = kInf;
  bool by_milp = false;
  proto::SolveStatus solve = proto::SOLVE_NOT_NEEDED;  // how the micro-batch's MILP ended
  bool feasible() const { return makespan < kInf; }
};

double group_time(const FlexSpCost& cost, const Group& g, std::span<const std::uint64_t> lengths) {
  if (g.sequences.empty()) return 0.0;
  std::vector<std::uint64_t> sequences;
  for (auto i : g.sequences) sequences.push_back(lengths[i]);
  return cost.group_time(sequences, g.degree);
}

void finalize(const FlexSpCost& cost, MicroPlan& plan, std::span<const std::uint64_t> lengths) {
  plan.makespan = 0.0;
  for (auto& g : plan.groups) {
    g.time = group_time(cost, g, lengths);
    plan.makespan = std::max(plan.makespan, g.time);
  }
}

// FlexSP's greedy for one degree: N/d groups, sequences longest first, each to
// the emptiest group (by tokens, or by time) that fits, ties to the first
// group. `seqs` sorted descending. The groups wait in a set ordered by (load,
// index), so a placement costs a logarithm, not a scan of every group: the
// scan made planning quadratic in the GPUs (185 s at 200K GPUs). By tokens the
// emptiest group is the one most likely to fit, so the first group decides; by
// time the walk goes on past the groups too full for the sequence.
MicroPlan greedy(const FlexSpCost& cost, std::uint32_t d, std::span<const std::uint32_t> seqs,
                 std::span<const std::uint64_t> lengths, bool by_time) {
  MicroPlan plan;
  const std::uint32_t count = cost.gpus() / d;
  if (seqs.size() < count) return plan;
  plan.groups.assign(count, Group{d, {}, 0, 0.0});
  const auto load = [&](const Group& g) { return by_time ? g.time : static_cast<double>(g.tokens); };
  std::set<std::pair<double, std::uint32_t>> emptiest;
  for (std::uint32_t g = 0; g < count; ++g) emptiest.emplace(0.0, g);
  for (auto i : seqs) {
    const auto s = lengths[i];
    auto it = emptiest.begin();
    while (it != emptiest.end() && !cost.fits(plan.groups[it->second].tokens + s, d)) {
      if (!by_time) return MicroPlan{};
      ++it;
    }
    if (it == emptiest.end()) return MicroPlan{};
    Group& best = plan.groups[it->second];
    const std::uint32_t index = it->second;
    emptiest.erase(it);
    best.sequences.push_back(i);
    best.tokens += s;
    best.time += cost.seq_time(s, d);
    emptiest.emplace(load(best), index);
  }
  finalize(cost, plan, lengths);
  return plan;
}

MicroPlan best_greedy(const FlexSpCost& cost, std::span<const std::uint32_t> seqs, std::span<const std::uint64_t> lengths) {
  MicroPlan best;
  for (auto d : cost.degrees()) {
    if (cost.gpus() % d != 0) continue;
    for (bool by_time : {false, true}) {
      auto p = greedy(cost, d, seqs, lengths, by_time);
      if (p.makespan < best.makespan) best = std::move(p);
    }
  }
  return best;
}

// Lower bound on the makespan: the GPU-seconds every sequence needs at its
// cheapest allowed degree over N GPUs, plus the per-group constant; and the
// longest sequence's best time.
double lower_bound(const FlexSpCost& cost, std::span<const std::uint32_t> seqs, std::span<const std::uint64_t> lengths) {
  double area = 0.0;
  double longest = 0.0;
  for (auto i : seqs) {
    double best_area = kInf, best_time = kInf;
    for (auto d : cost.degrees()) {
      if (!cost.fits(lengths[i], d)) continue;
      const double t = cost.seq_time(lengths[i], d);
      best_area = std::min(best_area, d * t);
      best_time = std::min(best_time, t);
    }
    area += best_area;
    longest = std::max(longest, best_time);
  }
  return std::max(area / cost.gpus(), longest) + cost.beta();
}

// The bucketed MILP (see flexsp.h). `seqs` sorted descending; `warm` a greedy plan or infeasible.
MicroPlan solve_milp(const FlexSpCost& cost, const FlexSpOptions& opt, std::span<const std::uint32_t> seqs,
                     std::span<const std::uint64_t> lengths, const MicroPlan& warm, double bound) {
  const std::uint32_t n = cost.gpus();
  std::vector<std::uint64_t> sorted;
  for (auto i : seqs) sorted.push_back(lengths[i]);
  const auto counts = bucket_lengths(sorted, opt.max_buckets);
  const std::size_t buckets = counts.size();
  std::vector<std::uint64_t> upper(buckets);
  std::vector<std::uint32_t> bucket_of(seqs.size());
  std::vector<std::uint32_t> dmin(buckets);
  {
    std::size_t at = 0;
    for (std::size_t k = 0; k < buckets; ++k) {
      upper[k] = sorted[at];
      dmin[k] = cost.min_degree(upper[k]);
      if (dmin[k] == 0) return MicroPlan{};
      for (std::uint32_t c = 0; c < counts[k]; ++c) bucket_of[at++] = static_cast<std::uint32_t>(k);
    }
  }
  // Slots, by degree descending, with FlexSP's pruning.
  const std::uint32_t d_max = *std::max_element(dmin.begin(), dmin.end());
  std::uint64_t c_max = 0;
  for (std::size_t k = 0; k < buckets; ++k) {
    if (dmin[k] == d_max) c_max += counts[k];
  }
  if (d_max * c_max > n) c_max = 1;  // the pruning rule would leave nothing; keep it valid
  std::vector<std::uint32_t> slot_degree;
  for (auto it = cost.degrees().rbegin(); it != cost.degrees().rend(); ++it) {
    const std::uint32_t d = *it;
    std::uint64_t slots = d >= d_max ? n / d : (n - std::min<std::uint64_t>(n, d_max * c_max)) / d;
    std::uint64_t eligible = 0;
    for (std::size_t k = 0; k < buckets; ++k) {
      if (dmin[k] <= d) eligible += counts[k];
    }
    slots = std::min(slots, eligible);
    slot_degree.insert(slot_degree.end(), slots, d);
  }
  const std::size_t P = slot_degree.size();
  if (P == 0) return MicroPlan{};

  Milp milp;
  std::vector<std::vector<int>> a(buckets, std::vector<int>(P, -1));
  std::vector<int> used(P);
  for (std::size_t p = 0; p < P; ++p) {
    for (std::size_t k = 0; k < buckets; ++k) {
      if (dmin[k] <= slot_degree[p]) a[k][p] = milp.add_variable(0, counts[k], 0.0, true);
    }
    used[p] = milp.add_variable(0, 1, 0.0, true);
  }
  const int makespan = milp.add_variable(bound, Milp::kInfinity, 1.0, false);
  for (std::size_t k = 0; k < buckets; ++k) {
    std::vector<std::pair<int, double>> row;
    for (std::size_t p = 0; p < P; ++p) {
      if (a[k][p] >= 0) row.emplace_back(a[k][p], 1.0);
    }
    milp.add_row(std::move(row), counts[k], counts[k]);
  }
  auto load_row = [&](std::size_t p) {
    std::vector<std::pair<int, double>> row;
    for (std::size_t k = 0; k < buckets; ++k) {
      if (a[k][p] >= 0) row.emplace_back(a[k][p], cost.seq_time(upper[k], slot_degree[p]));
    }
    return row;
  };
  std::vector<std::pair<int, double>> devices;
  for (std::size_t p = 0; p < P; ++p) {
    const std::uint32_t d = slot_degree[p];
    std::vector<std::pair<int, double>> mem, nonempty;
    for (std::size_t k = 0; k < buckets; ++k) {
      if (a[k][p] < 0) continue;
      mem.emplace_back(a[k][p], static_cast<double>(upper[k]));
      nonempty.emplace_back(a[k][p], 1.0);
    }
    mem.emplace_back(used[p], -static_cast<double>(cost.capacity()) * d);
    milp.add_row(std::move(mem), -Milp::kInfinity, 0.0);
    nonempty.emplace_back(used[p], -1.0);
    milp.add_row(std::move(nonempty), 0.0, Milp::kInfinity);
    auto time = load_row(p);
    time.emplace_back(used[p], cost.beta());
    time.emplace_back(makespan, -1.0);
    milp.add_row(std::move(time), -Milp::kInfinity, 0.0);
    devices.emplace_back(used[p], static_cast<double>(d));
    // Symmetry breaking between consecutive slots of one degree.
    if (p + 1 < P && slot_degree[p + 1] == d) {
      milp.add_row({{used[p], 1.0}, {used[p + 1], -1.0}}, 0.0, Milp::kInfinity);
      auto order = load_row(p);
      for (auto [col, coef] : load_row(p + 1)) order.emplace_back(col, -coef);
      milp.add_row(std::move(order), 0.0, Milp::kInfinity);
    }
  }
  milp.add_row(std::move(devices), n, n);

  // Warm start from the greedy plan: its groups to slots of their degree, by bucket load descending.
  std::vector<double> start;
  if (warm.feasible()) {
    start.assign(static_cast<std::size_t>(milp.num_variables()), 0.0);
    std::vector<std::uint32_t> position(lengths.size(), 0);
    for (std::size_t j = 0; j < seqs.size(); ++j) position[seqs[j]] = static_cast<std::uint32_t>(j);
    std::map<std::uint32_t, std::vector<std::pair<double, const Group*>>> by_degree;
    for (const auto& g : warm.groups) {
      double load = 0.0;
      for (auto i : g.sequences) load += cost.seq_time(upper[bucket_of[position[i]]], g.degree);
      by_degree[g.degree].emplace_back(load, &g);
    }
    double worst = bound;
    bool ok = true;
    for (auto& [d, list] : by_degree) {
      std::stable_sort(list.begin(), list.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      std::size_t p = 0;
      while (p < P && slot_degree[p] != d) ++p;
      for (const auto& [load, g] : list) {
        if (p >= P || slot_degree[p] != d) {
          ok = false;
          break;
        }
        start[static_cast<std::size_t>(used[p])] = 1.0;
        for (auto i : g->sequences) {
          const int col = a[bucket_of[position[i]]][p];
          if (col < 0) {
            ok = false;
            break;
          }
          start[static_cast<std::size_t>(col)] += 1.0;
        }
        worst = std::max(worst, load + cost.beta());
        ++p;
      }
    }
    start[static_cast<std::size_t>(makespan)] = worst;
    if (!ok) start.clear();
  }

  const auto result = milp.solve(opt.time_limit_s, opt.gap, start, static_cast<int>(opt.node_limit));
  if (!result.has_solution()) return MicroPlan{};

  // Deal real sequences to the slots' bucket counts.
  MicroPlan plan;
  std::vector<int> group_of_slot(P, -1);
  for (std::size_t p = 0; p < P; ++p) {
    if (result.values[static_cast<std::size_t>(used[p])] > 0.5) {
      group_of_slot[p] = static_cast<int>(plan.groups.size());
      plan.groups.push_back(Group{slot_degree[p], {}, 0, 0.0});
    }
  }
  std::vector<std::vector<std::uint32_t>> left(buckets, std::vector<std::uint32_t>(P, 0));
  for (std::size_t k = 0; k < buckets; ++k) {
    for (std::size_t p = 0; p < P; ++p) {
      if (a[k][p] >= 0) left[k][p] = static_cast<std::uint32_t>(std::lround(result.values[static_cast<std::size_t>(a[k][p])]));
    }
  }
  for (std::size_t j = 0; j < seqs.size(); ++j) {
    const auto k = bucket_of[j];
    int pick = -1;
    for (std::size_t p = 0; p < P; ++p) {
      if (left[k][p] == 0 || group_of_slot[p] < 0) continue;
      if (pick < 0 || plan.groups[group_of_slot[p]].time < plan.groups[group_of_slot[pick]].time) pick = static_cast<int>(p);
    }
    if (pick < 0) return MicroPlan{};
    --left[k][pick];
    auto& g = plan.groups[group_of_slot[pick]];
    g.sequences.push_back(seqs[j]);
    g.tokens += lengths[seqs[j]];
    g.time += cost.seq_time(lengths[seqs[j]], g.degree);
  }
  for (const auto& g : plan.groups) {
    if (g.sequences.empty() || !cost.fits(g.tokens, g.degree)) return MicroPlan{};
  }
  finalize(cost, plan, lengths);
  plan.by_milp = true;
  plan.solve = solve_status(result.status);
  return plan;
}

MicroPlan plan_micro_batch(const FlexSpCost& cost, const FlexSpOptions& opt, std::span<const std::uint32_t> seqs,
                           std::span<const std::uint64_t> lengths) {
  MicroPlan best = best_greedy(cost, seqs, lengths);
  const double bound = lower_bound(cost, seqs, lengths);
  if (best.feasible() && best.makespan <= bound * (1.0 + opt.gap)) return best;
  auto milp = solve_milp(cost, opt, seqs, lengths, best, bound);
  if (milp.makespan < best.makespan * (1.0 - 1e-9)) return milp;
  // The greedy plan (the MILP's warm start) stands: the MILP found nothing
  // better, or nothing usable.
  best.solve = milp.feasible() ? milp.solve : proto::SOLVE_FELL_BACK;
  return best;
}

}  // namespace

// ---------------------------------------------------------------- planning

Bytes flexsp_planning_limit(const PlanContext& sc, const FlexSpOptions& options) {
  return options.planning_memory_cap ? *options.planning_memory_cap : sc.memory_limit;
}

std::vector<PlannerRegistration> flexsp_registrations() {
  return {register_planner<FlexSpOptions>("flexsp", resolve_flexsp_options,
                                          [](FlexSpOptions options) { return std::make_unique<FlexSpPlanner>(options); })};
}

FlexSpPlan plan_flexsp(const PlanContext& sc, const FlexSpOptions& opt, std::span<const std::uint64_t> lengths) {
  const FlexSpCost cost(sc, opt);
  const std::uint32_t n = cost.gpus();
  if (n != 1 && n % 2 != 0) {
    throw InputError(fmt::format("{}: flexsp: needs an even number of GPUs (power-of-two SP groups), got {}", sc.source, n));
  }
  if (cost.capacity() == 0) {
    throw InputError(fmt::format("{}: flexsp: the ZeRO-3 model states ({}) leave no memory for activations under the "
                                 "limit {}; add GPUs or raise plan.memory_fraction (or plan.flexsp.planning_memory_cap)",
                                 sc.source, format_bytes(Bytes(cost.memory().state_bytes)),
                                 format_bytes(flexsp_planning_limit(sc, opt))));
  }
  std::vector<std::uint32_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return lengths[x] > lengths[y]; });
  std::uint64_t total = 0;
  for (auto s : lengths) total += s;
  const std::uint64_t cluster_tokens = cost.capacity() * n;
  if (cost.degrees().empty()) {
    throw InputError(fmt::format(
        "{}: flexsp: no sequence-parallel degree from 2 to {} suits the model (Ulysses gives each GPU of a group "
        "whole attention heads: {} heads and {} K/V heads divide by none of them{}); use a model whose K/V heads "
        "divide by 2, or one GPU",
        sc.source, n, sc.model.attention_heads, sc.model.kv_heads,
        sc.flexsp_preset != nullptr ? " that the FlexSP preset's all-to-all table lists" : ""));
  }
  for (auto i : order) {
    if (cost.min_degree(lengths[i]) == 0) {
      throw InputError(fmt::format(
          "{}: flexsp: a sequence of {} tokens does not fit: the largest SP group holds {} tokens ({} per GPU); lower "
          "workload.max_length, add GPUs or raise plan.memory_fraction",
          sc.source, lengths[i], cost.capacity() * cost.degrees().back(), cost.capacity()));
    }
  }
  FlexSpPlan out;
  out.token_capacity = cost.capacity();
  if (lengths.empty()) return out;
  std::vector<std::uint64_t> sorted;
  for (auto i : order) sorted.push_back(lengths[i]);

  // Sequence Blaster: compare micro-batch counts on the greedy plans.
  // Each micro-batch also runs its ZeRO-3 collectives over all N ranks, layer by
  // layer (zero3_layers.h): they hide behind compute but for the first gather and
  // the last reduce-scatter, unless they outlast it; fewer micro-batches save them.
  // Gathers are on demand (every one exposed) when the prefetch trace does not
  // survive the groups changing (zero3_layers.h).
  const Zero3LayerSeconds zero = zero3_layer_seconds(sc, zero3_layer_bytes(sc.model, opt.zero3));
  const std::uint32_t depth = effective_prefetch_depth(opt.zero3, true);
  const auto m0 = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (total + cluster_tokens - 1) / cluster_tokens));
  std::vector<std::uint32_t> best_split;
  double best_time = kInf;
  std::uint32_t tried = 0;
  // A greedy plan forms at least N / d groups for the largest degree d dividing
  // N, each with a sequence; a split into m chunks has one of at most
  // n / m sequences, so no count past n / (those groups) has a greedy plan.
  std::size_t fewest_groups = 0;
  for (auto d : cost.degrees()) {
    if (n % d == 0) fewest_groups = n / d;
  }
  const std::size_t m_last = fewest_groups == 0 ? 0 : lengths.size() / fewest_groups;
  for (std::uint32_t m = m0; m <= m_last && tried <= opt.extra; ++m) {
    const auto split = split_consecutive(sorted, m);
    double step = 0.0;
    std::size_t at = 0;
    for (auto count : split) {
      const std::span<const std::uint32_t> seqs(order.data() + at, count);
      at += count;
      const auto p = best_greedy(cost, seqs, lengths);
      step += zero3_micro_batch_seconds(zero, sc.model.layers, p.makespan, depth);
      if (!p.feasible()) break;
    }
    if (step == kInf) continue;  // no greedy plan at this count: try more micro-batches
    ++tried;
    if (step < best_time) {
      best_time = step;
      best_split = split;
    }
  }
  if (best_split.empty()) {
    throw InputError(fmt::format("{}: flexsp: found no micro-batch split whose SP groups fit in memory ({} tokens per "
                                 "GPU); lower workload.max_length or add GPUs",
                                 sc.source, cost.capacity()));
  }

  std::size_t at = 0;
  progress::ProgressLine line("planning flexsp", progress::Options{.check_every = 1});
  for (auto count : best_split) {
    line.update([&] {
      return fmt::format("micro-batch {} of {} (one MILP each)", out.micro_batches.size() + 1, best_split.size());
    });
    const std::span<const std::uint32_t> seqs(order.data() + at, count);
    at += count;
    auto mp = plan_micro_batch(cost, opt, seqs, lengths);
    std::stable_sort(mp.groups.begin(), mp.groups.end(), [](const Group& x, const Group& y) { return x.degree > y.degree; });
    FlexSpMicroBatch mb;
    std::uint32_t rank = 0;
    for (auto& g : mp.groups) {
      mb.groups.push_back(FlexSpGroup{g.degree, rank, std::move(g.sequences), g.time});
      rank += g.degree;
    }
    mb.makespan_s = mp.makespan;
    mb.solved_by_milp = mp.by_milp;
    mb.solve = mp.solve;
    logging::debug("plan.flexsp", "micro-batch {}: {} sequences, {} SP groups, makespan {:.4f} s, MILP {}{}",
                   out.micro_batches.size(), count, mb.groups.size(), mp.makespan, solve_status_name(mp.solve),
                   mp.by_milp ? " (its plan used)" : "");
    out.step_time_s += mp.makespan;
    out.micro_batches.push_back(std::move(mb));
  }
  return out;
}

}  // namespace eppsim
