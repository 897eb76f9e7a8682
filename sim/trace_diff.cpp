#include "sim/trace_diff.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "base/errors.h"
#include "schedule/trace_events.h"
#include "schedule/trace_file.h"
#include "traces/trace_stats.h"

namespace eppsim {
namespace {

double to_s(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

std::optional<double> relative(double base, double changed) {
  if (base > 0.0) return (changed - base) / base;
  return std::nullopt;
}

// Why two traces are not of the same Schedule; empty when they are.
std::string schedule_difference(const proto::Trace& base, const proto::Trace& changed,
                                const std::map<OpKey, OpEventRef>& base_events,
                                const std::map<OpKey, OpEventRef>& changed_events) {
  if (base.num_ranks() != changed.num_ranks())
    return fmt::format("num_ranks {} vs {}", base.num_ranks(), changed.num_ranks());
  auto b = base_events.begin();
  auto c = changed_events.begin();
  for (; b != base_events.end() && c != changed_events.end(); ++b, ++c) {
    if (b->first != c->first) {
      const bool base_first = b->first < c->first;
      const OpKey key = base_first ? b->first : c->first;
      return fmt::format("rank {} op {} is in {} only", key.first, key.second, base_first ? "the base" : "the new trace");
    }
    const std::string field = event_difference(b->second, c->second);
    if (!field.empty()) return fmt::format("rank {} op {}: {}", b->first.first, b->first.second, field);
  }
  if (b != base_events.end()) return fmt::format("rank {} op {} is in the base only", b->first.first, b->first.second);
  if (c != changed_events.end())
    return fmt::format("rank {} op {} is in the new trace only", c->first.first, c->first.second);
  return {};
}

struct Totals {
  std::string label;
  std::uint32_t base_ops = 0, new_ops = 0;
  std::int64_t base_ns = 0, new_ns = 0;
};

}  // namespace

proto::TraceDiff diff_traces(const proto::Trace& base, const proto::Trace& changed, std::string_view base_name,
                             std::string_view changed_name, std::size_t top) {
  for (const auto& [trace, name] : {std::pair{&base, base_name}, std::pair{&changed, changed_name}}) {
    if (trace->step_time_ns() <= 0)
      throw InputError(fmt::format("{}: step_time_ns: must be > 0, got {}", name, trace->step_time_ns()));
  }
  require_same_ranks(base, base_name, changed, changed_name, "diff");
  const auto base_events = events_by_op(base, base_name);
  const auto changed_events = events_by_op(changed, changed_name);

  proto::TraceDiff d;
  d.set_base_file(std::string(base_name));
  d.set_new_file(std::string(changed_name));
  d.set_base_engine(base.engine());
  d.set_new_engine(changed.engine());
  d.set_base_ranks(base.num_ranks());
  d.set_new_ranks(changed.num_ranks());
  const std::string difference = schedule_difference(base, changed, base_events, changed_events);
  d.set_same_schedule(difference.empty());
  d.set_schedule_difference(difference);
  d.set_base_step_time_s(to_s(base.step_time_ns()));
  d.set_new_step_time_s(to_s(changed.step_time_ns()));
  d.set_step_time_change_s(d.new_step_time_s() - d.base_step_time_s());
  if (const auto r = relative(d.base_step_time_s(), d.new_step_time_s())) d.set_step_time_relative_change(*r);

  // Per kind, and per (rank, kind).
  std::map<std::pair<int, int>, Totals> kinds;
  std::map<std::pair<std::uint32_t, std::pair<int, int>>, Totals> rank_kinds;
  const auto add = [&](OpEventRef e, bool is_base) {
    if (e.kind() == proto::MEMORY) return;
    const std::int64_t duration = e.end_ns() - e.start_ns();
    for (Totals* t : {&kinds[op_kind_order(e)], &rank_kinds[{e.rank(), op_kind_order(e)}]}) {
      t->label = op_kind_label(e);
      (is_base ? t->base_ops : t->new_ops) += 1;
      (is_base ? t->base_ns : t->new_ns) += duration;
    }
  };
  for (const OpEventRef e : events_of(base)) add(e, true);
  for (const OpEventRef e : events_of(changed)) add(e, false);
  for (const auto& [order, t] : kinds) {
    auto* k = d.add_kinds();
    k->set_kind(t.label);
    k->set_base_ops(t.base_ops);
    k->set_new_ops(t.new_ops);
    k->set_base_s(to_s(t.base_ns));
    k->set_new_s(to_s(t.new_ns));
    k->set_change_s(to_s(t.new_ns - t.base_ns));
    if (const auto r = relative(k->base_s(), k->new_s())) k->set_relative_change(*r);
  }
  std::vector<proto::RankKindChange> grew;
  for (const auto& [key, t] : rank_kinds) {
    if (t.new_ns <= t.base_ns) continue;
    proto::RankKindChange c;
    c.set_rank(key.first);
    c.set_kind(t.label);
    c.set_base_s(to_s(t.base_ns));
    c.set_new_s(to_s(t.new_ns));
    c.set_change_s(to_s(t.new_ns - t.base_ns));
    grew.push_back(std::move(c));
  }
  // Largest first; ties by rank and kind order (the map's), so the output is deterministic.
  std::stable_sort(grew.begin(), grew.end(), [](const auto& a, const auto& b) { return a.change_s() > b.change_s(); });
  for (std::size_t i = 0; i < std::min(top, grew.size()); ++i) *d.add_top_rank_kind_regressions() = grew[i];

  // Per rank.
  const auto base_busy = busy_ns_per_rank(base), new_busy = busy_ns_per_rank(changed);
  for (std::uint32_t r = 0; r < std::max(base.num_ranks(), changed.num_ranks()); ++r) {
    auto* rank = d.add_per_rank();
    rank->set_rank(r);
    const std::int64_t b = r < base_busy.size() ? base_busy[r] : 0, n = r < new_busy.size() ? new_busy[r] : 0;
    const std::int64_t b_idle = r < base.num_ranks() ? std::max<std::int64_t>(0, base.step_time_ns() - b) : 0;
    const std::int64_t n_idle = r < changed.num_ranks() ? std::max<std::int64_t>(0, changed.step_time_ns() - n) : 0;
    rank->set_base_busy_s(to_s(b));
    rank->set_new_busy_s(to_s(n));
    rank->set_base_idle_s(to_s(b_idle));
    rank->set_new_idle_s(to_s(n_idle));
    rank->set_busy_change_s(to_s(n - b));
    rank->set_idle_change_s(to_s(n_idle - b_idle));
  }

  // Per op, when the Schedule is the same.
  if (d.same_schedule()) {
    const std::int64_t base_origin = earliest_start_ns(base), new_origin = earliest_start_ns(changed);
    std::vector<proto::OpChange> ops;
    for (const auto& [key, b] : base_events) {
      const OpEventRef n = changed_events.at(key);
      const std::int64_t change = (n.end_ns() - n.start_ns()) - (b.end_ns() - b.start_ns());
      if (change <= 0 || b.kind() == proto::MEMORY) continue;
      proto::OpChange c;
      c.set_rank(key.first);
      c.set_op(key.second);
      c.set_kind(op_kind_label(b));
      c.set_stage(b.stage());
      c.set_chunk(b.chunk());
      c.set_base_duration_s(to_s(b.end_ns() - b.start_ns()));
      c.set_new_duration_s(to_s(n.end_ns() - n.start_ns()));
      c.set_change_s(to_s(change));
      c.set_end_change_s(to_s((n.end_ns() - new_origin) - (b.end_ns() - base_origin)));
      ops.push_back(std::move(c));
    }
    std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.change_s() > b.change_s(); });
    for (std::size_t i = 0; i < std::min(top, ops.size()); ++i) *d.add_top_op_regressions() = ops[i];
  }
  return d;
}

proto::TraceDiff diff_trace_files(const std::filesystem::path& base, const std::filesystem::path& changed,
                                  std::size_t top) {
  const proto::Trace a = read_trace(base), b = read_trace(changed);
  require_complete_trace(a, base, "diff");
  require_complete_trace(b, changed, "diff");
  return diff_traces(a, b, base.string(), changed.string(), top);
}

std::string diff_summary(const proto::TraceDiff& d) {
  const auto percent = [](const std::optional<double>& r) {
    return r ? fmt::format("{:+.2f}%", 100.0 * *r) : std::string("new");
  };
  std::string out = fmt::format("  step time    {:.6f} s -> {:.6f} s ({})\n", d.base_step_time_s(), d.new_step_time_s(),
                                percent(d.has_step_time_relative_change()
                                            ? std::optional<double>(d.step_time_relative_change())
                                            : std::nullopt));
  out += d.same_schedule() ? "  schedule     the same (ops matched by rank and index)\n"
                           : fmt::format("  schedule     different: {}\n", d.schedule_difference());
  for (const auto& k : d.kinds()) {
    out += fmt::format("  {:<26} {:>12.6f} s -> {:>12.6f} s  {:+.6f} s ({})\n", k.kind(), k.base_s(), k.new_s(),
                       k.change_s(),
                       percent(k.has_relative_change() ? std::optional<double>(k.relative_change()) : std::nullopt));
  }
  // The first of each top list; diff.json has the rest.
  if (!d.top_rank_kind_regressions().empty()) {
    const auto& c = d.top_rank_kind_regressions(0);
    out += fmt::format("  grew most    rank {} {}: {:+.6f} s\n", c.rank(), c.kind(), c.change_s());
  }
  if (!d.top_op_regressions().empty()) {
    const auto& c = d.top_op_regressions(0);
    out += fmt::format("  op grew most rank {} op {} ({}, stage {}, chunk {}): {:.6f} s -> {:.6f} s\n", c.rank(),
                       c.op(), c.kind(), c.stage(), c.chunk(), c.base_duration_s(), c.new_duration_s());
  }
  return out;
}

}  // namespace eppsim
