#include "sim/trace_diff.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "base/errors.h"
#include "schedule/trace_events.h"
#include "schedule/trace_file.h"
#include "traces/op_event_join.h"
#include "traces/trace_stats.h"

namespace eppsim {
namespace {

double to_s(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

std::optional<double> relative(double base, double changed) {
  if (base > 0.0) return (changed - base) / base;
  return std::nullopt;
}

struct Totals {
  std::string label;
  std::uint32_t base_ops = 0, new_ops = 0;
  std::int64_t base_ns = 0, new_ns = 0;
};

// An op whose duration grew, for the top list.
struct OpGrowth {
  std::int64_t change_ns = 0;
  OpEventFields base, changed;
};

}  // namespace

proto::TraceDiff diff_traces(const TraceParts& base_parts, const TraceParts& changed_parts, std::size_t top) {
  const proto::Trace& base = base_parts.header();
  const proto::Trace& changed = changed_parts.header();
  const std::string& base_name = base_parts.name();
  const std::string& changed_name = changed_parts.name();
  for (const auto* parts : {&base_parts, &changed_parts}) {
    if (parts->header().step_time_ns() <= 0) {
      throw InputError(fmt::format("{}: step_time_ns: must be > 0, got {}", parts->name(), parts->header().step_time_ns()));
    }
  }
  require_same_ranks(base, base_name, changed, changed_name, "diff");

  // Per kind, and per (rank, kind), as each trace is tallied.
  std::map<std::pair<int, int>, Totals> kinds;
  std::map<std::pair<std::uint32_t, std::pair<int, int>>, Totals> rank_kinds;
  const auto add = [&](const OpEventFields& e, bool is_base) {
    if (e.kind == proto::MEMORY) return;
    const std::int64_t duration = e.end_ns - e.start_ns;
    for (Totals* t : {&kinds[op_kind_order(e)], &rank_kinds[{e.rank, op_kind_order(e)}]}) {
      if (t->label.empty()) t->label = op_kind_label(e);
      (is_base ? t->base_ops : t->new_ops) += 1;
      (is_base ? t->base_ns : t->new_ns) += duration;
    }
  };
  const TraceTally base_tally = tally_trace(base_parts, [&](const OpEventFields& e) { add(e, true); });
  const TraceTally new_tally = tally_trace(changed_parts, [&](const OpEventFields& e) { add(e, false); });

  proto::TraceDiff d;
  d.set_base_file(base_name);
  d.set_new_file(changed_name);
  d.set_base_engine(base.engine());
  d.set_new_engine(changed.engine());
  d.set_base_ranks(base.num_ranks());
  d.set_new_ranks(changed.num_ranks());

  // Per op, matched by (rank, op): the ops that grew most, kept while the
  // traces are of one Schedule (the top `top` of them, ties by op).
  std::vector<OpGrowth> grown;
  const auto by_growth = [](const OpGrowth& x, const OpGrowth& y) {
    return std::tie(y.change_ns, x.base.rank, x.base.op) < std::tie(x.change_ns, y.base.rank, y.base.op);
  };
  const auto keep_top = [&] {
    std::sort(grown.begin(), grown.end(), by_growth);
    if (grown.size() > top) grown.resize(top);
  };
  std::string difference;
  if (base.num_ranks() != changed.num_ranks()) {
    difference = fmt::format("num_ranks {} vs {}", base.num_ranks(), changed.num_ranks());
  } else {
    difference = join_op_events(
        {base_parts, base_tally, "the base"}, {changed_parts, new_tally, "the new trace"},
        [&](const OpEventFields& b, const OpEventFields& n) {
          const std::int64_t change = (n.end_ns - n.start_ns) - (b.end_ns - b.start_ns);
          if (change <= 0 || b.kind == proto::MEMORY || top == 0) return;
          grown.push_back({change, b, n});
          if (grown.size() >= 2 * top + 4096) keep_top();
        });
  }
  keep_top();
  d.set_same_schedule(difference.empty());
  d.set_schedule_difference(difference);
  d.set_base_step_time_s(to_s(base.step_time_ns()));
  d.set_new_step_time_s(to_s(changed.step_time_ns()));
  d.set_step_time_change_s(d.new_step_time_s() - d.base_step_time_s());
  if (const auto r = relative(d.base_step_time_s(), d.new_step_time_s())) d.set_step_time_relative_change(*r);

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
  const auto& base_busy = base_tally.busy_ns;
  const auto& new_busy = new_tally.busy_ns;
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

  if (d.same_schedule()) {
    for (const OpGrowth& g : grown) {
      proto::OpChange& c = *d.add_top_op_regressions();
      c.set_rank(g.base.rank);
      c.set_op(g.base.op);
      c.set_kind(op_kind_label(g.base));
      c.set_stage(g.base.stage);
      c.set_chunk(g.base.chunk);
      c.set_base_duration_s(to_s(g.base.end_ns - g.base.start_ns));
      c.set_new_duration_s(to_s(g.changed.end_ns - g.changed.start_ns));
      c.set_change_s(to_s(g.change_ns));
      c.set_end_change_s(
          to_s((g.changed.end_ns - new_tally.earliest_start_ns) - (g.base.end_ns - base_tally.earliest_start_ns)));
    }
  }
  return d;
}

proto::TraceDiff diff_traces(const proto::Trace& base, const proto::Trace& changed, std::string_view base_name,
                             std::string_view changed_name, std::size_t top) {
  return diff_traces(TraceInMemory(base, std::string(base_name)), TraceInMemory(changed, std::string(changed_name)),
                     top);
}

proto::TraceDiff diff_trace_files(const std::filesystem::path& base, const std::filesystem::path& changed,
                                  std::size_t top) {
  // Each read a part at a time: what is held is an interval per event (the
  // tally) and the join's batch (traces/op_event_join.h).
  const TraceFile a(base, kTraceTallyBytesPerTraceByte), b(changed, kTraceTallyBytesPerTraceByte);
  require_complete_trace(a.header(), base, "diff");
  require_complete_trace(b.header(), changed, "diff");
  return diff_traces(a, b, top);
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
